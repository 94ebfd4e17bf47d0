#pragma once
// arc-replay export --format kernel-tuner: the configurations a sweep (or a campaign) measured,
// as a Kernel Tuner cache file, so that Kernel Tuner's strategies can be run in its simulation
// mode on exactly the measurements KernelArc's replay evaluator answers from (docs/export.md,
// "Kernel Tuner cache"). Pure: the log (and the problem, when known) in, the file's text out.
//
// The file is the JSON Kernel Tuner writes with `cache=` and reads back (schema_version 1.1.0 of
// its cache schema): device_name, kernel_name, problem_size, tune_params_keys, tune_params,
// objective "time" and, last, "cache" with one entry per configuration keyed by its parameter
// values joined with commas. A configuration is a point of the space (a family and its knob
// values; gated candidates are compositions, not points, and are left out). Its "time" is the
// recorded median in milliseconds: of one workload, or the geometric mean over every workload of
// the problem (the objective KernelArc's score ranks by: speedup = geomean baseline / geomean
// time); a configuration that failed holds Kernel Tuner's error name instead.
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/codec.h"
#include "problem/problem.h"

namespace arc::replay {

struct KernelTunerExportOptions {
  // The workload whose median time is the objective; empty (default): the geometric mean of
  // the medians over every workload, a configuration failing any workload failing.
  std::string workload;
  // Kernel Tuner's kernel_name (its simulation mode refuses a cache of another kernel name);
  // empty (default): the problem's name.
  std::string kernel_name;
};

// The "family" tune parameter exists when the configurations span several families; a knob a
// family does not have holds this value in that family's configurations.
inline constexpr const char* kKernelTunerNotApplicable = "n/a";

struct KernelTunerExport {
  std::string text;             // the cache file
  uint32_t configurations = 0;  // entries in "cache"
  uint32_t failed = 0;          // of those, entries holding an error name
  uint32_t unmeasured = 0;      // points left out: no measurement of the objective's workloads
  uint32_t gated = 0;           // gated candidates left out
  std::string best_key;         // the fastest configuration's key
  double best_ms = 0;           // and its time
  std::string baseline_key;     // the first configuration the log evaluated (a sweep's seed, a
  double baseline_ms = 0;       // campaign's baseline); 0 ms when it failed or is not a point
};

// `problem` may be null (a log whose problem cannot be restored): the knob values are then
// ordered integers first, ascending, then as first seen, and problem_size is empty. Fails
// (invalid_argument) when the log does not start with CampaignStarted, holds no evaluated point,
// `options.workload` is not one of its workloads, or a knob's name or value cannot be a Kernel
// Tuner parameter (a reserved name, a comma in a value).
Result<KernelTunerExport> kernel_tuner_cache(const std::vector<events::Event>& log,
                                             const problem::Problem* problem,
                                             const KernelTunerExportOptions& options);

}  // namespace arc::replay
