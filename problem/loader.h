#pragma once
// The problem.toml reader (internal to the problem module): one Loader per file; the first error
// wins and stops everything after it. Its methods live in loader_fields.cc (TOML fields),
// loader.cc (the problem, tensors, workloads, families) and loader_cuda.cc (launches, the GEMM
// of a library family).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/toml_text.h"
#include "problem/problem.h"

namespace arc::problem {

namespace fs = std::filesystem;

// problem.toml

inline bool is_c_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
    if (!ok || c > 127) return false;
  }
  return true;
}

// Names of problems, workloads and families appear in variant keys, gates and file names.
inline bool is_plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!(c < 128 && (std::isalnum(c) || c == '_' || c == '-' || c == '.'))) return false;
  }
  return true;
}

// A knob value becomes the right-hand side of -DNAME=VALUE.
inline bool is_define_value(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

inline std::string join(const std::vector<std::string>& items, bool quote) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + (quote ? in_quotes(s) : s);
  return out.empty() ? "none" : out;
}

// The documented ranges of problem.toml's numeric fields (docs/problem-format.md).
// An input's `low` and `high` (for init = "normal": the mean and the standard deviation).
inline constexpr NumberRange kInputValueRange{-1e30, 1e30};
inline constexpr NumberRange kStdDevRange{0, 1e30, true, false};
inline constexpr NumberRange kAtolRange{0, 1e6};
inline constexpr NumberRange kRtolRange{0, 0.5};
inline constexpr NumberRange kMatchedRatioRange{0, 1, true, false};
// A workload's axis values and every tensor dimension they give (written or evaluated).
inline constexpr IntegerRange kExtentRange{1, int64_t{1} << 40};
// An integer parameter: exact as the double that expressions compute with.
inline constexpr IntegerRange kIntegerParamRange{-(int64_t{1} << 53), uint64_t{1} << 53};

inline const std::vector<std::string> kCudaDtypes = {"f32",      "f64", "f16", "bf16", "fp8_e4m3",
                                                     "fp8_e5m2", "i32", "i8",  "u8"};

class Loader : public FieldErrors {
 public:
  Loader(std::string shown, fs::path dir) : FieldErrors(std::move(shown)), dir_(std::move(dir)) {}

  // Every file the problem references, by the path written in problem.toml.
  const std::map<std::string, fs::path>& referenced() const { return referenced_; }

  static std::string at(const std::string& prefix, const std::string& key);
  bool known_fields(const toml::table& t, const std::string& prefix,
                    const std::vector<std::string>& known);
  // A string field; `found` says whether it was there.
  bool string(const toml::table& t, const std::string& prefix, const std::string& key,
              std::string& out, bool required, const std::string& expected);
  // A number field within its documented range (docs/problem-format.md); left as is when absent.
  bool number(const toml::table& t, const std::string& prefix, const std::string& key, double& out,
              const NumberRange& range);
  bool string_array(const toml::table& t, const std::string& prefix, const std::string& key,
                    std::vector<std::string>& out, bool required, const std::string& expected);
  // Knob values may be written as strings or integers; both become define text.
  bool define_text(const toml::node& n, const std::string& field, std::string& out);
  const toml::table* table(const toml::table& t, const std::string& prefix, const std::string& key,
                           bool required);
  // [[key]] entries; null (after failing) when absent, empty or not tables.
  const toml::array* tables(const toml::table& t, const std::string& prefix, const std::string& key,
                            bool required);
  // A file named relative to the problem folder; it must exist. Returns its absolute path.
  bool file(const std::string& field, const std::string& rel, fs::path& out);
  void load(const toml::table& root, Problem& p);
  void load_axes(const toml::table& root, Problem& p);
  void load_tensors(const toml::table& root, const std::string& key, bool inputs,
                    std::vector<TensorSpec>& out, const Problem& p);
  // An aliased output is its input's buffer: the same elements, the same dtype, one output each.
  void check_alias(const std::string& field, const TensorSpec& s,
                   const std::vector<TensorSpec>& earlier_outputs, const Problem& p);
  static std::string shape_text(const std::vector<std::string>& shape);
  // A field only the CUDA backend has: on another backend it is an error, never ignored.
  bool cuda_only(const toml::table& t, const std::string& prefix, const std::string& key,
                 const Problem& p);
  // The CUDA ABI passes tensors and axes in fixed arrays (cuda/include/arc_cuda.h).
  void load_abi_limits(const Problem& p);
  void load_compute_dtype(const toml::table& root, Problem& p);
  // An expression written as a string or an integer (kept as its decimal text).
  bool expression_text(const toml::node& n, const std::string& field, const std::string& expected,
                       std::string& out);
  void launch_dims(const toml::table& t, const std::string& prefix, const std::string& key,
                   std::vector<std::string>& out);
  // [[<prefix>.<key>]]: kernels launched in order (docs/problem-format-cuda.md, "Launches").
  void load_launches(const toml::table& t, const std::string& prefix, const std::string& key,
                     std::vector<Launch>& out);
  // What a launch or workspace expression may name, for checking its form: every axis and every
  // knob whose values are all integers, each at 1.
  struct ExpressionContext {
    std::map<std::string, int64_t> ones;
    std::map<std::string, std::string> hints;  // knobs that cannot appear, and why
    std::string expected;
  };

  static ExpressionContext expression_context(const Problem& p, const Family* f);
  bool check_expression(const std::string& expr, const std::string& field,
                        const ExpressionContext& c);
  bool check_launch_expressions(const std::vector<Launch>& launches, const std::string& field,
                                const ExpressionContext& c);
  static std::string knobs_text(const std::map<std::string, std::string>& knobs);
  // Resolves the launches (and the workspace, if given) for every workload at every knob setting.
  // An error names the field, the expression, the workload and the knob values.
  void check_resolution(const std::vector<Launch>& launches, const std::string& field,
                        const std::string* workspace, const std::string& workspace_field,
                        const std::vector<std::map<std::string, std::string>>& settings,
                        const Problem& p, const Family* f = nullptr);
  // The default knobs, then each knob at its first and at its last value with the others at
  // their defaults, leaving out the settings the family's constraints exclude.
  static std::vector<std::map<std::string, std::string>> knob_settings(const Family& f,
                                                                       const Problem& p);
  void load_reference_launches(const toml::table& root, Problem& p);
  // The CUDA part of a [[families]] entry: a library family's GEMM, or a source family's
  // launches and workspace, checked for every workload at the default and extreme knob values.
  void load_cuda_family(const toml::table& t, const std::string& prefix, Family& f,
                        const Problem& p);
  // gemm = { a, b, c, d, m, n, k, a_scale, b_scale }: a [m, k] and b [n, k] inputs, d [m, n]
  // an output, c an optional [m, n] input, one dtype for all; with fp8_e4m3 a and b, c and d
  // are bf16, f16 or f32 and a_scale, b_scale optional scalar f32 inputs.
  void load_gemm(const toml::table& t, const std::string& prefix, Family& f, const Problem& p);
  // A library family's knobs select a cuBLASLt configuration (docs/problem-format-cuda.md).
  void check_library_knobs(const std::string& prefix, const Family& f, const Problem& p);
  void load_tolerance(const toml::table& root, Problem& p);
  void load_cost(const toml::table& root, Problem& p);
  // loader_shared.cc: [params] (after the axes), constraints (after the params), include_dirs.
  void load_params(const toml::table& root, Problem& p);
  void load_constraints(const toml::table& root, Problem& p);
  void load_include_dirs(const toml::table& root, Problem& p);
  // Whether every constraint holds for a workload; else fails naming the constraint and the
  // workload's axis values under `prefix`.
  bool check_constraints(const Problem& p, const Workload& w, const std::string& prefix);
  void load_workloads(const toml::table& root, Problem& p);
  // A workload's axes: integers, or expressions over its other axes and the integer params.
  bool load_workload_axes(const toml::table& axes, const std::string& prefix, const Problem& p,
                          Workload& w);
  void load_families(const toml::table& root, Problem& p);
  void load_knob(const toml::table& t, const std::string& prefix, Family& f);
  // constraints = ["EXPR", ...] over the family's integer knobs and the integer params; the
  // default knob values must satisfy them.
  void load_family_constraints(const toml::table& t, const std::string& prefix, Family& f,
                               const Problem& p);
  // [[families.tensor_maps]] (docs/problem-format-cuda.md, "Tensor maps"), at most
  // ARC_MAX_TENSOR_MAPS.
  void load_tensor_maps(const toml::table& t, const std::string& prefix, Family& f,
                        const Problem& p);
  void load_seed(const toml::table& root, Problem& p);
  fs::path dir_;
  std::map<std::string, fs::path> referenced_;
};

}  // namespace arc::problem
