#pragma once
// A kernel problem as loaded from problem.toml (format: docs/problem-format.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "eval/candidate.h"
#include "events/status.h"

namespace arc::eval {

struct TensorSpec {
  std::string name;
  std::string dtype;               // host problems: "f32"
  std::vector<std::string> shape;  // axis names
  std::string init = "uniform";    // inputs: "uniform" | "normal"
  double low = -1.0, high = 1.0;   // uniform range; normal uses mean 0, stddev `high`
};

struct Workload {
  std::string name;
  std::map<std::string, int64_t> axes;
};

struct Knob {
  std::string name;
  std::vector<std::string> values;  // ordered: neighbours are adjacent entries
  std::string default_value;        // one of `values`
};

struct Family {
  std::string name;
  std::string description;
  std::filesystem::path source;  // absolute path of the source template
  std::vector<std::string> tags;
  std::vector<Knob> knobs;
  const Knob* knob(const std::string& name) const;
  Variant default_variant() const;
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
  std::string backend = "host";          // "host" | "cuda"
  std::filesystem::path dir;             // folder holding problem.toml (absolute)
  std::filesystem::path file;            // problem.toml (absolute)
  std::vector<std::string> axes;         // axis order passed to kernels
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<Workload> workloads;
  Tolerance tolerance;
  CostModel cost;
  std::filesystem::path reference;       // reference source (absolute)
  std::vector<Family> families;
  Candidate seed;                        // the starting implementation (the baseline)
  std::string hash;                      // SHA-256 over problem.toml and every referenced file

  const Family* family(const std::string& name) const;
  const Workload* workload(const std::string& name) const;
  Result<double> flops(const Workload& w) const;
  Result<double> bytes(const Workload& w) const;
  // Number of elements of a tensor for a workload.
  int64_t elements(const TensorSpec& t, const Workload& w) const;
};

// Loads and validates a problem from its problem.toml or the folder holding it. Errors name the
// file, the field and what was expected.
Result<Problem> load_problem(const std::filesystem::path& path);

// Evaluates an arithmetic expression (+ - * / parentheses, numbers, axis names).
Result<double> evaluate_expression(const std::string& expr,
                                   const std::map<std::string, int64_t>& axes);

}  // namespace arc::eval
