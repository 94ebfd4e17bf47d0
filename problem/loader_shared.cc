// Loader: what a problem shares with all of its sources and workloads (docs/problem-format.md,
// "Parameters, constraints and shared sources"): [params], constraints and include_dirs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "problem/expression.h"
#include "problem/loader.h"

namespace arc::problem {
namespace {

// Limits on shared sources: a typo (include_dirs = [".."]) must not read a whole tree.
constexpr size_t kMaxHeaders = 256;
constexpr uintmax_t kMaxHeaderBytes = 1u << 20;

// A double as a C floating literal that reads back to the same value: "1e-05", "2.0",
// "(-0.5)" (parenthesized so that `x-eps` never becomes `x--0.5`).
std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // The shortest text that reads back exactly.
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

}  // namespace

void Loader::load_params(const toml::table& root, Problem& p) {
  const toml::table* t = table(root, "", "params", false);
  if (t == nullptr) return;
  for (const auto& [k, v] : *t) {
    Param prm;
    prm.name = std::string(k.str());
    const std::string field = "params." + prm.name;
    if (!is_c_identifier(prm.name)) {
      fail_raw(field, "expected a parameter name that is a C identifier (it becomes -D" + prm.name +
                          "=<value>)");
      return;
    }
    if (std::find(p.axes.begin(), p.axes.end(), prm.name) != p.axes.end()) {
      fail_raw(field, "expected a name no axis has (axes: " + join(p.axes, false) + ")");
      return;
    }
    if (v.is_integer()) {
      int64_t i = 0;
      if (!integer_in(v, field, kIntegerParamRange, i)) return;
      prm.integer = true;
      prm.value = static_cast<double>(i);
      prm.text = i < 0 ? "(" + std::to_string(i) + ")" : std::to_string(i);
    } else if (v.is_floating_point() && std::isfinite(v.as_floating_point()->get())) {
      prm.value = v.as_floating_point()->get();
      prm.text = float_literal(prm.value);
    } else if (v.is_boolean()) {
      prm.integer = true;
      prm.value = v.as_boolean()->get() ? 1 : 0;
      prm.text = v.as_boolean()->get() ? "1" : "0";
    } else {
      fail(field, "a finite number (an integer, a float or a boolean)", toml_describe(v));
      return;
    }
    p.params.push_back(std::move(prm));
  }
}

void Loader::load_constraints(const toml::table& root, Problem& p) {
  const std::string expected =
      "an array of expressions over the axes and integer params that must hold for every "
      "workload, e.g. [\"cols % 8 == 0\"]";
  if (!string_array(root, "", "constraints", p.constraints, false, expected)) return;
  std::map<std::string, int64_t> ones;
  for (const auto& a : p.axes) ones[a] = 1;
  for (const auto& prm : p.params) {
    if (prm.integer) ones[prm.name] = 1;
  }
  for (size_t i = 0; i < p.constraints.size(); ++i) {
    auto v = evaluate_expression(p.constraints[i], ones);
    if (!v && v.status().message().find(" by zero") == std::string::npos) {
      fail("constraints[" + std::to_string(i) + "]",
           "an expression over the axes (" + join(p.axes, false) + ") and integer params",
           in_quotes(p.constraints[i]) + " (" + v.status().message() + ")");
      return;
    }
  }
}

bool Loader::check_constraints(const Problem& p, const Workload& w, const std::string& prefix) {
  const auto names = expression_names(w, {});
  for (size_t i = 0; i < p.constraints.size(); ++i) {
    auto v = evaluate_expression(p.constraints[i], names);
    if (v && *v != 0) continue;
    std::string axes;
    for (const auto& a : p.axes)
      axes += (axes.empty() ? "" : ", ") + a + " = " + std::to_string(w.axes.at(a));
    return fail(prefix,
                "axes for which every constraint holds; constraints[" + std::to_string(i) + "] " +
                    in_quotes(p.constraints[i]) + " does not",
                axes + (v ? "" : " (" + v.status().message() + ")"));
  }
  return true;
}

void Loader::load_include_dirs(const toml::table& root, Problem& p) {
  std::vector<std::string> dirs;
  if (!string_array(root, "", "include_dirs", dirs, false,
                    "an array of folders relative to the problem folder, e.g. [\"../common\"]")) {
    return;
  }
  std::map<std::string, std::string> origin;  // include name -> the include_dirs entry
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string field = "include_dirs[" + std::to_string(i) + "]";
    const fs::path dir = (dir_ / dirs[i]).lexically_normal();
    std::error_code ec;
    if (dirs[i].empty() || !fs::is_directory(dir, ec)) {
      fail(field, "an existing folder relative to " + dir_.string(),
           in_quotes(dirs[i]) + " (" + dir.string() + " is not a folder)");
      return;
    }
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const std::string leaf = it->path().filename().string();
      if (!leaf.empty() && leaf[0] == '.') {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec)) files.push_back(it->path());
      if (files.size() + p.headers.size() > kMaxHeaders) {
        fail(field, "a folder of at most " + std::to_string(kMaxHeaders) + " shared sources",
             in_quotes(dirs[i]) + " (more files)");
        return;
      }
    }
    if (ec) {
      fail(field, "a readable folder", in_quotes(dirs[i]) + " (" + ec.message() + ")");
      return;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string name = f.lexically_relative(dir).generic_string();
      if (name == "arc_cuda.h" || name == "host_abi.h") {
        fail(field, "folders without a file named like KernelArc's own ABI header",
             in_quotes(dirs[i]) + " holds " + name);
        return;
      }
      if (auto o = origin.find(name); o != origin.end()) {
        fail(field, "include folders whose files have distinct names",
             in_quotes(dirs[i]) + " and " + in_quotes(o->second) + " both hold " + name);
        return;
      }
      if (fs::file_size(f, ec) > kMaxHeaderBytes || ec) {
        fail(field, "shared sources of at most 1 MiB each", (dir / name).string());
        return;
      }
      std::ifstream in(f, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in) {
        fail(field, "readable files", (dir / name).string() + " cannot be read");
        return;
      }
      origin[name] = dirs[i];
      p.headers[name] = text.str();
      // Counted in the problem hash under the path as written plus the name inside the folder.
      referenced_["include_dirs/" + fs::path(dirs[i]).lexically_normal().generic_string() + "/" +
                  name] = f;
    }
  }
}

}  // namespace arc::problem
