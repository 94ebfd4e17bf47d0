// Loading and validating problem.toml (format: docs/problem-format.md), and the cost-model
// expression evaluator. Every error a user can cause names the file, the field, what was
// expected and what was found; nothing here throws.
#include "eval/problem.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <toml++/toml.h>

#include "events/toml_text.h"

#include "storage/sha256.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Expressions: recursive descent over
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := number | axis name | '(' expr ')'

constexpr int kMaxExpressionDepth = 200;  // bounds the recursion on "((((..."

struct Token {
  enum class Kind { kEnd, kNumber, kName, kOp } kind = Kind::kEnd;
  std::string text;
  double number = 0;
  size_t pos = 0;  // 1-based column, for messages
};

class ExpressionParser {
 public:
  ExpressionParser(const std::string& text, const std::map<std::string, int64_t>& axes)
      : text_(text), axes_(axes) {}

  Result<double> run() {
    advance();
    double v = expr(0);
    if (error_.empty() && tok_.kind != Token::Kind::kEnd) {
      fail("unexpected " + describe(tok_));
    }
    if (error_.empty() && !std::isfinite(v)) fail("the value is not finite");
    if (!error_.empty()) {
      return Status::invalid_argument("expression \"" + text_ + "\": " + error_);
    }
    return v;
  }

 private:
  static std::string describe(const Token& t) {
    if (t.kind == Token::Kind::kEnd) return "end of expression";
    return "'" + t.text + "' at position " + std::to_string(t.pos);
  }

  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  void advance() {
    if (!error_.empty()) {
      tok_ = Token{};
      return;
    }
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    Token t;
    t.pos = at_ + 1;
    if (at_ >= text_.size()) {
      tok_ = t;
      return;
    }
    const char c = text_[at_];
    auto is_digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    if (is_digit(c) || (c == '.' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1]))) {
      size_t end = at_;
      while (end < text_.size() && is_digit(text_[end])) ++end;
      if (end < text_.size() && text_[end] == '.') {
        ++end;
        while (end < text_.size() && is_digit(text_[end])) ++end;
      }
      if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
        size_t e = end + 1;
        if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
        if (e < text_.size() && is_digit(text_[e])) {
          while (e < text_.size() && is_digit(text_[e])) ++e;
          end = e;
        }
      }
      t.kind = Token::Kind::kNumber;
      t.text = text_.substr(at_, end - at_);
      auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.number);
      if (ec == std::errc::result_out_of_range) {
        fail("number '" + t.text + "' at position " + std::to_string(t.pos) + " is out of range");
      } else if (ec != std::errc() || p != t.text.data() + t.text.size()) {
        fail("bad number '" + t.text + "' at position " + std::to_string(t.pos));
      }
      at_ = end;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = at_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        ++end;
      }
      t.kind = Token::Kind::kName;
      t.text = text_.substr(at_, end - at_);
      at_ = end;
    } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '(' || c == ')') {
      t.kind = Token::Kind::kOp;
      t.text = std::string(1, c);
      ++at_;
    } else {
      fail("unexpected character '" + std::string(1, c) + "' at position " + std::to_string(t.pos) +
           " (expected numbers, axis names, + - * / and parentheses)");
      t = Token{};
    }
    tok_ = t;
  }

  bool is_op(char op) const {
    return tok_.kind == Token::Kind::kOp && tok_.text.size() == 1 && tok_.text[0] == op;
  }

  double expr(int depth) {
    double v = term(depth);
    while (error_.empty() && (is_op('+') || is_op('-'))) {
      const bool plus = is_op('+');
      advance();
      const double r = term(depth);
      v = plus ? v + r : v - r;
    }
    return v;
  }

  double term(int depth) {
    double v = unary(depth);
    while (error_.empty() && (is_op('*') || is_op('/'))) {
      const bool times = is_op('*');
      const Token op = tok_;
      advance();
      const double r = unary(depth);
      if (!error_.empty()) return 0;
      if (!times && r == 0) {
        fail("division by zero at position " + std::to_string(op.pos));
        return 0;
      }
      v = times ? v * r : v / r;
    }
    return v;
  }

  double unary(int depth) {
    if (depth > kMaxExpressionDepth) {
      fail("nested deeper than " + std::to_string(kMaxExpressionDepth) + " levels");
      return 0;
    }
    if (is_op('-') || is_op('+')) {
      const bool minus = is_op('-');
      advance();
      const double v = unary(depth + 1);
      return minus ? -v : v;
    }
    return primary(depth);
  }

  double primary(int depth) {
    if (!error_.empty()) return 0;
    if (tok_.kind == Token::Kind::kNumber) {
      const double v = tok_.number;
      advance();
      return v;
    }
    if (tok_.kind == Token::Kind::kName) {
      auto it = axes_.find(tok_.text);
      if (it == axes_.end()) {
        std::string names;
        for (const auto& [n, _] : axes_) names += (names.empty() ? "" : ", ") + n;
        fail("unknown axis '" + tok_.text + "' at position " + std::to_string(tok_.pos) +
             " (axes: " + (names.empty() ? "none" : names) + ")");
        return 0;
      }
      advance();
      return static_cast<double>(it->second);
    }
    if (is_op('(')) {
      const Token open = tok_;
      advance();
      const double v = expr(depth + 1);
      if (!error_.empty()) return 0;
      if (!is_op(')')) {
        fail("expected ')' to close '(' at position " + std::to_string(open.pos) + ", got " +
             describe(tok_));
        return 0;
      }
      advance();
      return v;
    }
    fail("expected a number, an axis name or '(', got " + describe(tok_));
    return 0;
  }

  const std::string& text_;
  const std::map<std::string, int64_t>& axes_;
  size_t at_ = 0;
  Token tok_;
  std::string error_;
};

// ---------------------------------------------------------------------------------------------
// problem.toml

bool is_c_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
    if (!ok || c > 127) return false;
  }
  return true;
}

// Names of problems, workloads and families appear in variant keys, gates and file names.
bool is_plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!(c < 128 && (std::isalnum(c) || c == '_' || c == '-' || c == '.'))) return false;
  }
  return true;
}

// A knob value becomes the right-hand side of -DNAME=VALUE.
bool is_define_value(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& items, bool quote) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + (quote ? in_quotes(s) : s);
  return out.empty() ? "none" : out;
}


const std::vector<std::string> kCudaDtypes = {"f32",      "f64", "f16", "bf16", "fp8_e4m3",
                                              "fp8_e5m2", "i32", "i8",  "u8"};

// Reads one problem.toml; the first error wins and stops everything after it.
class Loader : public FieldErrors {
 public:
  Loader(std::string shown, fs::path dir) : FieldErrors(std::move(shown)), dir_(std::move(dir)) {}

  // Every file the problem references, by the path written in problem.toml.
  const std::map<std::string, fs::path>& referenced() const { return referenced_; }


  static std::string at(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }

  bool known_fields(const toml::table& t, const std::string& prefix,
                    const std::vector<std::string>& known) {
    for (const auto& [k, _] : t) {
      const std::string key(k.str());
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return fail_raw(at(prefix, key), "unknown field; expected one of: " + join(known, false));
      }
    }
    return !failed();
  }

  // A string field; `found` says whether it was there.
  bool string(const toml::table& t, const std::string& prefix, const std::string& key,
              std::string& out, bool required, const std::string& expected) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    if (n == nullptr) return required ? fail(at(prefix, key), expected, "nothing") : true;
    if (!n->is_string()) return fail(at(prefix, key), expected, toml_describe(*n));
    out = n->as_string()->get();
    return true;
  }

  bool number(const toml::table& t, const std::string& prefix, const std::string& key, double& out,
              const std::string& expected) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    if (n == nullptr) return true;
    if (n->is_integer()) {
      out = static_cast<double>(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      out = n->as_floating_point()->get();
    } else {
      return fail(at(prefix, key), expected, toml_describe(*n));
    }
    if (!std::isfinite(out)) return fail(at(prefix, key), expected, toml_describe(*n));
    return true;
  }

  bool string_array(const toml::table& t, const std::string& prefix, const std::string& key,
                    std::vector<std::string>& out, bool required, const std::string& expected) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    const std::string field = at(prefix, key);
    if (n == nullptr) return required ? fail(field, expected, "nothing") : true;
    if (!n->is_array()) return fail(field, expected, toml_describe(*n));
    out.clear();
    size_t i = 0;
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_string()) {
        return fail(field + "[" + std::to_string(i) + "]", "a string", toml_describe(e));
      }
      out.push_back(e.as_string()->get());
      ++i;
    }
    return true;
  }

  // Knob values may be written as strings or integers; both become define text.
  bool define_text(const toml::node& n, const std::string& field, std::string& out) {
    if (n.is_string()) {
      out = n.as_string()->get();
    } else if (n.is_integer()) {
      out = std::to_string(n.as_integer()->get());
    } else {
      return fail(field, "a string or an integer (the text of a -D define)", toml_describe(n));
    }
    if (!is_define_value(out)) {
      return fail(field, "a non-empty value without spaces or control characters", in_quotes(out));
    }
    return true;
  }

  const toml::table* table(const toml::table& t, const std::string& prefix, const std::string& key,
                           bool required) {
    if (failed()) return nullptr;
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      if (required) fail(at(prefix, key), "a table [" + at(prefix, key) + "]", "nothing");
      return nullptr;
    }
    if (!n->is_table()) {
      fail(at(prefix, key), "a table", toml_describe(*n));
      return nullptr;
    }
    return n->as_table();
  }

  // [[key]] entries; null (after failing) when absent, empty or not tables.
  const toml::array* tables(const toml::table& t, const std::string& prefix, const std::string& key,
                            bool required) {
    if (failed()) return nullptr;
    const std::string field = at(prefix, key);
    const toml::node* n = t.get(key);
    const std::string expected = "an array of tables [[" + field + "]]";
    if (n == nullptr) {
      if (required) fail(field, "at least one [[" + field + "]] entry", "nothing");
      return nullptr;
    }
    if (!n->is_array()) {
      fail(field, expected, toml_describe(*n));
      return nullptr;
    }
    const toml::array* a = n->as_array();
    if (a->empty() && required) {
      fail(field, "at least one [[" + field + "]] entry", "none");
      return nullptr;
    }
    size_t i = 0;
    for (const toml::node& e : *a) {
      if (!e.is_table()) {
        fail(field + "[" + std::to_string(i) + "]", "a table", toml_describe(e));
        return nullptr;
      }
      ++i;
    }
    return a;
  }

  // A file named relative to the problem folder; it must exist. Returns its absolute path.
  bool file(const std::string& field, const std::string& rel, fs::path& out) {
    if (failed()) return false;
    if (rel.empty()) return fail(field, "a path relative to the problem folder", "\"\"");
    const fs::path p = (dir_ / rel).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      return fail(field, "an existing file relative to " + dir_.string(),
                  in_quotes(rel) + " (" + p.string() + " not found)");
    }
    out = p;
    referenced_[fs::path(rel).lexically_normal().generic_string()] = p;
    return true;
  }

  void load(const toml::table& root, Problem& p) {
    known_fields(root, "",
                 {"name", "kernel_type", "backend", "description", "axes", "reference", "inputs",
                  "outputs", "tolerance", "cost", "workloads", "families", "seed"});
    string(root, "", "name", p.name, true, "a problem name (letters, digits, '_', '-', '.')");
    if (!failed() && !is_plain_name(p.name)) {
      fail("name", "1-64 letters, digits, '_', '-' or '.'", in_quotes(p.name));
    }
    string(root, "", "kernel_type", p.kernel_type, true,
           "a kernel type such as \"gemm\", \"softmax\", \"norm\", \"elementwise\", "
           "\"reduction\" or \"attention\"");
    if (!failed() && !is_plain_name(p.kernel_type)) {
      fail("kernel_type", "a non-empty kernel type (letters, digits, '_', '-', '.')",
           in_quotes(p.kernel_type));
    }
    string(root, "", "backend", p.backend, false, "\"host\" or \"cuda\"");
    if (!failed() && p.backend != "host" && p.backend != "cuda") {
      fail("backend", "\"host\" or \"cuda\"", in_quotes(p.backend));
    }
    string(root, "", "description", p.description, false, "a string");
    load_axes(root, p);
    std::string reference;
    string(root, "", "reference", reference, true,
           "the reference source, relative to the problem folder");
    file("reference", reference, p.reference);
    load_tensors(root, "inputs", true, p.inputs, p);
    load_tensors(root, "outputs", false, p.outputs, p);
    load_tolerance(root, p);
    load_cost(root, p);
    load_workloads(root, p);
    load_families(root, p);
    load_seed(root, p);
  }

 private:
  void load_axes(const toml::table& root, Problem& p) {
    const std::string expected = "a non-empty array of axis names, e.g. [\"rows\", \"cols\"]";
    if (!string_array(root, "", "axes", p.axes, true, expected)) return;
    if (p.axes.empty()) {
      fail("axes", expected, "[]");
      return;
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < p.axes.size(); ++i) {
      const std::string field = "axes[" + std::to_string(i) + "]";
      if (!is_c_identifier(p.axes[i])) {
        fail(field, "an axis name that is a C identifier", in_quotes(p.axes[i]));
        return;
      }
      if (!seen.insert(p.axes[i]).second) {
        fail(field, "a name no other axis has", in_quotes(p.axes[i]) + " again");
        return;
      }
    }
  }

  void load_tensors(const toml::table& root, const std::string& key, bool inputs,
                    std::vector<TensorSpec>& out, const Problem& p) {
    const toml::array* arr = tables(root, "", key, true);
    if (arr == nullptr) return;
    size_t i = 0;
    for (const toml::node& node : *arr) {
      const toml::table& t = *node.as_table();
      const std::string prefix = key + "[" + std::to_string(i++) + "]";
      if (inputs) {
        known_fields(t, prefix, {"name", "dtype", "shape", "init", "low", "high"});
      } else {
        known_fields(t, prefix, {"name", "dtype", "shape"});
      }
      TensorSpec s;
      string(t, prefix, "name", s.name, true, "a tensor name");
      if (!failed() && !is_c_identifier(s.name)) {
        fail(prefix + ".name", "a tensor name that is a C identifier", in_quotes(s.name));
      }
      if (!failed()) {
        for (const auto* other : {&p.inputs, &p.outputs}) {
          for (const auto& o : *other) {
            if (o.name == s.name) {
              fail(prefix + ".name", "a name no other tensor has", in_quotes(s.name) + " again");
            }
          }
        }
        for (const auto& o : out) {
          if (o.name == s.name) {
            fail(prefix + ".name", "a name no other tensor has", in_quotes(s.name) + " again");
          }
        }
      }
      const std::string dtype_expected = p.backend == "host"
                                             ? "\"f32\" (the host backend's only dtype)"
                                             : "one of " + join(kCudaDtypes, true);
      string(t, prefix, "dtype", s.dtype, true, dtype_expected);
      if (!failed()) {
        const bool ok = p.backend == "host" ? s.dtype == "f32"
                                            : std::find(kCudaDtypes.begin(), kCudaDtypes.end(),
                                                        s.dtype) != kCudaDtypes.end();
        if (!ok) fail(prefix + ".dtype", dtype_expected, in_quotes(s.dtype));
      }
      string_array(
          t, prefix, "shape", s.shape, true,
          "an array of declared axis names (one of " + join(p.axes, false) + "); [] for a scalar");
      for (size_t d = 0; !failed() && d < s.shape.size(); ++d) {
        if (std::find(p.axes.begin(), p.axes.end(), s.shape[d]) == p.axes.end()) {
          fail(prefix + ".shape[" + std::to_string(d) + "]",
               "a declared axis (one of " + join(p.axes, false) + ")", in_quotes(s.shape[d]));
        }
      }
      if (inputs) {
        string(t, prefix, "init", s.init, false, "\"uniform\" or \"normal\"");
        if (!failed() && s.init != "uniform" && s.init != "normal") {
          fail(prefix + ".init", "\"uniform\" or \"normal\"", in_quotes(s.init));
        }
        number(t, prefix, "low", s.low, "a number");
        number(t, prefix, "high", s.high, "a number");
        if (!failed() && s.init == "uniform" && !(s.low < s.high)) {
          std::ostringstream got;
          got << "low = " << s.low << ", high = " << s.high;
          fail(prefix + ".high", "a number greater than low", got.str());
        }
        if (!failed() && s.init == "normal" && !(s.high > 0)) {
          std::ostringstream got;
          got << s.high;
          fail(prefix + ".high", "a positive standard deviation (init = \"normal\")", got.str());
        }
      }
      if (failed()) return;
      out.push_back(std::move(s));
    }
  }

  void load_tolerance(const toml::table& root, Problem& p) {
    const toml::table* t = table(root, "", "tolerance", false);
    if (t == nullptr) return;
    known_fields(*t, "tolerance", {"atol", "rtol", "matched_ratio"});
    Tolerance& tol = p.tolerance;
    number(*t, "tolerance", "atol", tol.atol, "a number >= 0");
    number(*t, "tolerance", "rtol", tol.rtol, "a number >= 0");
    number(*t, "tolerance", "matched_ratio", tol.matched_ratio, "a number in (0, 1]");
    if (failed()) return;
    auto text = [](double v) {
      std::ostringstream os;
      os << v;
      return os.str();
    };
    if (tol.atol < 0) fail("tolerance.atol", "a number >= 0", text(tol.atol));
    if (tol.rtol < 0) fail("tolerance.rtol", "a number >= 0", text(tol.rtol));
    if (!(tol.matched_ratio > 0 && tol.matched_ratio <= 1)) {
      fail("tolerance.matched_ratio", "a number in (0, 1]", text(tol.matched_ratio));
    }
  }

  void load_cost(const toml::table& root, Problem& p) {
    const toml::table* t = table(root, "", "cost", true);
    if (t == nullptr) return;
    known_fields(*t, "cost", {"flops", "bytes"});
    // Any axis value parses the expression and checks its names; workloads are checked later.
    std::map<std::string, int64_t> ones;
    for (const auto& a : p.axes) ones[a] = 1;
    const std::string expected = "an arithmetic expression over the axes (" + join(p.axes, false) +
                                 "), e.g. \"2 * " + p.axes.front() + "\"";
    for (auto [key, out] : {std::pair{"flops", &p.cost.flops}, std::pair{"bytes", &p.cost.bytes}}) {
      if (!string(*t, "cost", key, *out, true, expected)) return;
      auto v = evaluate_expression(*out, ones);
      if (!v && v.status().message().find("division by zero") == std::string::npos) {
        fail(std::string("cost.") + key, expected,
             in_quotes(*out) + " (" + v.status().message() + ")");
        return;
      }
    }
  }

  void load_workloads(const toml::table& root, Problem& p) {
    const toml::array* arr = tables(root, "", "workloads", true);
    if (arr == nullptr) return;
    std::set<std::string> names;
    size_t i = 0;
    for (const toml::node& node : *arr) {
      const toml::table& t = *node.as_table();
      const std::string prefix = "workloads[" + std::to_string(i++) + "]";
      known_fields(t, prefix, {"name", "axes"});
      Workload w;
      string(t, prefix, "name", w.name, true, "a workload name (letters, digits, '_', '-', '.')");
      if (failed()) return;
      if (!is_plain_name(w.name)) {
        fail(prefix + ".name", "1-64 letters, digits, '_', '-' or '.'", in_quotes(w.name));
        return;
      }
      if (!names.insert(w.name).second) {
        fail(prefix + ".name", "a name no other workload has", in_quotes(w.name) + " again");
        return;
      }
      const toml::table* axes = table(t, prefix, "axes", true);
      if (axes == nullptr) return;
      for (const auto& [k, v] : *axes) {
        const std::string key(k.str());
        if (std::find(p.axes.begin(), p.axes.end(), key) == p.axes.end()) {
          fail_raw(prefix + ".axes." + key,
                   "unknown axis; expected one of the declared axes: " + join(p.axes, false));
          return;
        }
      }
      for (const auto& a : p.axes) {
        const std::string field = prefix + ".axes." + a;
        const toml::node* n = axes->get(a);
        if (n == nullptr) {
          fail(field, "a positive integer", "nothing");
          return;
        }
        if (!n->is_integer() || n->as_integer()->get() <= 0) {
          fail(field, "a positive integer", toml_describe(*n));
          return;
        }
        w.axes[a] = n->as_integer()->get();
      }
      // Tensors must be addressable: element counts that overflow are a typo, not a workload.
      for (const auto* list : {&p.inputs, &p.outputs}) {
        for (const auto& ts : *list) {
          int64_t n = 1;
          for (const auto& d : ts.shape) {
            if (__builtin_mul_overflow(n, w.axes[d], &n) || n > (int64_t{1} << 40)) {
              fail_raw(prefix + ".axes",
                       "tensor '" + ts.name + "' would have more than 2^40 elements");
              return;
            }
          }
        }
      }
      for (auto [key, expr] :
           {std::pair{"flops", &p.cost.flops}, std::pair{"bytes", &p.cost.bytes}}) {
        auto v = evaluate_expression(*expr, w.axes);
        if (!v) {
          fail(std::string("cost.") + key, "an expression that evaluates for every workload",
               in_quotes(*expr) + " for workload '" + w.name + "' (" + v.status().message() + ")");
          return;
        }
        if (*v < 0) {
          std::ostringstream got;
          got << *v << " for workload '" << w.name << "'";
          fail(std::string("cost.") + key, "a value >= 0", got.str());
          return;
        }
      }
      p.workloads.push_back(std::move(w));
    }
  }

  void load_families(const toml::table& root, Problem& p) {
    const toml::array* arr = tables(root, "", "families", true);
    if (arr == nullptr) return;
    size_t i = 0;
    for (const toml::node& node : *arr) {
      const toml::table& t = *node.as_table();
      const std::string prefix = "families[" + std::to_string(i++) + "]";
      known_fields(t, prefix, {"name", "source", "description", "tags", "knobs"});
      Family f;
      string(t, prefix, "name", f.name, true, "a family name (letters, digits, '_', '-', '.')");
      if (failed()) return;
      if (!is_plain_name(f.name)) {
        fail(prefix + ".name", "1-64 letters, digits, '_', '-' or '.'", in_quotes(f.name));
        return;
      }
      if (p.family(f.name) != nullptr) {
        fail(prefix + ".name", "a name no other family has", in_quotes(f.name) + " again");
        return;
      }
      std::string source;
      string(t, prefix, "source", source, true,
             "the family's source template, relative to the problem folder");
      file(prefix + ".source", source, f.source);
      string(t, prefix, "description", f.description, false, "a string");
      string_array(t, prefix, "tags", f.tags, false, "an array of strings");
      const toml::array* knobs = tables(t, prefix, "knobs", false);
      if (failed()) return;
      if (knobs != nullptr) {
        size_t j = 0;
        for (const toml::node& kn : *knobs) {
          load_knob(*kn.as_table(), prefix + ".knobs[" + std::to_string(j++) + "]", f);
          if (failed()) return;
        }
      }
      p.families.push_back(std::move(f));
    }
  }

  void load_knob(const toml::table& t, const std::string& prefix, Family& f) {
    known_fields(t, prefix, {"name", "values", "default"});
    Knob k;
    string(t, prefix, "name", k.name, true, "a knob name (a C identifier, e.g. \"TILE_M\")");
    if (failed()) return;
    if (!is_c_identifier(k.name)) {
      fail(prefix + ".name", "a knob name that is a C identifier (it becomes -D<NAME>=<VALUE>)",
           in_quotes(k.name));
      return;
    }
    if (f.knob(k.name) != nullptr) {
      fail(prefix + ".name", "a name no other knob of family '" + f.name + "' has",
           in_quotes(k.name) + " again");
      return;
    }
    const toml::node* values = t.get("values");
    const std::string expected = "a non-empty array of values, e.g. [\"1\", \"2\", \"4\"]";
    if (values == nullptr) {
      fail(prefix + ".values", expected, "nothing");
      return;
    }
    if (!values->is_array() || values->as_array()->empty()) {
      fail(prefix + ".values", expected, values->is_array() ? "[]" : toml_describe(*values));
      return;
    }
    size_t i = 0;
    for (const toml::node& v : *values->as_array()) {
      const std::string field = prefix + ".values[" + std::to_string(i++) + "]";
      std::string text;
      if (!define_text(v, field, text)) return;
      if (std::find(k.values.begin(), k.values.end(), text) != k.values.end()) {
        fail(field, "a value not already listed", in_quotes(text) + " again");
        return;
      }
      k.values.push_back(std::move(text));
    }
    if (const toml::node* d = t.get("default"); d != nullptr) {
      if (!define_text(*d, prefix + ".default", k.default_value)) return;
      if (std::find(k.values.begin(), k.values.end(), k.default_value) == k.values.end()) {
        fail(prefix + ".default", "one of the knob's values (" + join(k.values, true) + ")",
             in_quotes(k.default_value));
        return;
      }
    } else {
      k.default_value = k.values.front();  // documented: the first value when none is given
    }
    f.knobs.push_back(std::move(k));
  }

  void load_seed(const toml::table& root, Problem& p) {
    const toml::table* t = table(root, "", "seed", true);
    if (t == nullptr) return;
    known_fields(*t, "seed", {"family", "knobs"});
    std::vector<std::string> names;
    for (const auto& f : p.families) names.push_back(f.name);
    std::string family;
    string(*t, "seed", "family", family, true, "the name of a family (" + join(names, false) + ")");
    if (failed()) return;
    const Family* f = p.family(family);
    if (f == nullptr) {
      fail("seed.family", "the name of a family (" + join(names, false) + ")", in_quotes(family));
      return;
    }
    Variant v = f->default_variant();
    if (const toml::table* knobs = table(*t, "seed", "knobs", false); knobs != nullptr) {
      std::vector<std::string> knob_names;
      for (const auto& k : f->knobs) knob_names.push_back(k.name);
      for (const auto& [key, node] : *knobs) {
        const std::string name(key.str());
        const std::string field = "seed.knobs." + name;
        const Knob* k = f->knob(name);
        if (k == nullptr) {
          fail_raw(field, "family '" + f->name +
                              "' has no such knob; expected one of: " + join(knob_names, false));
          return;
        }
        std::string value;
        if (!define_text(node, field, value)) return;
        if (std::find(k->values.begin(), k->values.end(), value) == k->values.end()) {
          fail(field, "one of " + join(k->values, true), in_quotes(value));
          return;
        }
        v.knobs[name] = value;
      }
    }
    if (failed()) return;
    p.seed = Candidate{};
    p.seed.base = std::move(v);
  }

  fs::path dir_;
  std::map<std::string, fs::path> referenced_;
};

Result<std::string> read_bytes(const fs::path& p, const std::string& shown) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::io_error(shown + ": cannot read the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::io_error(shown + ": error reading the file");
  return ss.str();
}

void append_part(std::string& material, const std::string& name, const std::string& bytes) {
  material += name;
  material.push_back('\0');
  material += std::to_string(bytes.size());
  material.push_back('\0');
  material += bytes;
}

Result<Problem> load_problem_impl(const fs::path& path) {
  std::error_code ec;
  const bool is_dir = fs::is_directory(path, ec);
  const fs::path file = is_dir ? path / "problem.toml" : path;
  const std::string shown = file.lexically_normal().string();
  if (!fs::is_regular_file(file, ec)) {
    return Status::not_found(shown + ": no such problem file" +
                             (is_dir ? " (the folder has no problem.toml)" : ""));
  }
  const fs::path abs_file = fs::absolute(file, ec).lexically_normal();
  if (ec) return Status::io_error(shown + ": cannot resolve the path: " + ec.message());
  auto bytes = read_bytes(abs_file, shown);
  if (!bytes) return bytes.status();

  auto parsed_root = parse_toml(*bytes, shown);
  if (!parsed_root) return parsed_root.status();
  toml::table root = std::move(parsed_root.value());

  Problem p;
  p.file = abs_file;
  p.dir = abs_file.parent_path();
  Loader loader(shown, p.dir);
  loader.load(root, p);
  if (loader.failed()) return loader.status();

  // The identity of the problem: its text plus every file it references, by the path written
  // in problem.toml, in sorted order. Length prefixes keep the parts from running together.
  std::string material = "kernelarc-problem-v1";
  material.push_back('\0');
  append_part(material, "problem.toml", *bytes);
  for (const auto& [rel, abs] : loader.referenced()) {
    auto b = read_bytes(abs, (p.dir / rel).lexically_normal().string());
    if (!b) return b.status();
    append_part(material, rel, *b);
  }
  p.hash = storage::sha256_hex(material);
  return p;
}

}  // namespace

const Knob* Family::knob(const std::string& knob_name) const {
  for (const auto& k : knobs) {
    if (k.name == knob_name) return &k;
  }
  return nullptr;
}

Variant Family::default_variant() const {
  Variant v;
  v.family = name;
  for (const auto& k : knobs) v.knobs[k.name] = k.default_value;
  return v;
}

const Family* Problem::family(const std::string& family_name) const {
  for (const auto& f : families) {
    if (f.name == family_name) return &f;
  }
  return nullptr;
}

const Workload* Problem::workload(const std::string& workload_name) const {
  for (const auto& w : workloads) {
    if (w.name == workload_name) return &w;
  }
  return nullptr;
}

Result<double> Problem::flops(const Workload& w) const {
  return evaluate_expression(cost.flops, w.axes);
}

Result<double> Problem::bytes(const Workload& w) const {
  return evaluate_expression(cost.bytes, w.axes);
}

int64_t Problem::elements(const TensorSpec& t, const Workload& w) const {
  int64_t n = 1;
  for (const auto& d : t.shape) {
    auto it = w.axes.find(d);
    // A workload without the axis has no such tensor; loading rejects that, so this is only
    // reached for hand-built problems.
    if (it == w.axes.end() || it->second <= 0) return 0;
    if (__builtin_mul_overflow(n, it->second, &n)) return 0;
  }
  return n;
}

Result<Problem> load_problem(const std::filesystem::path& path) {
  try {
    return load_problem_impl(path);
  } catch (const std::exception& e) {
    return Status::internal(path.string() + ": loading the problem failed: " + e.what());
  }
}

Result<double> evaluate_expression(const std::string& expr,
                                   const std::map<std::string, int64_t>& axes) {
  try {
    return ExpressionParser(expr, axes).run();
  } catch (const std::exception& e) {
    return Status::internal("expression \"" + expr + "\": " + e.what());
  }
}

}  // namespace arc::eval
