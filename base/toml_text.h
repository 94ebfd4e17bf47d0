#pragma once
// How configuration errors quote what a user wrote in a TOML file (campaigns, problems,
// skills), so that every message reads the same. Header-only; needs toml++.
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <toml++/toml.h>

#include "base/numeric_range.h"
#include "base/status.h"

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

// Defined below: a node's kind with what it holds.
inline std::string toml_type_name(const toml::node& n);

// The first error found in a configuration file, worded
//   <file>: field '<field>': expected <what>, got <what was there>
// Readers of campaigns, problems and skills derive from it; later errors are dropped.
class FieldErrors {
 public:
  explicit FieldErrors(std::string shown) : shown_(std::move(shown)) {}
  bool failed() const { return !error_.is_ok(); }
  const Status& status() const { return error_; }
  // Always false, so that a check can `return fail(...)`.
  bool fail(const std::string& field, const std::string& expected, const std::string& got) {
    return fail_raw(field, "expected " + expected + ", got " + got);
  }
  bool fail_raw(const std::string& field, const std::string& message) {
    if (!failed()) {
      error_ = Status::invalid_argument(shown_ + ": field '" + field + "': " + message);
    }
    return false;
  }

  // Every numeric field of a configuration file is read by one of these two, against its
  // documented range (base/numeric_range.h): the value is stored in `out` only when it is of
  // the right type and within `range`; otherwise the error says "expected <range>, got ...".
  // An integer field: a TOML integer.
  bool integer_in(const toml::node& n, const std::string& field, const IntegerRange& range,
                  int64_t& out) {
    if (!n.is_integer()) return fail(field, range.text(), toml_type_name(n));
    const int64_t v = n.as_integer()->get();
    if (!range.contains(v)) return fail(field, range.text(), std::to_string(v));
    out = v;
    return true;
  }
  // A number field: a TOML float or integer, finite.
  bool number_in(const toml::node& n, const std::string& field, const NumberRange& range,
                 double& out) {
    double v = 0;
    if (n.is_integer()) {
      v = static_cast<double>(n.as_integer()->get());
    } else if (n.is_floating_point()) {
      v = n.as_floating_point()->get();
    } else {
      return fail(field, range.text(), toml_type_name(n));
    }
    if (!range.contains(v)) return fail(field, range.text(), shortest_number_text(v));
    out = v;
    return true;
  }

 private:
  std::string shown_;
  Status error_;
};

// What a node holds, as a user wrote it: "abc" (quoted), 12, 1.5, true, or its kind.
inline std::string toml_describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return in_quotes(n.as_string()->get());
    case toml::node_type::integer:
      return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: {
      std::ostringstream os;
      os << n.as_floating_point()->get();
      return os.str();
    }
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

// A node's kind with what it holds, for "got ..." in errors: a string ("abc"), an integer (12),
// a float (1.5), a boolean, an array, a table, a date/time.
inline std::string toml_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string (" + toml_describe(n) + ")";
    case toml::node_type::integer:
      return "an integer (" + toml_describe(n) + ")";
    case toml::node_type::floating_point:
      return "a float (" + toml_describe(n) + ")";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return toml_describe(n);
  }
}

}  // namespace arc
