#pragma once
// How configuration errors quote what a user wrote in a TOML file (campaigns, problems,
// skills), so that every message reads the same. Header-only; needs toml++.
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <toml++/toml.h>

#include "events/status.h"

namespace arc {

// Parses TOML text; a syntax error names the file, line and column.
inline Result<toml::table> parse_toml(std::string_view text, const std::string& shown) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, shown);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << shown << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": TOML syntax error: " << e.description();
    return Status::invalid_argument(os.str());
  }
#else
  toml::parse_result parsed = toml::parse(text, shown);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    std::ostringstream os;
    os << shown << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": TOML syntax error: " << e.description();
    return Status::invalid_argument(os.str());
  }
  return std::move(parsed).table();
#endif
}

inline std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// What a node holds, as a user wrote it: "abc" (quoted), 12, 1.5, true, or its kind.
inline std::string toml_describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return in_quotes(n.as_string()->get());
    case toml::node_type::integer: return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: {
      std::ostringstream os;
      os << n.as_floating_point()->get();
      return os.str();
    }
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

}  // namespace arc
