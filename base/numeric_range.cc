#include "base/numeric_range.h"

#include <charconv>
#include <cmath>

#include "base/string_literal.h"

namespace arc {

bool IntegerRange::contains(int64_t v) const {
  if (v == 0 && zero_means != nullptr) return true;
  return v >= lo && (v < 0 || static_cast<uint64_t>(v) <= hi);
}

bool IntegerRange::contains(uint64_t v) const {
  if (v == 0 && zero_means != nullptr) return true;
  return (lo <= 0 || v >= static_cast<uint64_t>(lo)) && v <= hi;
}

bool IntegerRange::contains(double v) const {
  // Beyond +-2^63 no int64 or uint64 range can hold it; inside, the conversion is exact for a
  // whole number.
  if (!(v == std::floor(v) && std::fabs(v) < 9.2e18)) return false;
  return v < 0 ? contains(static_cast<int64_t>(v)) : contains(static_cast<uint64_t>(v));
}

std::string IntegerRange::text() const {
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return zero_means == nullptr ? range : "0 (" + std::string(zero_means) + ") or " + range;
}

bool NumberRange::contains(double v) const {
  if (!std::isfinite(v)) return false;
  const bool above = lo_open ? v > lo : v >= lo;
  const bool below = hi_open ? v < hi : v <= hi;
  return above && below;
}

std::string NumberRange::text() const {
  return std::string(unit == nullptr ? "a number" : "a number of " + std::string(unit)) + " in " +
         (lo_open ? "(" : "[") + shortest_number_text(lo) + ", " + shortest_number_text(hi) +
         (hi_open ? ")" : "]");
}

std::string shortest_number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

Result<uint64_t> parse_flag_integer(std::string_view text, const IntegerRange& r) {
  auto refuse = [&text, &r]() {
    return Status::invalid_argument("expected " + r.text() + ", got " + string_literal(text));
  };
  // from_chars alone would take a leading '-' for an unsigned type as an error but accepts
  // nothing else odd; digits only keeps "+1", " 1" and "0x1" out too.
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return refuse();
  }
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !r.contains(v)) return refuse();
  return v;
}

}  // namespace arc
