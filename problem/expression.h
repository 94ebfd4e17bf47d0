#pragma once
// Arithmetic expressions over named integers (axes, integer knobs, parameters):
// + - * / %, comparisons, && and || (1 or 0), parentheses, numbers, names and
// cdiv(a, b) = ceil(a / b), min(a, b), max(a, b).
// Errors are values; nothing here throws.
#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"

namespace arc::problem {

struct Workload;

// What the names of an expression stand for, for messages: the cost model names axes; launch
// expressions name axes and numeric knobs. `hints` explains why a name that looks usable is not
// (a knob whose value is not an integer).
struct NameScope {
  const char* noun = "axis";    // "unknown <noun> 'x'"
  const char* plural = "axes";  // "(<plural>: a, b)"
  const std::map<std::string, std::string>* hints = nullptr;
};

// Evaluates `expr` with `names`; an unknown name is reported in `scope`'s words.
Result<double> evaluate_in_scope(const std::string& expr,
                                 const std::map<std::string, int64_t>& names, NameScope scope);

// Evaluates an arithmetic expression over axis names.
Result<double> evaluate_expression(const std::string& expr,
                                   const std::map<std::string, int64_t>& axes);

// The names an expression may use for one variant: the workload's axes plus the variant's knobs
// whose values are integers. A knob whose value is not an integer is left out, so an expression
// naming it fails with "unknown name".
std::map<std::string, int64_t> expression_names(const Workload& w,
                                                const std::map<std::string, std::string>& knobs);

// An integer written as text ("256", "-3"); a knob with such a value can appear in expressions.
bool parse_integer(const std::string& s, int64_t& out);

// A double as up to 15 significant digits, for messages.
std::string number_text(double v);

}  // namespace arc::problem
