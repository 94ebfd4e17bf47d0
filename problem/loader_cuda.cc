// Loader: the CUDA parts of problem.toml (docs/problem-format-cuda.md): launches checked at every
// workload and knob extreme, the reference's launches, library families and their GEMM.
#include <algorithm>
#include <cmath>
#include <functional>

#include "problem/expression.h"
#include "problem/launch.h"
#include "problem/loader.h"

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
               (f != nullptr ? " and the family's integer knobs (" + join(numeric, false) + ")"
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

std::vector<std::map<std::string, std::string>> Loader::knob_settings(const Family& f) {
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

void Loader::load_gemm(const toml::table& t, const std::string& prefix, Family& f,
                       const Problem& p) {
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

void Loader::check_library_knobs(const std::string& prefix, const Family& f) {
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

}  // namespace arc::problem
