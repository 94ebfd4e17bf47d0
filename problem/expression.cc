// The expression language of problem.toml (docs/problem-format.md): a recursive-descent parser
// over numbers, names and the functions cdiv, min and max. Nothing here throws to a caller.
#include "problem/expression.h"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string_view>
#include <system_error>

#include "base/toml_text.h"
#include "problem/problem.h"

namespace arc::problem {
namespace {

// Expressions: recursive descent over
//   expr    := conj ('||' conj)*
//   conj    := compare ('&&' compare)*
//   compare := sum [('==' | '!=' | '<' | '<=' | '>' | '>=') sum]
//   sum     := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := number | name | name '(' [expr (',' expr)*] ')' | '(' expr ')'
// A name followed by '(' calls a function: cdiv(a, b) = ceil(a / b), min(a, b), max(a, b).
// A comparison, '&&' or '||' is 1 when true and 0 when false (problem.toml's constraints); a % b is
// the remainder of the division, with the sign of a (fmod).

constexpr int kMaxExpressionDepth = 200;  // bounds the recursion on "((((..."

struct Token {
  enum class Kind { kEnd, kNumber, kName, kOp } kind = Kind::kEnd;
  std::string text;
  double number = 0;
  size_t pos = 0;  // 1-based column, for messages
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
    } else if (const size_t n = operator_length(at_); n > 0) {
      t.kind = Token::Kind::kOp;
      t.text = text_.substr(at_, n);
      at_ += n;
    } else {
      fail("unexpected character '" + std::string(1, c) + "' at position " + std::to_string(t.pos) +
           " (expected numbers, " + scope_.noun +
           " names, + - * / %, comparisons, &&, ||, parentheses and the functions cdiv, min, max)");
      t = Token{};
    }
    tok_ = t;
  }

  // The length of the operator starting at `at`, 0 when there is none.
  size_t operator_length(size_t at) const {
    static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view op : kTwo) {
      if (text_.compare(at, op.size(), op) == 0) return op.size();
    }
    return std::string_view("+-*/%(),<>").find(text_[at]) != std::string_view::npos ? 1 : 0;
  }

  bool is_op(char op) const {
    return tok_.kind == Token::Kind::kOp && tok_.text.size() == 1 && tok_.text[0] == op;
  }
  bool is_op(std::string_view op) const { return tok_.kind == Token::Kind::kOp && tok_.text == op; }

  double expr(int depth) {
    double v = conj(depth);
    while (error_.empty() && is_op(std::string_view("||"))) {
      advance();
      const double r = conj(depth);
      v = (v != 0 || r != 0) ? 1 : 0;
    }
    return v;
  }

  double conj(int depth) {
    double v = compare(depth);
    while (error_.empty() && is_op(std::string_view("&&"))) {
      advance();
      const double r = compare(depth);
      v = (v != 0 && r != 0) ? 1 : 0;
    }
    return v;
  }

  double compare(int depth) {
    const double v = sum(depth);
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!error_.empty() || !is_op(op)) continue;
      advance();
      const double r = sum(depth);
      if (op == "==") return v == r ? 1 : 0;
      if (op == "!=") return v != r ? 1 : 0;
      if (op == "<=") return v <= r ? 1 : 0;
      if (op == ">=") return v >= r ? 1 : 0;
      if (op == "<") return v < r ? 1 : 0;
      return v > r ? 1 : 0;
    }
    return v;
  }

  double sum(int depth) {
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
    while (error_.empty() && (is_op('*') || is_op('/') || is_op('%'))) {
      const char kind = tok_.text[0];
      const Token op = tok_;
      advance();
      const double r = unary(depth);
      if (!error_.empty()) return 0;
      if (kind != '*' && r == 0) {
        fail((kind == '/' ? "division by zero at position " : "modulo by zero at position ") +
             std::to_string(op.pos));
        return 0;
      }
      v = kind == '*' ? v * r : kind == '/' ? v / r : std::fmod(v, r);
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
    fail(std::string("expected a number, ") + (scope_.noun[0] == 'a' ? "an " : "a ") + scope_.noun +
         " name or '(', got " + describe(tok_));
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
      fail("expected ',' or ')' in the call of '" + fn.text + "'" + at + ", got " + describe(tok_));
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

}  // namespace

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

Result<double> evaluate_expression(const std::string& expr,
                                   const std::map<std::string, int64_t>& axes) {
  return evaluate_in_scope(expr, axes, NameScope{});
}

std::map<std::string, int64_t> expression_names(const Workload& w,
                                                const std::map<std::string, std::string>& knobs) {
  std::map<std::string, int64_t> names = w.axes;
  names.insert(w.constants.begin(), w.constants.end());
  for (const auto& [name, value] : knobs) {
    int64_t v = 0;
    if (parse_integer(value, v)) names.emplace(name, v);  // an axis keeps its own value
  }
  return names;
}

}  // namespace arc::problem
