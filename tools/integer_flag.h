#pragma once
// Numeric flags of the command-line tools (arcd, arc-replay, arc-bench), each read against its
// documented range (base/numeric_range.h) by parse_flag_integer: "-1", "18446744073709551616",
// "12abc" and "" are refused with
//   --seed: expected an integer in [0, 18446744073709551615], got "-1"
// as a CLI11 parse error, which the tools turn into exit 2 before anything is run or written.
// The range is appended to the flag's help text.
#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/numeric_range.h"

namespace arc::tools {

// The integer a flag variable holds: T, or T of std::optional<T> (a flag that overrides).
template <class T>
struct FlagInteger {
  using type = T;  // NOLINT(readability-identifier-naming): the standard trait's member name
};
template <class T>
struct FlagInteger<std::optional<T>> {
  using type = T;  // NOLINT(readability-identifier-naming): the standard trait's member name
};

// `out`: an unsigned integer, or a std::optional of one, that holds every value of `range`.
// `name` is the flag as CLI11 spells it ("--seed"; "-j,--jobs" is named by its last part).
template <class T>
CLI::Option* add_integer_flag(CLI::App* app, const std::string& name, T& out,
                              const IntegerRange& range, const std::string& help) {
  using Integer = typename FlagInteger<T>::type;
  static_assert(std::is_unsigned_v<Integer>, "an integer flag is unsigned");
  assert(range.lo >= 0 && range.hi <= std::numeric_limits<Integer>::max());
  const std::string shown = name.substr(name.rfind(',') + 1);
  return app->add_option_function<std::string>(
      name,
      [shown, &out, range](const std::string& text) {
        auto v = parse_flag_integer(text, range);
        if (!v) throw CLI::ValidationError(shown, v.status().message());
        out = static_cast<Integer>(*v);
      },
      help + "; " + range.text());
}

// A comma-separated list of integers, each within `range`; replaces `out` when given.
inline CLI::Option* add_integer_list_flag(CLI::App* app, const std::string& name,
                                          std::vector<uint32_t>& out, const IntegerRange& range,
                                          const std::string& help) {
  return app
      ->add_option_function<std::vector<std::string>>(
          name,
          [name, &out, range](const std::vector<std::string>& texts) {
            std::vector<uint32_t> values;
            for (const auto& text : texts) {
              auto v = parse_flag_integer(text, range);
              if (!v) throw CLI::ValidationError(name, v.status().message());
              values.push_back(static_cast<uint32_t>(*v));
            }
            out = std::move(values);
          },
          help + "; each " + range.text())
      ->delimiter(',');
}

}  // namespace arc::tools
