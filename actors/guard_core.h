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
//
// Margin scope ([guard] margin_scope, recorded in CampaignStarted's software as margin_scope).
// "changed" (the default): the margin applies to the workloads on which the candidate runs
// another variant than its incumbent (problem::Candidate::variant_for: a gate or the base);
// on the others both run the same kernel, so their ratios are noise and say nothing about the
// move. The gain is the geometric mean, over those workloads only, of the candidate's speedup
// over the incumbent's (both from their own evaluations), and the noise is theirs; the pairs'
// ratios are taken over the same workloads. KEEP iff gain > 1 + margin (paired: the bound
// exceeds it); a candidate that runs its incumbent's kernel on every workload is a REVERT.
// So a gate that wins 5% on one workload of five is kept, where over all five (1%) it would
// fall under a 2% margin. "all", and every log without the entry: the gain is the score over
// the incumbent's score, over every workload, as before the scope existed. The score stays
// the geometric mean over every workload of the evaluation's speedups over the baseline.
//
// Slower workloads ([guard] slower_workloads, recorded in CampaignStarted's software as
// slower_workloads). "revert" (the default): a paired KEEP also needs none of the candidate's
// gates that differ from its incumbent's variant on their workload to be slower there: on each
// such workload the pairs' ratios T_candidate / T_incumbent of that workload alone are tested as
// the margin's are, and a lower bound above 1 (slower at pair_confidence) makes the candidate a
// REVERT naming the workload (Decision.slower_workload, which the gater reads). So a gate table
// that wins 5% on one workload cannot carry a gate that costs 0.4% on another; the table
// without it is a candidate of its own. A changed base (one kernel for every workload) is
// traded off across workloads by the margin alone. "allow", and every log without the entry:
// the margin alone decides. Unpaired decisions (pairs = 0) have no per-workload evidence and are
// decided by the margin alone.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/codec.h"
#include "problem/candidate.h"

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
// CampaignStarted's software entry naming the margin scope: kScopeChanged or kScopeAll. A log
// without it is decided, and verified, with kScopeAll.
inline constexpr const char* kMarginScopeKey = "margin_scope";
inline constexpr const char* kScopeChanged = "changed";
inline constexpr const char* kScopeAll = "all";
// CampaignStarted's software entry for slower workloads: kSlowerRevert or kSlowerAllow. A log
// without it is decided, and verified, with kSlowerAllow.
inline constexpr const char* kSlowerWorkloadsKey = "slower_workloads";
inline constexpr const char* kSlowerRevert = "revert";
inline constexpr const char* kSlowerAllow = "allow";
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
  // Per workload (problem order): the workloads the margin applies to for this proposal:
  // in_scope() against the agent's incumbent, or every workload for the baseline and for an
  // incumbent whose speedups are not known.
  std::vector<bool> margin_workloads(const fb::CandidateProposedT& proposal) const;
  // Per workload (problem order): whether the margin applies to it. With the "changed" scope,
  // the workloads on which `candidate` runs another variant than `incumbent`; every workload
  // with the "all" scope or where either candidate's form is unknown.
  std::vector<bool> in_scope(const std::string& candidate, const std::string& incumbent) const;
  // Per workload (problem order): whether `candidate` runs another variant there than
  // `incumbent` (every workload where either candidate's form is unknown), whatever the scope.
  std::vector<bool> changed(const std::string& candidate, const std::string& incumbent) const;
  // With kSlowerRevert: the first workload on which `candidate` has a gate other than
  // `incumbent`'s variant there that the pairs show slower than `incumbent` at pair_confidence,
  // and the REVERT's reason; nothing when there is none.
  std::optional<std::pair<std::string, std::string>> slower_workload(
      const std::string& candidate, const std::string& incumbent,
      const std::vector<fb::PairMeasuredT>& pairs, size_t have) const;
  // The incumbent's per-workload speedups over the baseline, from its KEEP (ones for the
  // baseline), or null when they are not known (then the gain is taken over every workload).
  const std::vector<double>* kept_speedups(const std::string& hash) const;

  std::map<std::string, double> incumbents_;             // agent -> score
  std::map<std::string, std::string> incumbent_hashes_;  // agent -> candidate hash
  // (candidate, incumbent) -> the pairs logged, consecutive from index 0.
  std::map<std::pair<std::string, std::string>, std::vector<fb::PairMeasuredT>> pairs_;
  std::map<std::string, uint64_t> evaluations_;  // candidate hash -> CandidateEvaluated seq
  uint32_t decided_ = 0;
  bool campaign_plateau_ = false;
  bool paired_log_ = true;      // until a CampaignStarted without the marker says otherwise
  bool changed_scope_ = false;  // the "changed" margin scope (CampaignStarted says so)
  bool revert_slower_ = false;  // slower_workloads = "revert" (CampaignStarted says so)
  std::map<std::string, problem::Candidate> candidates_;      // hash -> proposed form
  std::map<std::string, std::vector<double>> kept_speedups_;  // hash -> its KEEP's speedups
};

// Geometric mean of positive values (1 for none).
double geomean(const std::vector<double>& v);

}  // namespace arc::actors
