#pragma once
// arcd confirm (docs/export.md, "arcd confirm"): a run's baseline and best candidate measured
// again side by side, in pairs, on this machine's evaluator. Round r evaluates both with the
// campaign's [evaluation] settings and one input seed; the order alternates (baseline first in
// even rounds, best first in odd ones), so a drift of the device over the rounds (clocks,
// power, temperature) falls on both alike. Per workload the speedup of a round is the
// baseline's median over the best's; the confirmation reports every round's ratio, their
// median, minimum and maximum, and the geometric mean of the medians over the workloads.
// Nothing is written to the run: its log stays what the campaign decided.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "eval/evaluators.h"

namespace arc::replay {

struct ConfirmOptions {
  uint32_t rounds = 5;           // pairs of evaluations (baseline, best)
  eval::EvaluatorChoice choice;  // default: the problem's backend
  // Told what restoring the run's problem found (replay/reconstruct.h): "warning: ..." when its
  // folder holds other files than the run read, "note: ..." when it is gone; the log's copy is
  // confirmed then. May be empty.
  std::function<void(const std::string&)> notice;
};

struct WorkloadConfirmation {
  std::string workload;
  std::string status = "OK";        // the first status that was not OK in any evaluation
  std::string error;                // its message
  std::vector<double> baseline_ns;  // median of each round's baseline evaluation
  std::vector<double> best_ns;      // median of each round's best evaluation
  std::vector<double> ratios;       // baseline_ns[r] / best_ns[r]
  double median_ratio = 0, min_ratio = 0, max_ratio = 0;
  double logged_speedup = 0;  // what the campaign's own evaluations gave
};

struct Confirmation {
  std::string run_dir, problem, device, evaluator;
  std::string baseline_hash, best_hash;
  bool best_is_baseline = false;  // nothing was kept: the ratios show the measurement's spread
  double logged_score = 0;        // the campaign's score of its best
  uint32_t rounds = 0;
  std::vector<WorkloadConfirmation> workloads;
  double geomean_median_ratio = 0;  // over the workloads whose every evaluation was OK
};

// kUnavailable, before anything is measured, when the run needs a CUDA device and none is
// usable here (actors::require_device).
Result<Confirmation> confirm_run(const std::filesystem::path& run_dir,
                                 const ConfirmOptions& options);

nlohmann::json to_json(const Confirmation& c);
std::string to_table(const Confirmation& c);

}  // namespace arc::replay
