#pragma once
// The documented range of a numeric setting (a campaign or problem field, a command-line flag)
// and its one wording, in errors and in help text: "an integer in [1, 1000000]", "0 (no limit)
// or an integer in [64, 16777216]", "a number of seconds in [0.1, 86400]", "a number in [0, 1)".
// TOML fields are read against a range by FieldErrors (base/toml_text.h), flags by
// parse_flag_integer below; nothing else compares a setting with its bounds.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace arc {

// Whole numbers from lo to hi, both included. `lo` may be negative (TOML integers are signed);
// `hi` may reach 2^64-1 (seeds).
struct IntegerRange {
  int64_t lo = 0;
  uint64_t hi = 0;
  // Set: 0 is allowed too, below lo, and means this ("no limit", "all", "never").
  const char* zero_means = nullptr;

  bool contains(int64_t v) const;
  bool contains(uint64_t v) const;
  bool contains(double v) const;  // a whole number within the range (an evaluated expression)
  std::string text() const;
};

// Finite real numbers from lo to hi; either end may be open.
struct NumberRange {
  double lo = 0;
  double hi = 0;
  bool lo_open = false;
  bool hi_open = false;
  const char* unit = nullptr;  // "seconds": "a number of seconds in [...]"

  bool contains(double v) const;  // false for NaN and the infinities
  std::string text() const;
};

// The shortest decimal text that reads back as `v` ("0.1", "1e-09", "86400", "inf").
std::string shortest_number_text(double v);

// A flag's value as an integer in `r`: decimal digits only, no sign, space, base prefix or
// trailing text, no overflow. The error (invalid argument) reads
//   expected <r.text()>, got "<text>"
// for the caller to prefix with the flag's name.
Result<uint64_t> parse_flag_integer(std::string_view text, const IntegerRange& r);

}  // namespace arc
