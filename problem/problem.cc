// The problem model's accessors (problem/problem.h).
#include "problem/problem.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "problem/expression.h"

namespace arc::problem {

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

std::map<std::string, std::string> Family::knob_values(const Variant& v) const {
  std::map<std::string, std::string> out = default_variant().knobs;
  for (const auto& [k, val] : v.knobs) out[k] = val;
  return out;
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
  return evaluate_expression(cost.flops, expression_names(w, {}));
}

Result<double> Problem::bytes(const Workload& w) const {
  return evaluate_expression(cost.bytes, expression_names(w, {}));
}

int64_t Problem::elements(const TensorSpec& t, const Workload& w) const {
  const std::map<std::string, int64_t> names = expression_names(w, {});
  int64_t n = 1;
  for (const auto& d : t.shape) {
    int64_t dim = 0;
    if (auto it = names.find(d); it != names.end()) {
      dim = it->second;
    } else {
      // Loading checks that every shape entry evaluates to a positive integer for every
      // workload; a hand-built problem may not, and then the tensor has no elements.
      auto v = evaluate_expression(d, names);
      if (!v || *v != std::floor(*v) || *v < 1 || *v > 9.2e18) return 0;
      dim = static_cast<int64_t>(*v);
    }
    if (dim <= 0 || __builtin_mul_overflow(n, dim, &n)) return 0;
  }
  return n;
}

std::map<std::string, std::string> Problem::param_defines() const {
  std::map<std::string, std::string> out;
  for (const auto& prm : params) out[prm.name] = prm.text;
  return out;
}

std::string Family::constraint_violation(const std::map<std::string, std::string>& knob_text,
                                         const std::map<std::string, int64_t>& params) const {
  if (constraints.empty()) return "";
  std::map<std::string, int64_t> names = params;
  for (const auto& [k, text] : knob_text) {
    int64_t v = 0;
    if (parse_integer(text, v)) names[k] = v;
  }
  for (const auto& c : constraints) {
    auto v = evaluate_in_scope(c, names, NameScope{"knob", "knobs"});
    if (!v || *v == 0) {
      std::string out = "family " + name + "'s constraint \"" + c + "\" ";
      out += v ? "does not hold" : "cannot be evaluated (" + v.status().message() + ")";
      out += " at ";
      bool first = true;
      for (const auto& [k, text] : knob_text) {
        if (!first) out += ", ";
        first = false;
        out += k;
        out += '=';
        out += text;
      }
      return out;
    }
  }
  return "";
}

std::map<std::string, int64_t> Problem::integer_params() const {
  std::map<std::string, int64_t> out;
  for (const auto& prm : params) {
    if (prm.integer) out[prm.name] = static_cast<int64_t>(prm.value);
  }
  return out;
}

std::string Problem::constraint_violation(const Candidate& c) const {
  const auto prm = integer_params();
  auto check = [&](const Variant& v) -> std::string {
    if (!v.source.empty() || v.family.empty()) return "";
    const Family* f = family(v.family);
    if (f == nullptr) return "problem " + name + " has no family '" + v.family + "'";
    return f->constraint_violation(f->knob_values(v), prm);
  };
  if (std::string why = check(c.base); !why.empty()) return why;
  for (const auto& [w, v] : c.gates) {
    if (std::string why = check(v); !why.empty()) {
      std::string out = "the variant for workload " + w;
      out += ": ";
      out += why;
      return out;
    }
  }
  return "";
}

std::map<std::string, std::string> Problem::defines_for(const Variant& v) const {
  std::map<std::string, std::string> out = v.knobs;
  for (const auto& prm : params) out[prm.name] = prm.text;
  return out;
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "f64") return 8;
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "bf16" || dtype == "f16") return 2;
  if (dtype == "fp8_e4m3" || dtype == "fp8_e5m2" || dtype == "i8" || dtype == "u8") return 1;
  return 0;
}

int tensor_index(const std::vector<TensorSpec>& ts, const std::string& name) {
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name == name) return static_cast<int>(i);
  }
  return -1;
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

}  // namespace arc::problem
