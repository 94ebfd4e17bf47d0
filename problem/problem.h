#pragma once
// A kernel problem as loaded from problem.toml (format: docs/problem-format.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "problem/candidate.h"

namespace arc::problem {

struct TensorSpec {
  std::string name;
  std::string dtype;               // host problems: "f32"
  std::vector<std::string> shape;  // axis names or expressions over axes and params
  std::string init = "uniform";    // inputs: "uniform" | "normal"
  double low = -1.0, high = 1.0;   // uniform range; normal uses mean 0, stddev `high`
  std::string alias;               // outputs (cuda): the input whose buffer this output updates
};

// Bytes per element of a dtype ("f32" 4, "bf16"/"f16" 2); 0 for an unknown dtype.
// The other CUDA dtypes: "f64" 8, "i32" 4, "fp8_e4m3", "fp8_e5m2", "i8" and "u8" 1.
int dtype_bytes(const std::string& dtype);

// The index of the tensor called `name` in `ts` (a problem's inputs or outputs); -1 if none.
int tensor_index(const std::vector<TensorSpec>& ts, const std::string& name);

// One kernel launch of a CUDA family or reference (docs/problem-format-cuda.md): expressions
// over the axes and the family's numeric knobs.
struct Launch {
  std::string kernel;              // extern "C" __global__ name
  std::vector<std::string> grid;   // 1-3 expressions
  std::vector<std::string> block;  // 1-3 expressions
  std::string shared = "0";        // dynamic shared memory bytes
};

// Launch dimensions resolved for one workload and variant.
struct ResolvedLaunch {
  std::string kernel;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared = 0;
};

// The GEMM a library family computes: tensor names and axis names (docs/problem-format-cuda.md).
struct GemmSpec {
  std::string a, b, c, d;  // c may be empty
  std::string m, n, k;     // axis names
  // fp8 a and b only: scalar f32 inputs (shape []) the product is multiplied by; empty: 1.
  std::string a_scale, b_scale;
};

struct Workload {
  std::string name;
  std::map<std::string, int64_t> axes;       // every declared axis, resolved to an integer
  std::map<std::string, int64_t> constants;  // the problem's integer parameters (Param)
};

// A scalar parameter, declared once in problem.toml's [params] (e.g. eps = 1e-5, groups = 4).
// It reaches the reference and every family as the define NAME=TEXT; an integer parameter may
// also appear in every expression (shapes, constraints, cost model, launches, workspace).
struct Param {
  std::string name;
  std::string text;  // a C literal: "4", "1e-05", "2.0"
  double value = 0;
  bool integer = false;
};

struct Knob {
  std::string name;
  std::vector<std::string> values;  // ordered: neighbours are adjacent entries
  std::string default_value;        // one of `values`
};

// A TMA tensor map a family's kernels receive as a __grid_constant__ parameter
// (docs/problem-format-cuda.md, "Tensor maps"; cuda/include/arc_cuda.h): a view of one input or
// output, dense row-major as declared, copied in boxes. Expressions over the axes, the integer
// params, the family's integer knobs and the device's sm_count.
struct TensorMapSpec {
  std::string tensor;                        // an input or output name
  std::vector<std::string> box;              // one extent per dimension, in the shape's order
  std::string swizzle = "0";                 // bytes: 0 (none), 32, 64 or 128
  std::vector<std::string> element_strides;  // one per dimension, in the shape's order; empty: 1s
  std::string l2_promotion = "128";          // bytes: 0 (none), 64, 128 or 256
  std::string oob_fill = "zero";             // elements outside the tensor read as "zero" | "nan"
};

struct Family {
  std::string name;
  std::string description;
  std::filesystem::path source;  // absolute path of the source template
  std::vector<std::string> tags;
  std::vector<Knob> knobs;
  // cuda: the kernels launched, in order, and the workspace bytes (an expression).
  std::vector<Launch> launches;
  std::string workspace = "0";
  // cuda: "cublaslt" for a library family (no source; knobs select the algorithm); else "".
  std::string library;
  GemmSpec gemm;
  // cuda: the tensor maps the kernels receive (a second kernel parameter when not empty).
  std::vector<TensorMapSpec> tensor_maps;
  // Expressions over the family's integer knobs and the integer params, each non-zero for every
  // variant of the search space: a knob combination that violates one is not in the space (the
  // agents and sweeps never propose it; a candidate that names one fails before it compiles).
  std::vector<std::string> constraints;
  const Knob* knob(const std::string& name) const;
  Variant default_variant() const;
  // "" when `knobs` (every knob's value, e.g. knob_values(v)) satisfy every constraint, else
  // which constraint fails and the values it saw.
  std::string constraint_violation(const std::map<std::string, std::string>& knobs,
                                   const std::map<std::string, int64_t>& params) const;
  // Every knob's value for variant `v`: the defaults overridden by v's knobs.
  std::map<std::string, std::string> knob_values(const Variant& v) const;
};

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
  double matched_ratio = 1.0;  // fraction of elements that must be within tolerance
};

// flops and bytes per workload, as arithmetic expressions over axis names.
struct CostModel {
  std::string flops;
  std::string bytes;
};

struct Problem {
  std::string name;
  std::string kernel_type;
  std::string description;
  std::string backend = "host";   // "host" | "cuda"
  std::filesystem::path dir;      // folder holding problem.toml (absolute)
  std::filesystem::path file;     // problem.toml (absolute)
  std::vector<std::string> axes;  // axis order passed to kernels
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Workload> workloads;
  Tolerance tolerance;
  CostModel cost;
  std::filesystem::path reference;  // reference source (absolute)
  std::vector<Family> families;
  std::vector<Launch> reference_launches;  // cuda: the reference's kernels, in order
  std::string compute_dtype;               // cuda: f32, bf16, f16, fp8_e4m3; default: inputs[0]'s
  Candidate seed;                          // the starting implementation (the baseline)
  std::vector<Param> params;               // [params], in the order written
  std::vector<std::string> constraints;  // expressions over axes and integer params, each non-zero
                                         // for every workload
  // Shared sources the reference and families may #include by their path inside an include
  // folder (problem.toml's include_dirs): include name -> text, read once at load time and
  // counted in the problem hash, the compile-cache keys and exports.
  std::map<std::string, std::string> headers;
  std::string hash;  // SHA-256 over problem.toml and every referenced file
  // Every file load_problem read and hashed, problem.toml included, by its path relative to
  // `dir` (generic form; "../common/x.h" for a file outside it) -> the bytes hashed: what a run
  // keeps in its log so that it can be replayed without the folder (actors/run_inputs.h).
  std::map<std::string, std::string> files;

  const Family* family(const std::string& name) const;
  const Workload* workload(const std::string& name) const;
  Result<double> flops(const Workload& w) const;
  Result<double> bytes(const Workload& w) const;
  // Number of elements of a tensor for a workload (its shape entries are axis names or
  // expressions over axes and integer params); 0 when a dimension does not evaluate.
  int64_t elements(const TensorSpec& t, const Workload& w) const;
  // The params as compile-time defines, NAME -> TEXT.
  std::map<std::string, std::string> param_defines() const;
  // What a variant is compiled with: its knobs plus the params (a param wins over a free-source
  // variant's define of the same name).
  std::map<std::string, std::string> defines_for(const Variant& v) const;
  // The integer params by name (what family constraints and expressions may name).
  std::map<std::string, int64_t> integer_params() const;
  // "" when every variant of `c` (base and gates) names a family of the problem and satisfies
  // its constraints, else why not (the family, the constraint, the knob values). A variant with
  // free source text is not checked.
  std::string constraint_violation(const Candidate& c) const;
};

// Loads and validates a problem from its problem.toml or the folder holding it. Errors name the
// file, the field and what was expected.
Result<Problem> load_problem(const std::filesystem::path& path);

// The text of every family's source file, by family name (library families have none). Fails
// naming the file that cannot be read.
Result<std::map<std::string, std::string>> read_family_sources(const Problem& problem);

}  // namespace arc::problem
