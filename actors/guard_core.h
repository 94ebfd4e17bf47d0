#pragma once
// GuardCore: the only judge of candidates. From an evaluation, the baseline and the proposing
// agent's incumbent it decides KEEP, REVERT, REJECT or STOP (DESIGN.md §6 step 6):
//   REJECT  any workload not OK (compile error, wrong result, crash, timeout, ...) or a median
//           below sol_margin x its SOL bound (IMPOSSIBLE: the workers report sol_ns, this is
//           the one place that judges it); records a trap for the move.
//   KEEP    every workload OK and score > incumbent × (1 + margin), where the margin is the
//           configured one or the measured noise, whichever is larger; records a win.
//   REVERT  correct but not better by the margin.
//   STOP    the campaign is stopping (budget spent or campaign plateau): not evaluated.
// score = geometric mean over workloads of T_baseline / T; SOL score per workload
// S = 1 / (1 + (T − T_sol) / (T_base − T_sol)).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::actors {

// Default [guard] sol_margin per backend, the factors the workers applied before the guard
// took the verdict over (so decisions on earlier logs re-derive unchanged). Host: the peaks are
// upper bounds (in-cache memcpy, every thread), so the bound itself. CUDA: 0.5, wide on purpose
// (docs/cuda-evaluator.md, "SOL"): the peaks are measured, not theoretical; a read-mostly kernel
// can exceed the copy bandwidth; output that stays in L2 is not DRAM traffic yet; short GEMMs
// run at boost clock. Either still catches skipped or cached work, off by orders of magnitude.
inline constexpr double kHostSolMargin = 1.0;
inline constexpr double kCudaSolMargin = 0.5;
// The configured margin, else the backend's default ("cuda": kCudaSolMargin, else host's).
double sol_margin_for(std::optional<double> configured, const std::string& backend);

struct GuardConfig {
  double margin = 0.02;
  uint32_t budget = 40;  // decided candidates, the baseline excluded
  std::string kernel_type;
  std::vector<std::string> workloads;  // problem order
  // IMPOSSIBLE when a workload's median < sol_margin x its sol_ns (sol_margin_for()).
  double sol_margin = kHostSolMargin;
};

struct GuardOutcome {
  fb::DecisionT decision;
  std::optional<fb::ConclusionRecordedT> conclusion;
};

class GuardCore {
 public:
  explicit GuardCore(GuardConfig config) : config_(std::move(config)) {}

  void apply(const events::Event& e);

  // STOP decision for a proposal that must not be evaluated, or nothing.
  std::optional<fb::DecisionT> stop_decision(const fb::CandidateProposedT& proposal) const;
  // Seq of an earlier evaluation of the same candidate (then it is not evaluated again).
  std::optional<uint64_t> earlier_evaluation(const std::string& hash) const;
  // The verdict for an evaluated proposal.
  GuardOutcome decide(const fb::CandidateProposedT& proposal,
                      const fb::CandidateEvaluatedT& evaluation, uint64_t evaluation_seq) const;

  bool has_baseline() const { return !baseline_ns_.empty(); }
  uint32_t decided() const { return decided_; }
  bool stopping() const { return decided_ >= config_.budget || campaign_plateau_; }
  double incumbent_score(const std::string& agent) const;

 private:
  GuardConfig config_;
  std::vector<double> baseline_ns_;           // per workload, once the baseline is kept
  std::vector<double> pending_baseline_;      // the baseline's medians before its Decision
  std::string baseline_hash_;
  std::map<std::string, double> incumbents_;  // agent -> score
  std::map<std::string, uint64_t> evaluations_;  // candidate hash -> CandidateEvaluated seq
  uint32_t decided_ = 0;
  bool campaign_plateau_ = false;
};

// Geometric mean of positive values (1 for none).
double geomean(const std::vector<double>& v);

}  // namespace arc::actors
