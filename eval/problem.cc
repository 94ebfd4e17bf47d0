// Loading and validating problem.toml (format: docs/problem-format.md), and the cost-model
// expression evaluator. Every error a user can cause names the file, the field, what was
// expected and what was found; nothing here throws.
#include "eval/problem.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
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
//   primary := number | name | name '(' [expr (',' expr)*] ')' | '(' expr ')'
// A name followed by '(' calls a function: cdiv(a, b) = ceil(a / b), min(a, b), max(a, b).

constexpr int kMaxExpressionDepth = 200;  // bounds the recursion on "((((..."

struct Token {
  enum class Kind { kEnd, kNumber, kName, kOp } kind = Kind::kEnd;
  std::string text;
  double number = 0;
  size_t pos = 0;  // 1-based column, for messages
};

// What the names of an expression stand for, for messages: the cost model names axes; launch
// expressions name axes and numeric knobs. `hints` explains why a name that looks usable is not
// (a knob whose value is not an integer).
struct NameScope {
  const char* noun = "axis";     // "unknown <noun> 'x'"
  const char* plural = "axes";   // "(<plural>: a, b)"
  const std::map<std::string, std::string>* hints = nullptr;
};

struct ExpressionFunction {
  const char* name;
  const char* signature;
};
constexpr ExpressionFunction kExpressionFunctions[] = {
    {"cdiv", "cdiv(a, b)"}, {"min", "min(a, b)"}, {"max", "max(a, b)"}};

class ExpressionParser {
 public:
  ExpressionParser(const std::string& text, const std::map<std::string, int64_t>& names,
                   NameScope scope = {})
      : text_(text), names_(names), scope_(scope) {}

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
    } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '(' || c == ')' || c == ',') {
      t.kind = Token::Kind::kOp;
      t.text = std::string(1, c);
      ++at_;
    } else {
      fail("unexpected character '" + std::string(1, c) + "' at position " + std::to_string(t.pos) +
           " (expected numbers, " + scope_.noun +
           " names, + - * /, parentheses and the functions cdiv, min, max)");
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
      const Token name = tok_;
      advance();
      if (is_op('(')) return call(name, depth);
      auto it = names_.find(name.text);
      if (it == names_.end()) {
        std::string message = std::string("unknown ") + scope_.noun + " '" + name.text +
                              "' at position " + std::to_string(name.pos) + " (";
        if (scope_.hints != nullptr) {
          if (auto h = scope_.hints->find(name.text); h != scope_.hints->end()) {
            message += h->second + "; ";
          }
        }
        std::string known;
        for (const auto& [n, _] : names_) known += (known.empty() ? "" : ", ") + n;
        fail(message + scope_.plural + ": " + (known.empty() ? "none" : known) + ")");
        return 0;
      }
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
    fail(std::string("expected a number, ") + (scope_.noun[0] == 'a' ? "an " : "a ") +
         scope_.noun + " name or '(', got " + describe(tok_));
    return 0;
  }

  // `fn` has been read and the current token is its '('.
  double call(const Token& fn, int depth) {
    const ExpressionFunction* f = nullptr;
    for (const auto& candidate : kExpressionFunctions) {
      if (fn.text == candidate.name) f = &candidate;
    }
    const std::string at = " at position " + std::to_string(fn.pos);
    if (f == nullptr) {
      fail("unknown function '" + fn.text + "'" + at + " (functions: cdiv(a, b), min(a, b), " +
           "max(a, b))");
      return 0;
    }
    advance();  // '('
    std::vector<double> args;
    if (!is_op(')')) {
      while (error_.empty()) {
        args.push_back(expr(depth + 1));
        if (!error_.empty()) return 0;
        if (!is_op(',')) break;
        advance();
      }
    }
    if (!error_.empty()) return 0;
    if (!is_op(')')) {
      fail("expected ',' or ')' in the call of '" + fn.text + "'" + at + ", got " +
           describe(tok_));
      return 0;
    }
    advance();
    if (args.size() != 2) {
      fail("function '" + fn.text + "'" + at + " takes 2 arguments (" + f->signature + "), got " +
           std::to_string(args.size()));
      return 0;
    }
    const double a = args[0], b = args[1];
    if (fn.text == "cdiv") {
      if (b == 0) {
        fail("division by zero in cdiv" + at);
        return 0;
      }
      return std::ceil(a / b);
    }
    return fn.text == "min" ? std::min(a, b) : std::max(a, b);
  }

  const std::string& text_;
  const std::map<std::string, int64_t>& names_;
  NameScope scope_;
  size_t at_ = 0;
  Token tok_;
  std::string error_;
};

// An integer written as text ("256", "-3"); a knob with such a value can appear in expressions.
bool parse_integer(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

Result<double> evaluate_in_scope(const std::string& expr,
                                 const std::map<std::string, int64_t>& names, NameScope scope) {
  try {
    return ExpressionParser(expr, names, scope).run();
  } catch (const std::exception& e) {
    return Status::internal("expression \"" + expr + "\": " + e.what());
  }
}

std::string number_text(double v) {
  std::ostringstream os;
  os << std::setprecision(15) << v;
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Launch dimensions

// The first launch field that does not resolve: which launch, which of its fields ("grid[0]",
// "block", "shared"), and what was expected and found.
struct LaunchError {
  size_t launch = 0;
  std::string field;
  std::string expected;
  std::string got;
};

constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxBlockThreads = 1024;

// Evaluates one launch or workspace expression to an integer; on failure fills `err` (all but
// `launch`) and returns false.
bool integer_value(const std::string& expr, const std::map<std::string, int64_t>& names,
                   const std::map<std::string, std::string>& hints, const std::string& field,
                   const std::string& expected, int64_t& out, LaunchError& err) {
  auto v = evaluate_in_scope(expr, names, NameScope{"name", "names", &hints});
  err.field = field;
  if (!v) {
    err.expected = "an expression that evaluates for this workload";
    err.got = in_quotes(expr) + " (" + v.status().message() + ")";
    return false;
  }
  // 2^62 keeps products of dimensions inside int64; no launch dimension comes near it.
  if (*v != std::floor(*v) || std::fabs(*v) > 4.6e18) {
    err.expected = expected + " (use cdiv(a, b) for a division that must round up)";
    err.got = in_quotes(expr) + " = " + number_text(*v);
    return false;
  }
  out = static_cast<int64_t>(*v);
  return true;
}

bool resolve_launches_impl(const std::vector<Launch>& launches,
                           const std::map<std::string, int64_t>& names,
                           const std::map<std::string, std::string>& hints,
                           std::vector<ResolvedLaunch>& out, LaunchError& err) {
  out.clear();
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    err.launch = i;
    ResolvedLaunch r;
    r.kernel = l.kernel;
    for (const bool grid : {true, false}) {
      const auto& dims = grid ? l.grid : l.block;
      const char* key = grid ? "grid" : "block";
      if (dims.empty() || dims.size() > 3) {
        err.field = key;
        err.expected = "1 to 3 expressions (x, y, z)";
        err.got = std::to_string(dims.size());
        return false;
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        const std::string field = std::string(key) + "[" + std::to_string(d) + "]";
        const int64_t limit = grid ? (d == 0 ? kMaxGridX : kMaxGridYZ)
                                   : (d == 2 ? kMaxBlockZ : kMaxBlockXY);
        const std::string expected =
            "a positive integer of at most " + std::to_string(limit) + " (the CUDA limit of " +
            key + "." + "xyz"[d] + ")";
        int64_t v = 0;
        if (!integer_value(dims[d], names, hints, field, expected, v, err)) return false;
        if (v <= 0 || v > limit) {
          err.expected = expected;
          err.got = in_quotes(dims[d]) + " = " + std::to_string(v);
          return false;
        }
        (grid ? r.grid : r.block)[d] = v;
      }
    }
    const int64_t threads = r.block[0] * r.block[1] * r.block[2];
    if (threads > kMaxBlockThreads) {
      err.field = "block";
      err.expected = "at most " + std::to_string(kMaxBlockThreads) + " threads per block";
      err.got = std::to_string(r.block[0]) + " x " + std::to_string(r.block[1]) + " x " +
                std::to_string(r.block[2]) + " = " + std::to_string(threads);
      return false;
    }
    const std::string shared_expected = "a number of bytes >= 0";
    if (!integer_value(l.shared, names, hints, "shared", shared_expected, r.shared, err)) {
      return false;
    }
    if (r.shared < 0) {
      err.expected = shared_expected;
      err.got = in_quotes(l.shared) + " = " + std::to_string(r.shared);
      return false;
    }
    out.push_back(std::move(r));
  }
  return true;
}

// Why a knob cannot appear in an expression for these knob values.
std::map<std::string, std::string> non_integer_knob_hints(
    const std::map<std::string, std::string>& knobs) {
  std::map<std::string, std::string> hints;
  for (const auto& [name, value] : knobs) {
    int64_t v = 0;
    if (!parse_integer(value, v)) {
      hints[name] = "knob '" + name + "' has the non-integer value " + in_quotes(value);
    }
  }
  return hints;
}

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
                 {"name", "kernel_type", "backend", "description", "axes", "reference",
                  "compute_dtype", "inputs", "outputs", "tolerance", "cost", "workloads",
                  "reference_launches", "families", "seed"});
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
    load_abi_limits(p);
    load_compute_dtype(root, p);
    load_tolerance(root, p);
    load_cost(root, p);
    load_workloads(root, p);
    load_reference_launches(root, p);
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
        known_fields(t, prefix, {"name", "dtype", "shape", "alias"});
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
      if (!inputs && t.get("alias") != nullptr && cuda_only(t, prefix, "alias", p)) {
        string(t, prefix, "alias", s.alias, false, "the name of an input");
        check_alias(prefix + ".alias", s, out, p);
      }
      if (failed()) return;
      out.push_back(std::move(s));
    }
  }

  // An aliased output is its input's buffer: the same elements, the same dtype, one output each.
  void check_alias(const std::string& field, const TensorSpec& s,
                   const std::vector<TensorSpec>& earlier_outputs, const Problem& p) {
    if (failed()) return;
    std::vector<std::string> names;
    for (const auto& in : p.inputs) names.push_back(in.name);
    const TensorSpec* input = nullptr;
    for (const auto& in : p.inputs) {
      if (in.name == s.alias) input = &in;
    }
    if (input == nullptr) {
      fail(field, "the name of an input (" + join(names, false) + ") whose buffer this output updates",
           in_quotes(s.alias));
      return;
    }
    if (input->shape != s.shape) {
      fail(field, "an input of this output's shape " + shape_text(s.shape),
           in_quotes(s.alias) + " of shape " + shape_text(input->shape));
      return;
    }
    if (input->dtype != s.dtype) {
      fail(field, "an input of this output's dtype " + in_quotes(s.dtype),
           in_quotes(s.alias) + " of dtype " + in_quotes(input->dtype));
      return;
    }
    for (size_t i = 0; i < earlier_outputs.size(); ++i) {
      if (earlier_outputs[i].alias == s.alias) {
        fail(field, "an input no other output aliases",
             in_quotes(s.alias) + ", already the alias of outputs[" + std::to_string(i) + "] (" +
                 in_quotes(earlier_outputs[i].name) + ")");
        return;
      }
    }
  }

  static std::string shape_text(const std::vector<std::string>& shape) {
    std::string out;
    for (const auto& d : shape) out += (out.empty() ? "" : ", ") + d;
    return "[" + out + "]";
  }

  // A field only the CUDA backend has: on another backend it is an error, never ignored.
  bool cuda_only(const toml::table& t, const std::string& prefix, const std::string& key,
                 const Problem& p) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    if (n == nullptr || p.backend == "cuda") return true;
    return fail(at(prefix, key),
                "no '" + key + "' with backend = " + in_quotes(p.backend) +
                    " (only backend = \"cuda\" has it)",
                toml_describe(*n));
  }

  // The CUDA ABI passes tensors and axes in fixed arrays (cuda/include/arc_cuda.h).
  void load_abi_limits(const Problem& p) {
    if (failed() || p.backend != "cuda") return;
    constexpr size_t kMaxTensors = 8;  // ARC_MAX_TENSORS
    constexpr size_t kMaxAxes = 8;     // ARC_MAX_AXES
    const std::string where = " with backend = \"cuda\" (cuda/include/arc_cuda.h)";
    if (p.axes.size() > kMaxAxes) {
      fail("axes", "at most " + std::to_string(kMaxAxes) + " axes" + where,
           std::to_string(p.axes.size()));
    } else if (p.inputs.size() > kMaxTensors) {
      fail("inputs", "at most " + std::to_string(kMaxTensors) + " inputs" + where,
           std::to_string(p.inputs.size()));
    } else if (p.outputs.size() > kMaxTensors) {
      fail("outputs", "at most " + std::to_string(kMaxTensors) + " outputs" + where,
           std::to_string(p.outputs.size()));
    }
  }

  void load_compute_dtype(const toml::table& root, Problem& p) {
    if (!cuda_only(root, "", "compute_dtype", p) || p.backend != "cuda") return;
    const std::vector<std::string> allowed = {"f32", "bf16", "f16"};
    const std::string expected =
        "one of " + join(allowed, true) + " (the GEMM peak that bounds the flops term)";
    auto is_allowed = [&](const std::string& d) {
      return std::find(allowed.begin(), allowed.end(), d) != allowed.end();
    };
    if (root.get("compute_dtype") != nullptr) {
      if (!string(root, "", "compute_dtype", p.compute_dtype, false, expected)) return;
      if (!is_allowed(p.compute_dtype)) fail("compute_dtype", expected, in_quotes(p.compute_dtype));
      return;
    }
    // Documented default: the first input's dtype.
    const std::string& first = p.inputs.front().dtype;
    if (!is_allowed(first)) {
      fail("compute_dtype",
           expected + "; the default, the first input's dtype, is not one of them",
           "nothing (inputs[0].dtype = " + in_quotes(first) + ")");
      return;
    }
    p.compute_dtype = first;
  }

  // An expression written as a string or an integer (kept as its decimal text).
  bool expression_text(const toml::node& n, const std::string& field, const std::string& expected,
                       std::string& out) {
    if (failed()) return false;
    if (n.is_string()) {
      out = n.as_string()->get();
    } else if (n.is_integer()) {
      out = std::to_string(n.as_integer()->get());
    } else {
      return fail(field, expected, toml_describe(n));
    }
    if (out.find_first_not_of(" \t") == std::string::npos) {
      return fail(field, expected, in_quotes(out));
    }
    return true;
  }

  void launch_dims(const toml::table& t, const std::string& prefix, const std::string& key,
                   std::vector<std::string>& out) {
    if (failed()) return;
    const std::string field = prefix + "." + key;
    const std::string expected =
        "an array of 1 to 3 expressions (x, y, z), strings or integers, e.g. " +
        std::string(key == "grid" ? "[\"cdiv(rows, 256)\"]" : "[\"THREADS\"]");
    const toml::node* n = t.get(key);
    if (n == nullptr) {
      fail(field, expected, "nothing");
      return;
    }
    if (!n->is_array()) {
      fail(field, expected, toml_describe(*n));
      return;
    }
    const toml::array& a = *n->as_array();
    if (a.empty() || a.size() > 3) {
      fail(field, expected, a.empty() ? "[]" : std::to_string(a.size()) + " entries");
      return;
    }
    for (size_t d = 0; d < a.size(); ++d) {
      std::string e;
      if (!expression_text(*a.get(d), field + "[" + std::to_string(d) + "]",
                           "an expression (a string or an integer)", e)) {
        return;
      }
      out.push_back(std::move(e));
    }
  }

  // [[<prefix>.<key>]]: kernels launched in order (docs/problem-format-cuda.md, "Launches").
  void load_launches(const toml::table& t, const std::string& prefix, const std::string& key,
                     std::vector<Launch>& out) {
    const toml::array* arr = tables(t, prefix, key, true);
    if (arr == nullptr) return;
    size_t i = 0;
    for (const toml::node& node : *arr) {
      const toml::table& lt = *node.as_table();
      const std::string lp = at(prefix, key) + "[" + std::to_string(i++) + "]";
      known_fields(lt, lp, {"kernel", "grid", "block", "shared"});
      Launch l;
      const std::string kernel_expected =
          "the name of an extern \"C\" __global__ kernel of the source (a C identifier)";
      string(lt, lp, "kernel", l.kernel, true, kernel_expected);
      if (!failed() && !is_c_identifier(l.kernel)) {
        fail(lp + ".kernel", kernel_expected, in_quotes(l.kernel));
      }
      launch_dims(lt, lp, "grid", l.grid);
      launch_dims(lt, lp, "block", l.block);
      if (const toml::node* n = lt.get("shared"); n != nullptr) {
        expression_text(*n, lp + ".shared",
                        "a byte count: an expression (a string or an integer), e.g. \"0\"",
                        l.shared);
      }
      if (failed()) return;
      out.push_back(std::move(l));
    }
  }

  // What a launch or workspace expression may name, for checking its form: every axis and every
  // knob whose values are all integers, each at 1.
  struct ExpressionContext {
    std::map<std::string, int64_t> ones;
    std::map<std::string, std::string> hints;  // knobs that cannot appear, and why
    std::string expected;
  };

  static ExpressionContext expression_context(const Problem& p, const Family* f) {
    ExpressionContext c;
    for (const auto& a : p.axes) c.ones[a] = 1;
    std::vector<std::string> numeric;
    if (f != nullptr) {
      for (const auto& k : f->knobs) {
        std::vector<std::string> words;
        for (const auto& v : k.values) {
          int64_t n = 0;
          if (!parse_integer(v, n)) words.push_back(v);
        }
        if (words.empty()) {
          c.ones.emplace(k.name, 1);
          numeric.push_back(k.name);
        } else {
          c.hints[k.name] = "knob '" + k.name + "' has non-integer values (" + join(words, true) +
                            ") and cannot appear in an expression";
        }
      }
    }
    c.expected = "an arithmetic expression over the axes (" + join(p.axes, false) + ")" +
                 (f != nullptr ? " and the family's integer knobs (" + join(numeric, false) + ")"
                               : std::string()) +
                 " with + - * /, parentheses, cdiv(a, b), min(a, b) and max(a, b)";
    return c;
  }

  bool check_expression(const std::string& expr, const std::string& field,
                        const ExpressionContext& c) {
    if (failed()) return false;
    auto v = evaluate_in_scope(expr, c.ones, NameScope{"name", "names", &c.hints});
    // At 1 a divisor may vanish; the real values are checked per workload.
    if (!v && v.status().message().find("division by zero") == std::string::npos) {
      return fail(field, c.expected, in_quotes(expr) + " (" + v.status().message() + ")");
    }
    return true;
  }

  bool check_launch_expressions(const std::vector<Launch>& launches, const std::string& field,
                                const ExpressionContext& c) {
    for (size_t i = 0; i < launches.size(); ++i) {
      const std::string lp = field + "[" + std::to_string(i) + "]";
      for (size_t d = 0; d < launches[i].grid.size(); ++d) {
        check_expression(launches[i].grid[d], lp + ".grid[" + std::to_string(d) + "]", c);
      }
      for (size_t d = 0; d < launches[i].block.size(); ++d) {
        check_expression(launches[i].block[d], lp + ".block[" + std::to_string(d) + "]", c);
      }
      check_expression(launches[i].shared, lp + ".shared", c);
    }
    return !failed();
  }

  static std::string knobs_text(const std::map<std::string, std::string>& knobs) {
    std::string out;
    for (const auto& [k, v] : knobs) out += (out.empty() ? "" : ", ") + k + "=" + v;
    return out;
  }

  // Resolves the launches (and the workspace, if given) for every workload at every knob setting.
  // An error names the field, the expression, the workload and the knob values.
  void check_resolution(const std::vector<Launch>& launches, const std::string& field,
                        const std::string* workspace, const std::string& workspace_field,
                        const std::vector<std::map<std::string, std::string>>& settings,
                        const Problem& p) {
    for (const auto& w : p.workloads) {
      for (const auto& knobs : settings) {
        if (failed()) return;
        const auto names = expression_names(w, knobs);
        const auto hints = non_integer_knob_hints(knobs);
        const std::string where = " for workload '" + w.name + "'" +
                                  (knobs.empty() ? "" : " at knobs " + knobs_text(knobs));
        std::vector<ResolvedLaunch> resolved;
        LaunchError err;
        if (!resolve_launches_impl(launches, names, hints, resolved, err)) {
          fail(field + "[" + std::to_string(err.launch) + "]." + err.field, err.expected,
               err.got + where);
          return;
        }
        if (workspace == nullptr) continue;
        const std::string expected = "a number of bytes >= 0";
        int64_t bytes = 0;
        if (!integer_value(*workspace, names, hints, "workspace", expected, bytes, err)) {
          fail(workspace_field, err.expected, err.got + where);
          return;
        }
        if (bytes < 0) {
          fail(workspace_field, expected, in_quotes(*workspace) + " = " + std::to_string(bytes) +
                                              where);
          return;
        }
      }
    }
  }

  // The default knobs, then each knob at its first and at its last value with the others at
  // their defaults.
  static std::vector<std::map<std::string, std::string>> knob_settings(const Family& f) {
    std::vector<std::map<std::string, std::string>> out{f.default_variant().knobs};
    for (const auto& k : f.knobs) {
      for (const auto* v : {&k.values.front(), &k.values.back()}) {
        auto s = out.front();
        s[k.name] = *v;
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
      }
    }
    return out;
  }

  void load_reference_launches(const toml::table& root, Problem& p) {
    if (!cuda_only(root, "", "reference_launches", p) || p.backend != "cuda") return;
    load_launches(root, "", "reference_launches", p.reference_launches);
    if (failed()) return;
    if (!check_launch_expressions(p.reference_launches, "reference_launches",
                                  expression_context(p, nullptr))) {
      return;
    }
    check_resolution(p.reference_launches, "reference_launches", nullptr, "", {{}}, p);
  }

  // The CUDA part of a [[families]] entry: a library family's GEMM, or a source family's
  // launches and workspace, checked for every workload at the default and extreme knob values.
  void load_cuda_family(const toml::table& t, const std::string& prefix, Family& f,
                        const Problem& p) {
    if (failed()) return;
    if (!f.library.empty()) {
      load_gemm(t, prefix, f, p);
      check_library_knobs(prefix, f);
      return;
    }
    if (const toml::node* g = t.get("gemm"); g != nullptr) {
      fail(prefix + ".gemm",
           "no 'gemm' without library = \"cublaslt\" (a family with a source lists its kernels "
           "in [[families.launches]])",
           toml_describe(*g));
      return;
    }
    // Knobs and axes share the names of launch expressions.
    for (size_t j = 0; j < f.knobs.size(); ++j) {
      if (std::find(p.axes.begin(), p.axes.end(), f.knobs[j].name) != p.axes.end()) {
        fail(prefix + ".knobs[" + std::to_string(j) + "].name",
             "a knob name that is not also an axis name (launch expressions use both)",
             in_quotes(f.knobs[j].name));
        return;
      }
    }
    if (t.get("launches") == nullptr) {
      fail(prefix + ".launches",
           "at least one [[families.launches]] entry (the kernels the family launches, in order)",
           "nothing");
      return;
    }
    load_launches(t, prefix, "launches", f.launches);
    if (const toml::node* n = t.get("workspace"); n != nullptr) {
      expression_text(*n, prefix + ".workspace",
                      "a byte count: an expression (a string or an integer), e.g. \"0\"",
                      f.workspace);
    }
    if (failed()) return;
    const ExpressionContext c = expression_context(p, &f);
    if (!check_launch_expressions(f.launches, prefix + ".launches", c)) return;
    if (!check_expression(f.workspace, prefix + ".workspace", c)) return;
    check_resolution(f.launches, prefix + ".launches", &f.workspace, prefix + ".workspace",
                     knob_settings(f), p);
  }

  // gemm = { a, b, c, d, m, n, k }: a [m, k] and b [n, k] inputs, d [m, n] an output, c an
  // optional [m, n] input, one dtype for all.
  void load_gemm(const toml::table& t, const std::string& prefix, Family& f, const Problem& p) {
    const std::string field = prefix + ".gemm";
    const std::string table_expected =
        "a table gemm = { a, b, c, d, m, n, k } (the product the library family computes)";
    const toml::node* n = t.get("gemm");
    if (n == nullptr || !n->is_table()) {
      fail(field, table_expected, n == nullptr ? "nothing" : toml_describe(*n));
      return;
    }
    const toml::table& g = *n->as_table();
    known_fields(g, field, {"a", "b", "c", "d", "m", "n", "k"});
    std::vector<std::string> in_names, out_names;
    for (const auto& s : p.inputs) in_names.push_back(s.name);
    for (const auto& s : p.outputs) out_names.push_back(s.name);
    const std::string input_expected = "the name of an input (" + join(in_names, false) + ")";
    const std::string output_expected = "the name of an output (" + join(out_names, false) + ")";
    const std::string axis_expected = "a declared axis (one of " + join(p.axes, false) + ")";
    GemmSpec& s = f.gemm;
    string(g, field, "a", s.a, true, input_expected);
    string(g, field, "b", s.b, true, input_expected);
    string(g, field, "c", s.c, false, input_expected + " or \"\" (none)");
    string(g, field, "d", s.d, true, output_expected);
    string(g, field, "m", s.m, true, axis_expected);
    string(g, field, "n", s.n, true, axis_expected);
    string(g, field, "k", s.k, true, axis_expected);
    if (failed()) return;
    auto find = [](const std::vector<TensorSpec>& list, const std::string& name) {
      const TensorSpec* found = nullptr;
      for (const auto& t : list) {
        if (t.name == name) found = &t;
      }
      return found;
    };
    const TensorSpec* a = find(p.inputs, s.a);
    const TensorSpec* b = find(p.inputs, s.b);
    const TensorSpec* c = s.c.empty() ? nullptr : find(p.inputs, s.c);
    const TensorSpec* d = find(p.outputs, s.d);
    if (a == nullptr) {
      fail(field + ".a", input_expected, in_quotes(s.a));
    } else if (b == nullptr) {
      fail(field + ".b", input_expected, in_quotes(s.b));
    } else if (!s.c.empty() && c == nullptr) {
      fail(field + ".c", input_expected + " or \"\" (none)", in_quotes(s.c));
    } else if (d == nullptr) {
      fail(field + ".d", output_expected, in_quotes(s.d));
    }
    for (auto [key, axis] : {std::pair{"m", &s.m}, std::pair{"n", &s.n}, std::pair{"k", &s.k}}) {
      if (!failed() && std::find(p.axes.begin(), p.axes.end(), *axis) == p.axes.end()) {
        fail(field + "." + key, axis_expected, in_quotes(*axis));
      }
    }
    if (failed()) return;
    struct Operand {
      const char* key;
      const TensorSpec* t;
      std::vector<std::string> shape;
      const char* layout;
    };
    const std::vector<Operand> operands = {{"a", a, {s.m, s.k}, "m, k"},
                                           {"b", b, {s.n, s.k}, "n, k"},
                                           {"c", c, {s.m, s.n}, "m, n"},
                                           {"d", d, {s.m, s.n}, "m, n"}};
    for (const auto& o : operands) {
      if (o.t == nullptr) continue;
      if (o.t->shape != o.shape) {
        fail(field + "." + o.key,
             std::string("a tensor of shape [") + o.layout + "] = " + shape_text(o.shape),
             in_quotes(o.t->name) + " of shape " + shape_text(o.t->shape));
        return;
      }
      if (o.t->dtype != a->dtype) {
        fail(field + "." + o.key,
             "a tensor of gemm.a's dtype " + in_quotes(a->dtype) + " (a, b, c and d share one)",
             in_quotes(o.t->name) + " of dtype " + in_quotes(o.t->dtype));
        return;
      }
    }
    if (!d->alias.empty() && d->alias != s.c) {
      fail(field + ".d",
           "an output that aliases no input, or aliases gemm.c (the product is accumulated in "
           "place only over c)",
           in_quotes(d->name) + ", an alias of " + in_quotes(d->alias));
    }
  }

  // A library family's knobs select a cuBLASLt configuration (docs/problem-format-cuda.md).
  void check_library_knobs(const std::string& prefix, const Family& f) {
    const std::vector<std::string> names = {"HEUR",   "TILE",      "STAGES",
                                            "SPLITK", "REDUCTION", "SWIZZLE"};
    auto positive = [](const std::string& v) {
      int64_t n = 0;
      return parse_integer(v, n) && n > 0 && v[0] != '+';
    };
    for (size_t j = 0; j < f.knobs.size() && !failed(); ++j) {
      const Knob& k = f.knobs[j];
      const std::string kp = prefix + ".knobs[" + std::to_string(j) + "]";
      if (std::find(names.begin(), names.end(), k.name) == names.end()) {
        fail(kp + ".name", "a cuBLASLt knob (" + join(names, false) + ")", in_quotes(k.name));
        return;
      }
      std::string expected;
      std::function<bool(const std::string&)> ok;
      if (k.name == "HEUR") {
        expected = "an integer from 0 to 7 (a rank among the heuristic's algorithms)";
        ok = [](const std::string& v) {
          int64_t n = -1;
          return parse_integer(v, n) && n >= 0 && n <= 7;
        };
      } else if (k.name == "TILE") {
        expected = "\"auto\" or a CTA tile MxN such as \"128x256\"";
        ok = [&](const std::string& v) {
          const size_t x = v.find('x');
          return v == "auto" ||
                 (x != std::string::npos && positive(v.substr(0, x)) && positive(v.substr(x + 1)));
        };
      } else if (k.name == "STAGES") {
        expected = "\"auto\" or a positive stage count such as \"4\"";
        ok = [&](const std::string& v) { return v == "auto" || positive(v); };
      } else if (k.name == "SPLITK") {
        expected = "a positive split-K factor (\"1\": none)";
        ok = positive;
      } else if (k.name == "REDUCTION") {
        expected = "one of \"auto\", \"none\", \"inplace\", \"compute\", \"output\"";
        ok = [](const std::string& v) {
          return v == "auto" || v == "none" || v == "inplace" || v == "compute" || v == "output";
        };
      } else {
        expected = "\"0\" or \"1\"";
        ok = [](const std::string& v) { return v == "0" || v == "1"; };
      }
      for (size_t v = 0; v < k.values.size(); ++v) {
        if (!ok(k.values[v])) {
          fail(kp + ".values[" + std::to_string(v) + "]", expected, in_quotes(k.values[v]));
          return;
        }
      }
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
      known_fields(t, prefix,
                   {"name", "source", "library", "description", "tags", "knobs", "launches",
                    "workspace", "gemm"});
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
      for (const char* key : {"library", "launches", "workspace", "gemm"}) {
        cuda_only(t, prefix, key, p);
      }
      if (t.get("library") != nullptr) {
        const std::string expected = "\"cublaslt\" (the only library)";
        string(t, prefix, "library", f.library, false, expected);
        if (!failed() && f.library != "cublaslt") {
          fail(prefix + ".library", expected, in_quotes(f.library));
        }
        // A library family runs no kernels of its own: the library owns the launches.
        for (const char* key : {"source", "launches", "workspace"}) {
          if (const toml::node* n = t.get(key); n != nullptr && !failed()) {
            fail(at(prefix, key),
                 std::string("no '") + key + "' in a library family (library = \"" + f.library +
                     "\")",
                 toml_describe(*n));
          }
        }
      } else {
        std::string source;
        string(t, prefix, "source", source, true,
               "the family's source template, relative to the problem folder");
        file(prefix + ".source", source, f.source);
      }
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
      if (p.backend == "cuda") load_cuda_family(t, prefix, f, p);
      if (failed()) return;
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
  return evaluate_in_scope(expr, axes, NameScope{});
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "f64") return 8;
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "bf16" || dtype == "f16") return 2;
  if (dtype == "fp8_e4m3" || dtype == "fp8_e5m2" || dtype == "i8" || dtype == "u8") return 1;
  return 0;
}

std::map<std::string, int64_t> expression_names(const Workload& w,
                                                const std::map<std::string, std::string>& knobs) {
  std::map<std::string, int64_t> names = w.axes;
  for (const auto& [name, value] : knobs) {
    int64_t v = 0;
    if (parse_integer(value, v)) names.emplace(name, v);  // an axis keeps its own value
  }
  return names;
}

Result<std::vector<ResolvedLaunch>> resolve_launches(
    const std::vector<Launch>& launches, const Workload& w,
    const std::map<std::string, std::string>& knobs) {
  try {
    std::vector<ResolvedLaunch> out;
    LaunchError err;
    if (resolve_launches_impl(launches, expression_names(w, knobs), non_integer_knob_hints(knobs),
                              out, err)) {
      return out;
    }
    return Status::invalid_argument("launches[" + std::to_string(err.launch) + "]." + err.field +
                                    " (kernel '" + launches[err.launch].kernel +
                                    "'): expected " + err.expected + ", got " + err.got +
                                    " for workload '" + w.name + "'");
  } catch (const std::exception& e) {
    return Status::internal("resolving launches for workload '" + w.name + "': " + e.what());
  }
}

Result<std::map<std::string, std::string>> read_family_sources(const Problem& problem) {
  std::map<std::string, std::string> out;
  for (const auto& f : problem.families) {
    if (!f.library.empty() || f.source.empty()) continue;
    std::ifstream in(f.source, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      return Status::io_error(problem.file.string() + ": family '" + f.name +
                              "': cannot read its source " + f.source.string());
    }
    out[f.name] = text.str();
  }
  return out;
}

}  // namespace arc::eval
