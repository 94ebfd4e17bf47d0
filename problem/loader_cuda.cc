// Loader: the CUDA parts of problem.toml (docs/problem-format-cuda.md): launches checked at every
// workload and knob extreme, the reference's launches, library families and their GEMM.
#include <algorithm>
#include <cmath>
#include <functional>

#include "problem/expression.h"
#include "problem/launch.h"
#include "problem/loader.h"
#include "problem/tensor_map.h"

namespace arc::problem {

bool Loader::expression_text(const toml::node& n, const std::string& field,
                             const std::string& expected, std::string& out) {
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

void Loader::launch_dims(const toml::table& t, const std::string& prefix, const std::string& key,
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

void Loader::load_launches(const toml::table& t, const std::string& prefix, const std::string& key,
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
                      "a byte count: an expression (a string or an integer), e.g. \"0\"", l.shared);
    }
    if (failed()) return;
    out.push_back(std::move(l));
  }
}

Loader::ExpressionContext Loader::expression_context(const Problem& p, const Family* f) {
  ExpressionContext c;
  for (const auto& a : p.axes) c.ones[a] = 1;
  if (f != nullptr) c.ones[kSmCountName] = 1;
  for (const auto& prm : p.params) {
    if (prm.integer) c.ones[prm.name] = 1;
  }
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
               (f != nullptr ? ", the family's integer knobs (" + join(numeric, false) +
                                   ") and the device's sm_count"
                             : std::string()) +
               " with + - * /, parentheses, cdiv(a, b), min(a, b) and max(a, b)";
  return c;
}

bool Loader::check_expression(const std::string& expr, const std::string& field,
                              const ExpressionContext& c) {
  if (failed()) return false;
  auto v = evaluate_in_scope(expr, c.ones, NameScope{"name", "names", &c.hints});
  // At 1 a divisor may vanish; the real values are checked per workload.
  if (!v && v.status().message().find(" by zero") == std::string::npos) {
    return fail(field, c.expected, in_quotes(expr) + " (" + v.status().message() + ")");
  }
  return true;
}

bool Loader::check_launch_expressions(const std::vector<Launch>& launches, const std::string& field,
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

std::string Loader::knobs_text(const std::map<std::string, std::string>& knobs) {
  std::string out;
  for (const auto& [k, v] : knobs) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out;
}

void Loader::check_resolution(const std::vector<Launch>& launches, const std::string& field,
                              const std::string* workspace, const std::string& workspace_field,
                              const std::vector<std::map<std::string, std::string>>& settings,
                              const Problem& p, const Family* f) {
  const auto device = check_device_names();
  for (const auto& w : p.workloads) {
    for (const auto& knobs : settings) {
      if (failed()) return;
      auto names = expression_names(w, knobs);
      if (f != nullptr) names.insert(device.begin(), device.end());
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
      if (f != nullptr && !f->tensor_maps.empty()) {
        auto maps = resolve_tensor_maps(p, *f, w, knobs, device);
        if (!maps) {
          // "tensor_maps[i].FIELD: expected ..., got ... for workload 'w'"
          const std::string& m = maps.status().message();
          const size_t colon = m.find(": expected ");
          const std::string mapfield = field.substr(0, field.rfind('.')) + "." + m.substr(0, colon);
          fail_raw(mapfield,
                   m.substr(colon + 2) + (knobs.empty() ? "" : " at knobs " + knobs_text(knobs)));
          return;
        }
      }
      if (workspace == nullptr) continue;
      const std::string expected = "a number of bytes: " + kWorkspaceBytesRange.text();
      int64_t bytes = 0;
      if (!integer_value(*workspace, names, hints, "workspace", expected, bytes, err)) {
        fail(workspace_field, err.expected, err.got + where);
        return;
      }
      if (!kWorkspaceBytesRange.contains(bytes)) {
        fail(workspace_field, expected,
             in_quotes(*workspace) + " = " + std::to_string(bytes) + where);
        return;
      }
    }
  }
}

std::vector<std::map<std::string, std::string>> Loader::knob_settings(const Family& f,
                                                                      const Problem& p) {
  std::vector<std::map<std::string, std::string>> out{f.default_variant().knobs};
  const auto params = p.integer_params();
  for (const auto& k : f.knobs) {
    for (const auto* v : {&k.values.front(), &k.values.back()}) {
      auto s = out.front();
      s[k.name] = *v;
      if (!f.constraint_violation(s, params).empty()) continue;
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    }
  }
  return out;
}

void Loader::load_family_constraints(const toml::table& t, const std::string& prefix, Family& f,
                                     const Problem& p) {
  if (failed()) return;
  const std::string expected =
      "an array of expressions over the family's integer knobs and the integer params, each "
      "non-zero where the knob values are allowed, e.g. [\"BLOCK_M * BLOCK_N <= 32768\"]";
  string_array(t, prefix, "constraints", f.constraints, false, expected);
  if (failed()) return;
  std::map<std::string, int64_t> ones;
  for (const auto& k : f.knobs) {
    bool numeric = true;
    for (const auto& v : k.values) {
      int64_t n = 0;
      numeric = numeric && parse_integer(v, n);
    }
    if (numeric) ones[k.name] = 1;
  }
  for (const auto& [name, v] : p.integer_params()) ones[name] = v;
  const auto params = p.integer_params();
  for (size_t j = 0; j < f.constraints.size(); ++j) {
    const std::string field = prefix + ".constraints[" + std::to_string(j) + "]";
    auto v = evaluate_in_scope(f.constraints[j], ones, NameScope{"knob", "knobs"});
    if (!v && v.status().message().find(" by zero") == std::string::npos) {
      fail(field, expected, in_quotes(f.constraints[j]) + " (" + v.status().message() + ")");
      return;
    }
  }
  if (std::string why = f.constraint_violation(f.default_variant().knobs, params); !why.empty()) {
    fail(prefix + ".constraints", "constraints the default knob values satisfy", why);
  }
}

void Loader::load_tensor_maps(const toml::table& t, const std::string& prefix, Family& f,
                              const Problem& p) {
  if (t.get("tensor_maps") == nullptr || failed()) return;
  const toml::array* arr = tables(t, prefix, "tensor_maps", false);
  if (arr == nullptr) return;
  if (arr->size() > kMaxTensorMaps) {
    fail(prefix + ".tensor_maps",
         "at most " + std::to_string(kMaxTensorMaps) + " maps (cuda/include/arc_cuda.h)",
         std::to_string(arr->size()));
    return;
  }
  std::vector<std::string> names;
  for (const auto& s : p.inputs) names.push_back(s.name);
  for (const auto& s : p.outputs) names.push_back(s.name);
  const ExpressionContext c = expression_context(p, &f);
  size_t i = 0;
  for (const toml::node& node : *arr) {
    const toml::table& mt = *node.as_table();
    const std::string mp = prefix + ".tensor_maps[" + std::to_string(i++) + "]";
    known_fields(mt, mp,
                 {"tensor", "box", "swizzle", "element_strides", "l2_promotion", "oob_fill"});
    TensorMapSpec m;
    const std::string tensor_expected =
        "the name of an input or output (" + join(names, false) + ")";
    string(mt, mp, "tensor", m.tensor, true, tensor_expected);
    if (failed()) return;
    if (std::find(names.begin(), names.end(), m.tensor) == names.end()) {
      fail(mp + ".tensor", tensor_expected, in_quotes(m.tensor));
      return;
    }
    auto expressions = [&](const char* key, std::vector<std::string>& out, bool required) {
      const std::string field = mp + "." + key;
      const std::string expected =
          "an array of expressions, one per dimension of the tensor in its shape's order";
      const toml::node* n = mt.get(key);
      if (n == nullptr) {
        if (required) fail(field, expected, "nothing");
        return;
      }
      if (!n->is_array()) {
        fail(field, expected, toml_describe(*n));
        return;
      }
      const toml::array& a = *n->as_array();
      for (size_t d = 0; d < a.size() && !failed(); ++d) {
        std::string e;
        if (expression_text(*a.get(d), field + "[" + std::to_string(d) + "]",
                            "an expression (a string or an integer)", e)) {
          check_expression(e, field + "[" + std::to_string(d) + "]", c);
          out.push_back(std::move(e));
        }
      }
    };
    expressions("box", m.box, true);
    expressions("element_strides", m.element_strides, false);
    for (auto [key, out] :
         {std::pair{"swizzle", &m.swizzle}, std::pair{"l2_promotion", &m.l2_promotion}}) {
      if (const toml::node* n = mt.get(key); n != nullptr && !failed()) {
        if (expression_text(*n, mp + "." + key,
                            "a byte count: an expression (a string or an integer)", *out)) {
          check_expression(*out, mp + "." + key, c);
        }
      }
    }
    string(mt, mp, "oob_fill", m.oob_fill, false, "\"zero\" or \"nan\"");
    if (!failed() && m.oob_fill != "zero" && m.oob_fill != "nan") {
      fail(mp + ".oob_fill", "\"zero\" or \"nan\"", in_quotes(m.oob_fill));
    }
    if (failed()) return;
    f.tensor_maps.push_back(std::move(m));
  }
}

void Loader::load_reference_launches(const toml::table& root, Problem& p) {
  if (!cuda_only(root, "", "reference_launches", p) || p.backend != "cuda") return;
  load_launches(root, "", "reference_launches", p.reference_launches);
  if (failed()) return;
  if (!check_launch_expressions(p.reference_launches, "reference_launches",
                                expression_context(p, nullptr))) {
    return;
  }
  check_resolution(p.reference_launches, "reference_launches", nullptr, "", {{}}, p);
}

void Loader::load_cuda_family(const toml::table& t, const std::string& prefix, Family& f,
                              const Problem& p) {
  if (failed()) return;
  if (!f.library.empty()) {
    load_gemm(t, prefix, f, p);
    check_library_knobs(prefix, f, p);
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
  load_tensor_maps(t, prefix, f, p);
  if (failed()) return;
  check_resolution(f.launches, prefix + ".launches", &f.workspace, prefix + ".workspace",
                   knob_settings(f, p), p, &f);
}

void Loader::load_gemm(const toml::table& t, const std::string& prefix, Family& f,
                       const Problem& p) {
  const std::string field = prefix + ".gemm";
  const std::string table_expected =
      "a table gemm = { a, b, c, d, m, n, k } (the product the library family computes; fp8 "
      "operands may add a_scale and b_scale)";
  const toml::node* n = t.get("gemm");
  if (n == nullptr || !n->is_table()) {
    fail(field, table_expected, n == nullptr ? "nothing" : toml_describe(*n));
    return;
  }
  const toml::table& g = *n->as_table();
  known_fields(g, field, {"a", "b", "c", "d", "m", "n", "k", "a_scale", "b_scale"});
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
  std::vector<std::string> scalar_names;
  for (const auto& t : p.inputs) {
    if (t.dtype == "f32" && t.shape.empty()) scalar_names.push_back(t.name);
  }
  const std::string scale_expected =
      "the name of a scalar f32 input (shape []) that multiplies the product (scalar f32 inputs: " +
      join(scalar_names, false) + ")";
  string(g, field, "a_scale", s.a_scale, false, scale_expected);
  string(g, field, "b_scale", s.b_scale, false, scale_expected);
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
  // a and b share one dtype; c and d share one: a's, or with fp8 operands a wider output.
  const bool fp8 = a->dtype == "fp8_e4m3";
  const std::vector<std::string> operand_dtypes = {"bf16", "f16", "f32", "fp8_e4m3"};
  if (std::find(operand_dtypes.begin(), operand_dtypes.end(), a->dtype) == operand_dtypes.end()) {
    fail(field + ".a",
         "a tensor of dtype " + join(operand_dtypes, true) + " (what the cuBLASLt family runs)",
         in_quotes(a->name) + " of dtype " + in_quotes(a->dtype));
    return;
  }
  const std::vector<std::string> fp8_outputs = {"bf16", "f16", "f32"};
  for (const auto& o : operands) {
    if (o.t == nullptr) continue;
    if (o.t->shape != o.shape) {
      fail(field + "." + o.key,
           std::string("a tensor of shape [") + o.layout + "] = " + shape_text(o.shape),
           in_quotes(o.t->name) + " of shape " + shape_text(o.t->shape));
      return;
    }
    const bool operand = o.t == a || o.t == b;
    std::string expected;
    if (!fp8) {
      if (o.t->dtype != a->dtype) {
        expected =
            "a tensor of gemm.a's dtype " + in_quotes(a->dtype) + " (a, b, c and d share one)";
      }
    } else if (operand) {
      if (o.t->dtype != a->dtype) {
        expected = "a tensor of gemm.a's dtype " + in_quotes(a->dtype) + " (a and b share one)";
      }
    } else if (std::find(fp8_outputs.begin(), fp8_outputs.end(), o.t->dtype) == fp8_outputs.end()) {
      expected = "a tensor of dtype " + join(fp8_outputs, true) + " (an fp8 product's output)";
    } else if (o.t->dtype != d->dtype) {
      expected = "a tensor of gemm.d's dtype " + in_quotes(d->dtype) + " (c and d share one)";
    }
    if (!expected.empty()) {
      fail(field + "." + o.key, expected,
           in_quotes(o.t->name) + " of dtype " + in_quotes(o.t->dtype));
      return;
    }
  }
  for (auto [key, name] : {std::pair{"a_scale", &s.a_scale}, std::pair{"b_scale", &s.b_scale}}) {
    if (name->empty()) continue;
    const std::string sf = field + "." + key;
    if (!fp8) {
      fail(sf,
           "no '" + std::string(key) +
               "' unless gemm.a is \"fp8_e4m3\" (scales dequantize fp8 "
               "operands)",
           in_quotes(*name) + " with gemm.a " + in_quotes(a->name) + " of dtype " +
               in_quotes(a->dtype));
      return;
    }
    const TensorSpec* t = find(p.inputs, *name);
    if (t == nullptr) {
      fail(sf, scale_expected, in_quotes(*name));
      return;
    }
    if (t->dtype != "f32" || !t->shape.empty()) {
      fail(sf, scale_expected,
           in_quotes(t->name) + " of dtype " + in_quotes(t->dtype) + " and shape " +
               shape_text(t->shape));
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

void Loader::check_library_knobs(const std::string& prefix, const Family& f, const Problem& p) {
  const std::vector<std::string> names = {"HEUR",      "TILE",    "STAGES",    "SPLITK",
                                          "REDUCTION", "SWIZZLE", "FAST_ACCUM"};
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
    } else if (k.name == "FAST_ACCUM") {
      const std::string a_dtype = [&] {
        for (const auto& t : p.inputs) {
          if (t.name == f.gemm.a) return t.dtype;
        }
        return std::string();
      }();
      if (a_dtype != "fp8_e4m3") {
        fail(kp + ".name",
             "a cuBLASLt knob of this family (FAST_ACCUM needs gemm.a of dtype \"fp8_e4m3\")",
             in_quotes(k.name) + " with gemm.a of dtype " + in_quotes(a_dtype));
        return;
      }
      expected = "\"0\" or \"1\" (1: fp8 fast accumulation)";
      ok = [](const std::string& v) { return v == "0" || v == "1"; };
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

}  // namespace arc::problem
