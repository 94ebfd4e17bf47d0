// Loading and validating problem.toml (format: docs/problem-format.md). Every error a user can
// cause names the file, the field, what was expected and what was found; nothing here throws.
#include "problem/loader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "base/sha256.h"
#include "problem/expression.h"
#include "problem/launch.h"

namespace arc::problem {

void Loader::load(const toml::table& root, Problem& p) {
  known_fields(root, "",
               {"name", "kernel_type", "backend", "description", "axes", "reference",
                "compute_dtype", "inputs", "outputs", "tolerance", "cost", "workloads",
                "reference_launches", "families", "seed", "params", "constraints", "include_dirs"});
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
  load_params(root, p);
  load_constraints(root, p);
  load_include_dirs(root, p);
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

void Loader::load_axes(const toml::table& root, Problem& p) {
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

void Loader::load_tensors(const toml::table& root, const std::string& key, bool inputs,
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
    string_array(t, prefix, "shape", s.shape, true,
                 "an array of declared axis names (one of " + join(p.axes, false) +
                     ") or expressions over them, e.g. \"2 * cols\"; [] for a scalar");
    std::map<std::string, int64_t> ones;  // parses an expression and checks its names
    for (const auto& a : p.axes) ones[a] = 1;
    for (const auto& prm : p.params) {
      if (prm.integer) ones[prm.name] = 1;
    }
    for (size_t d = 0; !failed() && d < s.shape.size(); ++d) {
      if (std::find(p.axes.begin(), p.axes.end(), s.shape[d]) != p.axes.end()) continue;
      auto v = evaluate_expression(s.shape[d], ones);
      if (!v && v.status().message().find(" by zero") == std::string::npos) {
        fail(prefix + ".shape[" + std::to_string(d) + "]",
             "a declared axis (one of " + join(p.axes, false) +
                 ") or an expression over the axes and integer params",
             in_quotes(s.shape[d]) + " (" + v.status().message() + ")");
      }
    }
    if (inputs) {
      string(t, prefix, "init", s.init, false, "\"uniform\" or \"normal\"");
      if (!failed() && s.init != "uniform" && s.init != "normal") {
        fail(prefix + ".init", "\"uniform\" or \"normal\"", in_quotes(s.init));
      }
      number(t, prefix, "low", s.low, kInputValueRange);
      number(t, prefix, "high", s.high, kInputValueRange);
      if (!failed() && s.init == "uniform" && !(s.low < s.high)) {
        std::ostringstream got;
        got << "low = " << s.low << ", high = " << s.high;
        fail(prefix + ".high", "a number greater than low", got.str());
      }
      if (!failed() && s.init == "normal" && !kStdDevRange.contains(s.high)) {
        fail(prefix + ".high", "a standard deviation (init = \"normal\"): " + kStdDevRange.text(),
             shortest_number_text(s.high));
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

void Loader::check_alias(const std::string& field, const TensorSpec& s,
                         const std::vector<TensorSpec>& earlier_outputs, const Problem& p) {
  if (failed()) return;
  std::vector<std::string> names;
  for (const auto& in : p.inputs) names.push_back(in.name);
  const TensorSpec* input = nullptr;
  for (const auto& in : p.inputs) {
    if (in.name == s.alias) input = &in;
  }
  if (input == nullptr) {
    fail(field,
         "the name of an input (" + join(names, false) + ") whose buffer this output updates",
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

std::string Loader::shape_text(const std::vector<std::string>& shape) {
  std::string out;
  for (const auto& d : shape) out += (out.empty() ? "" : ", ") + d;
  return "[" + out + "]";
}

bool Loader::cuda_only(const toml::table& t, const std::string& prefix, const std::string& key,
                       const Problem& p) {
  if (failed()) return false;
  const toml::node* n = t.get(key);
  if (n == nullptr || p.backend == "cuda") return true;
  return fail(at(prefix, key),
              "no '" + key + "' with backend = " + in_quotes(p.backend) +
                  " (only backend = \"cuda\" has it)",
              toml_describe(*n));
}

void Loader::load_abi_limits(const Problem& p) {
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

void Loader::load_compute_dtype(const toml::table& root, Problem& p) {
  if (!cuda_only(root, "", "compute_dtype", p) || p.backend != "cuda") return;
  const std::vector<std::string> allowed = {"f32", "bf16", "f16", "fp8_e4m3"};
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
    fail("compute_dtype", expected + "; the default, the first input's dtype, is not one of them",
         "nothing (inputs[0].dtype = " + in_quotes(first) + ")");
    return;
  }
  p.compute_dtype = first;
}

void Loader::load_tolerance(const toml::table& root, Problem& p) {
  const toml::table* t = table(root, "", "tolerance", false);
  if (t == nullptr) return;
  known_fields(*t, "tolerance", {"atol", "rtol", "matched_ratio"});
  Tolerance& tol = p.tolerance;
  number(*t, "tolerance", "atol", tol.atol, kAtolRange);
  number(*t, "tolerance", "rtol", tol.rtol, kRtolRange);
  number(*t, "tolerance", "matched_ratio", tol.matched_ratio, kMatchedRatioRange);
}

void Loader::load_cost(const toml::table& root, Problem& p) {
  const toml::table* t = table(root, "", "cost", true);
  if (t == nullptr) return;
  known_fields(*t, "cost", {"flops", "bytes"});
  // Any axis value parses the expression and checks its names; workloads are checked later.
  std::map<std::string, int64_t> ones;
  for (const auto& a : p.axes) ones[a] = 1;
  for (const auto& prm : p.params) {
    if (prm.integer) ones[prm.name] = 1;
  }
  const std::string expected = "an arithmetic expression over the axes (" + join(p.axes, false) +
                               "), e.g. \"2 * " + p.axes.front() + "\"";
  for (auto [key, out] : {std::pair{"flops", &p.cost.flops}, std::pair{"bytes", &p.cost.bytes}}) {
    if (!string(*t, "cost", key, *out, true, expected)) return;
    auto v = evaluate_expression(*out, ones);
    if (!v && v.status().message().find(" by zero") == std::string::npos) {
      fail(std::string("cost.") + key, expected,
           in_quotes(*out) + " (" + v.status().message() + ")");
      return;
    }
  }
}

void Loader::load_workloads(const toml::table& root, Problem& p) {
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
    if (!load_workload_axes(*axes, prefix, p, w)) return;
    if (!check_constraints(p, w, prefix + ".axes")) return;
    // Tensors must be addressable: every dimension a positive integer, and element counts that
    // overflow are a typo, not a workload.
    const auto names = expression_names(w, {});
    for (const auto* list : {&p.inputs, &p.outputs}) {
      for (const auto& ts : *list) {
        int64_t n = 1;
        for (const auto& d : ts.shape) {
          auto v = evaluate_expression(d, names);
          if (!v || !kExtentRange.contains(*v)) {
            fail(prefix + ".axes",
                 "axes for which every dimension of tensor '" + ts.name + "' is " +
                     kExtentRange.text(),
                 in_quotes(d) + (v ? " = " + number_text(*v) : " (" + v.status().message() + ")"));
            return;
          }
          if (__builtin_mul_overflow(n, static_cast<int64_t>(*v), &n) || n > (int64_t{1} << 40)) {
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

bool Loader::load_workload_axes(const toml::table& axes, const std::string& prefix,
                                const Problem& p, Workload& w) {
  const std::string expected =
      kExtentRange.text() +
      ", or an expression over the workload's other axes and the integer params (e.g. \"2 * "
      "cols\")";
  for (const auto& prm : p.params) {
    if (prm.integer) w.constants[prm.name] = static_cast<int64_t>(prm.value);
  }
  std::map<std::string, std::string> pending;  // axis -> its expression, not yet evaluated
  for (const auto& a : p.axes) {
    const std::string field = prefix + ".axes." + a;
    const toml::node* n = axes.get(a);
    if (n == nullptr) return fail(field, expected, "nothing");
    if (n->is_string()) {
      pending[a] = n->as_string()->get();
    } else if (n->is_integer() && kExtentRange.contains(n->as_integer()->get())) {
      w.axes[a] = n->as_integer()->get();
    } else {
      return fail(field, expected, toml_describe(*n));
    }
  }
  // Expressions may name each other in any order; each round evaluates those whose names are
  // known. A round without progress leaves an unknown name or a cycle.
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      auto v = evaluate_expression(it->second, expression_names(w, {}));
      if (!v) {
        ++it;
        continue;
      }
      if (!kExtentRange.contains(*v)) {
        return fail(prefix + ".axes." + it->first, expected,
                    in_quotes(it->second) + " = " + number_text(*v));
      }
      w.axes[it->first] = static_cast<int64_t>(*v);
      it = pending.erase(it);
      progress = true;
    }
    if (!progress) {
      const auto& [axis, text] = *pending.begin();
      auto v = evaluate_expression(text, expression_names(w, {}));
      return fail(prefix + ".axes." + axis, expected + " without cycles",
                  in_quotes(text) + " (" + v.status().message() + ")");
    }
  }
  return true;
}

void Loader::load_families(const toml::table& root, Problem& p) {
  const toml::array* arr = tables(root, "", "families", true);
  if (arr == nullptr) return;
  size_t i = 0;
  for (const toml::node& node : *arr) {
    const toml::table& t = *node.as_table();
    const std::string prefix = "families[" + std::to_string(i++) + "]";
    known_fields(t, prefix,
                 {"name", "source", "library", "description", "tags", "knobs", "launches",
                  "workspace", "gemm", "tensor_maps", "constraints"});
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
    for (const char* key : {"library", "launches", "workspace", "gemm", "tensor_maps"}) {
      cuda_only(t, prefix, key, p);
    }
    if (t.get("library") != nullptr) {
      const std::string expected = "\"cublaslt\" (the only library)";
      string(t, prefix, "library", f.library, false, expected);
      if (!failed() && f.library != "cublaslt") {
        fail(prefix + ".library", expected, in_quotes(f.library));
      }
      // A library family runs no kernels of its own: the library owns the launches.
      for (const char* key : {"source", "launches", "workspace", "tensor_maps", "constraints"}) {
        if (const toml::node* n = t.get(key); n != nullptr && !failed()) {
          fail(
              at(prefix, key),
              std::string("no '") + key + "' in a library family (library = \"" + f.library + "\")",
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
        const std::string kp = prefix + ".knobs[" + std::to_string(j++) + "]";
        load_knob(*kn.as_table(), kp, f);
        if (failed()) return;
        for (const auto& prm : p.params) {
          if (prm.name == f.knobs.back().name) {
            fail(kp + ".name", "a name no parameter has (a parameter is one define for all)",
                 in_quotes(prm.name));
            return;
          }
        }
      }
    }
    load_family_constraints(t, prefix, f, p);
    if (p.backend == "cuda") load_cuda_family(t, prefix, f, p);
    if (failed()) return;
    p.families.push_back(std::move(f));
  }
}

void Loader::load_knob(const toml::table& t, const std::string& prefix, Family& f) {
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

void Loader::load_seed(const toml::table& root, Problem& p) {
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
  if (std::string why = f->constraint_violation(f->knob_values(v), p.integer_params());
      !why.empty()) {
    fail("seed.knobs", "knob values the family's constraints allow", why);
    return;
  }
  p.seed = Candidate{};
  p.seed.base = std::move(v);
}

namespace {

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
  p.files["problem.toml"] = *bytes;
  for (const auto& [rel, abs] : loader.referenced()) {
    auto b = read_bytes(abs, (p.dir / rel).lexically_normal().string());
    if (!b) return b.status();
    append_part(material, rel, *b);
    p.files[abs.lexically_relative(p.dir).generic_string()] = std::move(*b);
  }
  p.hash = arc::sha256_hex(material);
  return p;
}

}  // namespace

Result<Problem> load_problem(const std::filesystem::path& path) {
  try {
    return load_problem_impl(path);
  } catch (const std::exception& e) {
    return Status::internal(path.string() + ": loading the problem failed: " + e.what());
  }
}

}  // namespace arc::problem
