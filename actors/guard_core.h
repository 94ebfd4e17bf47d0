#pragma once
// GuardCore: the only judge of candidates. From an evaluation, the baseline and the proposing
// agent's incumbent it decides KEEP, REVERT, REJECT or STOP (DESIGN.md §6 step 6):
//   REJECT  any workload not OK (compile error, wrong result, crash, timeout, ...) or a median
//           below sol_margin x its SOL bound (IMPOSSIBLE: the workers report sol_ns, this is
//           the one place that judges it); records a trap for the move.
//   KEEP    every workload OK and score > incumbent × (1 + margin), where the margin is the
//           configured one or the measured noise, whichever is larger; records a win.
//           With paired decisions (pairs > 0) that only admits the candidate to pairing; see
//           "Paired decisions" below.
//   REVERT  correct but not better by the margin.
//   STOP    the campaign is stopping (budget spent or campaign plateau): not evaluated.
// score = geometric mean over workloads of T_baseline / T; SOL score per workload
// S = 1 / (1 + (T − T_sol) / (T_base − T_sol)).
//
// Paired decisions (DESIGN.md §6 step 6). The baseline was measured once, at the start, and a
// device drifts (clocks, power state: a large GEMM moves by 15% within minutes), so a score
// over the baseline cannot by itself justify a KEEP. A correct candidate whose score reaches
// incumbent × (1 + margin − band), band = max(pair_band, noise) — every would-be KEEP and every
// candidate within the noise band below the margin — is measured again against the agent's
// incumbent (the candidate it last kept, the baseline, or the sibling incumbent it adopted):
// `pairs` pairs (PairMeasured events), each the two evaluated back to back in the same worker on
// the same fresh inputs, incumbent first in even pairs and candidate first in odd ones (ABBA),
// so a linear drift falls on both alike. Pair i's ratio is the geometric mean over workloads of
// T_incumbent / T_candidate. KEEP iff the sign test's lower confidence bound of the median ratio
// (base/stats.h median_lower_bound, at pair_confidence) exceeds 1 + margin; otherwise REVERT.
// A candidate failing in a pair (wrong result on the pair's fresh inputs, stale output, crash)
// is REJECTed with a trap, as in its evaluation; an incumbent failing in a pair is a REVERT
// that names it. The score stays the evaluation's (speedup over the baseline); the Decision
// also carries the pairs' median ratio and bound. next_pair() says which pair is due; decide()
// on an evaluation whose pairs are not all logged REVERTs with "paired confirmation incomplete"
// (the guard shell never asks that; a log that lacks pairs fails verification on it).
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
// CampaignStarted's software entry that marks a log whose decisions are paired; a log without
// it (written before paired decisions) is decided and verified unpaired.
inline constexpr const char* kDecisionsKey = "decisions";
inline constexpr const char* kPairedDecisions = "paired";
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
  // Paired decisions ([guard] pairs, pair_band, pair_confidence). pairs = 0: decided from the
  // evaluation alone (logs from before paired decisions, docs/campaign-format.md).
  uint32_t pairs = 10;
  double pair_band = 0.05;
  double pair_confidence = 0.95;
};

// The pair a paired decision needs next.
struct PairRequest {
  std::string incumbent_hash;
  uint32_t index = 0;            // 0-based
  bool candidate_first = false;  // odd pairs: candidate first (ABBA)
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
  // The verdict for an evaluated proposal (paired when it must be: the pairs logged so far).
  GuardOutcome decide(const fb::CandidateProposedT& proposal,
                      const fb::CandidateEvaluatedT& evaluation, uint64_t evaluation_seq) const;
  // The next pair decide() needs for this evaluation, or nothing when it can decide now.
  std::optional<PairRequest> next_pair(const fb::CandidateProposedT& proposal,
                                       const fb::CandidateEvaluatedT& evaluation,
                                       uint64_t evaluation_seq) const;
  // next_pair() and every pair after it that the decision may still need, in index order: the
  // pairs a guard with several workers measures at once (it logs them in this order, asking
  // next_pair() before each, and drops those no longer asked for). Empty when next_pair() is.
  std::vector<PairRequest> remaining_pairs(const fb::CandidateProposedT& proposal,
                                           const fb::CandidateEvaluatedT& evaluation,
                                           uint64_t evaluation_seq) const;
  // The candidate the agent's score belongs to (the baseline until it keeps or adopts one).
  std::string incumbent_hash(const std::string& agent) const;
  const GuardConfig& config() const { return config_; }

  bool has_baseline() const { return !baseline_ns_.empty(); }
  uint32_t decided() const { return decided_; }
  bool stopping() const { return decided_ >= config_.budget || campaign_plateau_; }
  double incumbent_score(const std::string& agent) const;

 private:
  GuardConfig config_;
  std::vector<double> baseline_ns_;       // per workload, once the baseline is kept
  std::vector<double> pending_baseline_;  // the baseline's medians before its Decision
  std::string baseline_hash_;
  // The decision on the evaluation alone, and whether it goes to pairing.
  GuardOutcome unpaired(const fb::CandidateProposedT& proposal,
                        const fb::CandidateEvaluatedT& evaluation, uint64_t evaluation_seq,
                        bool* to_pair) const;
  // The problem's workloads, each with sol_margin x the evaluation's sol_ns for it.
  std::vector<std::pair<std::string, double>> sol_floors(
      const fb::CandidateEvaluatedT& evaluation) const;
  const std::vector<fb::PairMeasuredT>* logged_pairs(const std::string& candidate,
                                                     const std::string& incumbent) const;

  std::map<std::string, double> incumbents_;             // agent -> score
  std::map<std::string, std::string> incumbent_hashes_;  // agent -> candidate hash
  // (candidate, incumbent) -> the pairs logged, consecutive from index 0.
  std::map<std::pair<std::string, std::string>, std::vector<fb::PairMeasuredT>> pairs_;
  std::map<std::string, uint64_t> evaluations_;  // candidate hash -> CandidateEvaluated seq
  uint32_t decided_ = 0;
  bool campaign_plateau_ = false;
  bool paired_log_ = true;  // until a CampaignStarted without the marker says otherwise
};

// Geometric mean of positive values (1 for none).
double geomean(const std::vector<double>& v);

}  // namespace arc::actors
