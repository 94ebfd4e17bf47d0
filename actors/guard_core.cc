#include "actors/guard_core.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "actors/view.h"
#include "base/stats.h"

namespace arc::actors {

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 1.0;
  double s = 0;
  for (double x : v) s += std::log(std::max(x, 1e-300));
  return std::exp(s / static_cast<double>(v.size()));
}

double sol_margin_for(std::optional<double> configured, const std::string& backend) {
  if (configured) return *configured;
  return backend == "cuda" ? kCudaSolMargin : kHostSolMargin;
}

void GuardCore::apply(const events::Event& e) {
  switch (e.payload.type) {
    case fb::Payload::CampaignStarted: {
      // A log written before paired decisions existed is decided, and verified, unpaired.
      // One written before the margin scope existed is decided over every workload, and one
      // written before slower workloads were refused by the margin alone.
      paired_log_ = false;
      changed_scope_ = false;
      revert_slower_ = false;
      for (const auto& kv : e.payload.AsCampaignStarted()->software) {
        if (kv->key == kDecisionsKey && kv->value == kPairedDecisions) paired_log_ = true;
        if (kv->key == kMarginScopeKey && kv->value == kScopeChanged) changed_scope_ = true;
        if (kv->key == kSlowerWorkloadsKey && kv->value == kSlowerRevert) revert_slower_ = true;
      }
      break;
    }
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      if (p->agent == kCampaignActor && p->move == kBaselineMove)
        baseline_hash_ = p->candidate_hash;
      // An unreadable form leaves the candidate unknown: its margin then covers every workload.
      if (auto c = problem::Candidate::from_canonical(p->canonical); c.ok()) {
        candidates_.insert_or_assign(p->candidate_hash, std::move(c.value()));
      }
      break;
    }
    case fb::Payload::CandidateEvaluated: {
      const auto* p = e.payload.AsCandidateEvaluated();
      evaluations_.emplace(p->candidate_hash, e.seq);
      if (p->candidate_hash == baseline_hash_) {
        pending_baseline_.assign(config_.workloads.size(), 0.0);
        for (const auto& w : p->workloads) {
          for (size_t i = 0; i < config_.workloads.size(); ++i) {
            if (config_.workloads[i] == w->workload) pending_baseline_[i] = w->median_ns;
          }
        }
      }
      break;
    }
    case fb::Payload::Decision: {
      const auto* p = e.payload.AsDecision();
      if (p->verdict == fb::Verdict::STOP) break;
      if (p->agent == kCampaignActor) {
        if (p->verdict == fb::Verdict::KEEP) {
          // The baseline's medians are the speedups' denominators.
          baseline_ns_ = pending_baseline_;
          kept_speedups_[baseline_hash_].assign(config_.workloads.size(), 1.0);
          for (auto& [agent, score] : incumbents_) score = 1.0;
          for (auto& [agent, hash] : incumbent_hashes_) hash = baseline_hash_;
        }
        break;
      }
      ++decided_;
      if (p->verdict == fb::Verdict::KEEP) {
        incumbents_[p->agent] = p->score;
        incumbent_hashes_[p->agent] = p->candidate_hash;
        if (p->speedups.size() == config_.workloads.size()) {
          kept_speedups_[p->candidate_hash] = p->speedups;
        }
      }
      break;
    }
    case fb::Payload::AgentSpawned:
      incumbents_[e.payload.AsAgentSpawned()->agent] = 1.0;
      incumbent_hashes_[e.payload.AsAgentSpawned()->agent] = baseline_hash_;
      break;
    case fb::Payload::SiblingInspected: {
      const auto* p = e.payload.AsSiblingInspected();
      if (p->adopted) {
        incumbents_[p->agent] = p->sibling_score;
        incumbent_hashes_[p->agent] = p->sibling_incumbent;
      }
      break;
    }
    case fb::Payload::PairMeasured: {
      const auto* p = e.payload.AsPairMeasured();
      auto& logged = pairs_[{p->candidate_hash, p->incumbent_hash}];
      // Only the next pair counts: a repeated or out-of-order index adds nothing.
      if (p->index == logged.size()) logged.push_back(*p);
      break;
    }
    case fb::Payload::PlateauDetected:
      if (e.payload.AsPlateauDetected()->scope == fb::PlateauScope::CAMPAIGN) {
        campaign_plateau_ = true;
      }
      break;
    default:
      break;
  }
}

double GuardCore::incumbent_score(const std::string& agent) const {
  auto it = incumbents_.find(agent);
  return it == incumbents_.end() ? 1.0 : it->second;
}

std::string GuardCore::incumbent_hash(const std::string& agent) const {
  auto it = incumbent_hashes_.find(agent);
  return it == incumbent_hashes_.end() || it->second.empty() ? baseline_hash_ : it->second;
}

std::vector<bool> GuardCore::margin_workloads(const fb::CandidateProposedT& proposal) const {
  const std::string incumbent = incumbent_hash(proposal.agent);
  if (proposal.agent == kCampaignActor || kept_speedups(incumbent) == nullptr) {
    return std::vector<bool>(config_.workloads.size(), true);
  }
  return in_scope(proposal.candidate_hash, incumbent);
}

std::vector<bool> GuardCore::in_scope(const std::string& candidate,
                                      const std::string& incumbent) const {
  if (!changed_scope_) return std::vector<bool>(config_.workloads.size(), true);
  return changed(candidate, incumbent);
}

std::vector<bool> GuardCore::changed(const std::string& candidate,
                                     const std::string& incumbent) const {
  std::vector<bool> scope(config_.workloads.size(), true);
  const auto c = candidates_.find(candidate);
  const auto i = candidates_.find(incumbent);
  if (c == candidates_.end() || i == candidates_.end()) return scope;
  for (size_t w = 0; w < scope.size(); ++w) {
    const auto& name = config_.workloads[w];
    scope[w] = !(c->second.variant_for(name) == i->second.variant_for(name));
  }
  return scope;
}

const std::vector<double>* GuardCore::kept_speedups(const std::string& hash) const {
  auto it = kept_speedups_.find(hash);
  return it == kept_speedups_.end() ? nullptr : &it->second;
}

const std::vector<fb::PairMeasuredT>* GuardCore::logged_pairs(const std::string& candidate,
                                                              const std::string& incumbent) const {
  auto it = pairs_.find({candidate, incumbent});
  return it == pairs_.end() ? nullptr : &it->second;
}

std::optional<fb::DecisionT> GuardCore::stop_decision(
    const fb::CandidateProposedT& proposal) const {
  if (proposal.agent == kCampaignActor || !stopping()) return std::nullopt;
  fb::DecisionT d;
  d.candidate_hash = proposal.candidate_hash;
  d.agent = proposal.agent;
  d.verdict = fb::Verdict::STOP;
  d.incumbent_score = incumbent_score(proposal.agent);
  d.reason = campaign_plateau_ ? "campaign plateau: not evaluated"
                               : "budget of " + std::to_string(config_.budget) +
                                     " candidates spent: not evaluated";
  return d;
}

std::optional<uint64_t> GuardCore::earlier_evaluation(const std::string& hash) const {
  auto it = evaluations_.find(hash);
  if (it == evaluations_.end()) return std::nullopt;
  return it->second;
}

GuardOutcome GuardCore::unpaired(const fb::CandidateProposedT& proposal,
                                 const fb::CandidateEvaluatedT& evaluation, uint64_t evaluation_seq,
                                 bool* to_pair) const {
  *to_pair = false;
  GuardOutcome out;
  fb::DecisionT& d = out.decision;
  d.candidate_hash = proposal.candidate_hash;
  d.agent = proposal.agent;
  d.evaluation_seq = evaluation_seq;
  const bool is_baseline = proposal.agent == kCampaignActor;
  d.incumbent_score = is_baseline ? 1.0 : incumbent_score(proposal.agent);

  // Order the workloads as the problem lists them; a missing one is a failure.
  std::vector<const fb::WorkloadEvaluationT*> ws(config_.workloads.size(), nullptr);
  for (const auto& w : evaluation.workloads) {
    for (size_t i = 0; i < config_.workloads.size(); ++i) {
      if (config_.workloads[i] == w->workload) ws[i] = w.get();
    }
  }
  std::string failure;
  bool unanswered = false;  // a replay without a record says nothing about the move
  for (const auto& w : evaluation.workloads) {
    if (w->status != fb::WorkloadStatus::OK) {
      unanswered = w->status == fb::WorkloadStatus::UNANSWERED;
      failure = "workload " + w->workload + ": " + fb::EnumNameWorkloadStatus(w->status) +
                (w->error.empty() ? "" : ": " + w->error);
      break;
    }
  }
  for (size_t i = 0; i < ws.size() && failure.empty(); ++i) {
    const auto* w = ws[i];
    if (w == nullptr) {
      failure = "workload " + config_.workloads[i] + ": no result";
    } else if (!(w->median_ns > 0) || !std::isfinite(w->median_ns)) {
      failure = "workload " + w->workload + ": no valid time";
    } else if (const double floor = config_.sol_margin * w->sol_ns;
               floor > 0 && w->median_ns < floor) {
      // (sol_floor_ns, which CUDA workers once recorded, is not consulted: the configured
      // margin decides, and its backend default equals what they recorded.)
      std::ostringstream os;
      os << "workload " << w->workload << ": IMPOSSIBLE: median " << w->median_ns
         << " ns is below the SOL bound " << w->sol_ns << " ns";
      if (floor != w->sol_ns) os << " x " << config_.sol_margin << " = " << floor << " ns";
      for (const auto& d : w->details) {
        if (d->key == "sol_bound") os << " (" << d->value << ")";
      }
      failure = os.str();
    }
  }
  if (!failure.empty()) {
    d.verdict = fb::Verdict::REJECT;
    d.reason = failure;
    d.score = 0;
    if (!is_baseline && !unanswered) {
      fb::ConclusionRecordedT c;
      c.kind = fb::ConclusionKind::TRAP;
      c.kernel_type = config_.kernel_type;
      c.move = proposal.move;
      c.why = failure.substr(0, 512);
      c.candidate_hash = proposal.candidate_hash;
      c.agent = proposal.agent;
      out.conclusion = std::move(c);
    }
    return out;
  }

  // The margin's workloads and the incumbent's speedups on them (the "changed" scope), or
  // every workload and the incumbent's score (the "all" scope, or an incumbent not known).
  const std::string incumbent = incumbent_hash(proposal.agent);
  const std::vector<double>* kept = is_baseline ? nullptr : kept_speedups(incumbent);
  const bool scoped = kept != nullptr && changed_scope_;
  const std::vector<bool> scope = margin_workloads(proposal);
  double noise = 0;
  std::vector<double> gains;  // per workload in scope: speedup over the incumbent's
  std::string changed;        // their names, for the reason
  for (size_t i = 0; i < ws.size(); ++i) {
    const auto* w = ws[i];
    const double base =
        is_baseline || baseline_ns_.size() != ws.size() ? w->median_ns : baseline_ns_[i];
    d.speedups.push_back(base / w->median_ns);
    const double head = base - w->sol_ns;
    d.sol_scores.push_back(head > 0 ? 1.0 / (1.0 + (w->median_ns - w->sol_ns) / head) : 1.0);
    if (!scope[i]) continue;
    noise = std::max(noise, w->spread / 2);
    if (scoped) {
      gains.push_back(d.speedups.back() / (*kept)[i]);
      changed += (changed.empty() ? "" : ", ") + w->workload;
    }
  }
  d.score = is_baseline ? 1.0 : geomean(d.speedups);
  d.noise = noise;
  d.margin = std::max(config_.margin, noise);
  std::ostringstream os;
  os.precision(4);
  // The "all" scope's comparison is written as it always was, so old logs re-derive exactly.
  const double gain = scoped ? geomean(gains) : d.score / d.incumbent_score;
  const bool better = scoped ? !gains.empty() && gain > 1.0 + d.margin
                             : d.score > d.incumbent_score * (1.0 + d.margin);
  // The comparison that decided, with `cmp` (">" or "<=") between its sides.
  auto explain = [&](const char* cmp) {
    if (scoped) {
      os << "speedup " << gain << " over the incumbent on the " << gains.size()
         << " workload(s) it changes (" << changed << ") " << cmp << " 1 + " << d.margin
         << "; score " << d.score << ", incumbent " << d.incumbent_score;
    } else {
      os << "score " << d.score << " " << cmp << " incumbent " << d.incumbent_score << " x (1 + "
         << d.margin << ")";
    }
  };
  if (is_baseline) {
    d.verdict = fb::Verdict::KEEP;
    os << "baseline: every workload correct";
  } else if (scoped && gains.empty()) {
    d.verdict = fb::Verdict::REVERT;
    os << "runs its incumbent " << incumbent.substr(0, 12) << "'s variant on every workload";
  } else if (better) {
    d.verdict = fb::Verdict::KEEP;
    explain(">");
    fb::ConclusionRecordedT c;
    c.kind = fb::ConclusionKind::WIN;
    c.kernel_type = config_.kernel_type;
    c.move = proposal.move;
    c.speedup = gain;
    c.candidate_hash = proposal.candidate_hash;
    c.agent = proposal.agent;
    out.conclusion = std::move(c);
  } else {
    d.verdict = fb::Verdict::REVERT;
    explain("<=");
  }
  d.reason = os.str();
  const double band = std::max(config_.pair_band, noise);
  const bool near = scoped ? !gains.empty() && gain >= 1.0 + d.margin - band
                           : d.score >= d.incumbent_score * (1.0 + d.margin - band);
  *to_pair = !is_baseline && config_.pairs > 0 && paired_log_ && near &&
             incumbent != proposal.candidate_hash && !incumbent.empty();
  return out;
}

namespace {

// The first side of a pair that was not OK, as "pair i: workload w: STATUS: error".
// The first side of a pair that was not OK, as "pair i: workload w: STATUS: error": a failed
// or missing workload, or (candidate side) a median below the evaluation's SOL floor.
// `floors`: the problem's workloads, each with sol_margin x its evaluated sol_ns.
std::string pair_failure(const fb::PairMeasuredT& pair, bool candidate_side,
                         const std::vector<std::pair<std::string, double>>& floors) {
  const std::string at = "pair " + std::to_string(pair.index) + ": workload ";
  for (const auto& [name, floor] : floors) {
    const fb::PairSideT* side = nullptr;
    for (const auto& w : pair.workloads) {
      if (w->workload == name) side = (candidate_side ? w->candidate : w->incumbent).get();
    }
    if (side == nullptr) return at + name + ": no result";
    if (side->status != fb::WorkloadStatus::OK || !(side->median_ns > 0)) {
      return at + name + ": " + fb::EnumNameWorkloadStatus(side->status) +
             (side->error.empty() ? "" : ": " + side->error);
    }
    if (candidate_side && floor > 0 && side->median_ns < floor) {
      std::ostringstream os;
      os << at << name << ": IMPOSSIBLE: median " << side->median_ns
         << " ns is below the SOL floor " << floor << " ns";
      return os.str();
    }
  }
  return "";
}

// Pair i's ratio: the geometric mean of T_incumbent / T_candidate over the workloads in
// `scope` (aligned with `floors`). (pair_failure() has found every workload OK.)
double pair_ratio(const fb::PairMeasuredT& pair,
                  const std::vector<std::pair<std::string, double>>& floors,
                  const std::vector<bool>& scope) {
  std::vector<double> per_workload;
  for (size_t i = 0; i < floors.size(); ++i) {
    if (!scope[i]) continue;
    const std::string& name = floors[i].first;
    for (const auto& w : pair.workloads) {
      if (w->workload == name) {
        per_workload.push_back(w->incumbent->median_ns / w->candidate->median_ns);
        break;
      }
    }
  }
  return geomean(per_workload);
}

// How many of the pairs' ratios are at most 1 + margin: once `rank` are, the bound over all the
// pairs (the rank-th smallest ratio) cannot exceed it.
size_t ratios_at_most(const std::vector<double>& ratios, double margin) {
  return static_cast<size_t>(std::count_if(ratios.begin(), ratios.end(),
                                           [margin](double r) { return r <= 1.0 + margin; }));
}

}  // namespace

std::optional<std::pair<std::string, std::string>> GuardCore::slower_workload(
    const std::string& candidate, const std::string& incumbent,
    const std::vector<fb::PairMeasuredT>& pairs, size_t have) const {
  if (!revert_slower_) return std::nullopt;
  const auto form = candidates_.find(candidate);
  if (form == candidates_.end()) return std::nullopt;
  const std::vector<bool> scope = changed(candidate, incumbent);
  for (size_t w = 0; w < scope.size(); ++w) {
    const std::string& name = config_.workloads[w];
    // Gates only: a changed base is one kernel for every workload, traded off by the margin.
    if (!scope[w] || form->second.gates.count(name) == 0) continue;
    std::vector<double> slowdowns;  // T_candidate / T_incumbent per pair
    for (size_t i = 0; i < have && i < pairs.size(); ++i) {
      for (const auto& pw : pairs[i].workloads) {
        if (pw->workload == name && pw->candidate && pw->incumbent &&
            pw->incumbent->median_ns > 0) {
          slowdowns.push_back(pw->candidate->median_ns / pw->incumbent->median_ns);
          break;
        }
      }
    }
    if (slowdowns.empty()) continue;
    const MedianBound b = median_lower_bound(slowdowns, config_.pair_confidence);
    if (b.bound > 1.0) {
      std::ostringstream os;
      os.precision(4);
      os << "workload " << name << " is slower than on the incumbent: median speedup "
         << 1.0 / median(slowdowns) << ", upper bound " << 1.0 / b.bound << " < 1 ("
         << 100.0 * b.confidence << "% confidence, " << slowdowns.size()
         << " pairs); a kept candidate's gates slow no workload";
      return std::make_pair(name, os.str());
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, double>> GuardCore::sol_floors(
    const fb::CandidateEvaluatedT& evaluation) const {
  std::vector<std::pair<std::string, double>> floors;
  for (const auto& name : config_.workloads) {
    double sol_ns = 0;
    for (const auto& w : evaluation.workloads) {
      if (w->workload == name) sol_ns = w->sol_ns;
    }
    floors.emplace_back(name, config_.sol_margin * sol_ns);
  }
  return floors;
}

std::optional<PairRequest> GuardCore::next_pair(const fb::CandidateProposedT& proposal,
                                                const fb::CandidateEvaluatedT& evaluation,
                                                uint64_t evaluation_seq) const {
  bool to_pair = false;
  const GuardOutcome out = unpaired(proposal, evaluation, evaluation_seq, &to_pair);
  if (!to_pair) return std::nullopt;
  PairRequest r;
  r.incumbent_hash = incumbent_hash(proposal.agent);
  const auto* logged = logged_pairs(proposal.candidate_hash, r.incumbent_hash);
  const size_t have = logged == nullptr ? 0 : logged->size();
  if (have >= config_.pairs) return std::nullopt;
  // A failed pair decides at once: more pairs would not change a REJECT or a failed incumbent.
  const auto floors = sol_floors(evaluation);
  const std::vector<bool> scope = margin_workloads(proposal);
  std::vector<double> ratios;
  for (size_t i = 0; i < have; ++i) {
    if (!pair_failure((*logged)[i], true, floors).empty() ||
        !pair_failure((*logged)[i], false, floors).empty()) {
      return std::nullopt;
    }
    ratios.push_back(pair_ratio((*logged)[i], floors, scope));
  }
  // Decided early: enough pairs at or below the margin that the bound cannot exceed it.
  if (ratios_at_most(ratios, out.decision.margin) >=
      sign_test_rank(config_.pairs, config_.pair_confidence)) {
    return std::nullopt;
  }
  r.index = static_cast<uint32_t>(have);
  r.candidate_first = r.index % 2 == 1;
  return r;
}

std::vector<PairRequest> GuardCore::remaining_pairs(const fb::CandidateProposedT& proposal,
                                                    const fb::CandidateEvaluatedT& evaluation,
                                                    uint64_t evaluation_seq) const {
  std::vector<PairRequest> out;
  auto next = next_pair(proposal, evaluation, evaluation_seq);
  if (!next) return out;
  for (uint32_t i = next->index; i < config_.pairs; ++i) {
    PairRequest r = *next;
    r.index = i;
    r.candidate_first = i % 2 == 1;
    out.push_back(std::move(r));
  }
  return out;
}

GuardOutcome GuardCore::decide(const fb::CandidateProposedT& proposal,
                               const fb::CandidateEvaluatedT& evaluation,
                               uint64_t evaluation_seq) const {
  bool to_pair = false;
  GuardOutcome out = unpaired(proposal, evaluation, evaluation_seq, &to_pair);
  if (!to_pair) return out;
  fb::DecisionT& d = out.decision;
  const bool was_keep = d.verdict == fb::Verdict::KEEP;
  out.conclusion.reset();  // a win is recorded only once the pairs confirm it
  d.incumbent_hash = incumbent_hash(proposal.agent);
  const auto* logged = logged_pairs(proposal.candidate_hash, d.incumbent_hash);
  const size_t have = logged == nullptr ? 0 : std::min<size_t>(logged->size(), config_.pairs);
  d.pairs = static_cast<uint32_t>(have);
  const auto floors = sol_floors(evaluation);
  std::ostringstream os;
  os.precision(4);
  for (size_t i = 0; i < have; ++i) {
    const auto& pair = (*logged)[i];
    // The incumbent first: nothing a candidate does to the worker may turn into its KEEP, and
    // an incumbent that failed says nothing about the candidate.
    if (std::string f = pair_failure(pair, false, floors); !f.empty()) {
      d.verdict = fb::Verdict::REVERT;
      d.reason =
          "paired confirmation: the incumbent " + d.incumbent_hash.substr(0, 12) + " failed: " + f;
      return out;
    }
    if (std::string f = pair_failure(pair, true, floors); !f.empty()) {
      d.verdict = fb::Verdict::REJECT;
      d.reason = "paired confirmation against " + d.incumbent_hash.substr(0, 12) + ": " + f;
      fb::ConclusionRecordedT c;
      c.kind = fb::ConclusionKind::TRAP;
      c.kernel_type = config_.kernel_type;
      c.move = proposal.move;
      c.why = d.reason.substr(0, 512);
      c.candidate_hash = proposal.candidate_hash;
      c.agent = proposal.agent;
      out.conclusion = std::move(c);
      return out;
    }
  }
  std::vector<double> ratios;
  const std::vector<bool> scope = margin_workloads(proposal);
  for (size_t i = 0; i < have; ++i) ratios.push_back(pair_ratio((*logged)[i], floors, scope));
  const size_t rank = sign_test_rank(config_.pairs, config_.pair_confidence);
  const size_t low = ratios_at_most(ratios, d.margin);
  if (have < config_.pairs && low < rank) {
    d.verdict = fb::Verdict::REVERT;
    os << "paired confirmation incomplete: " << have << " of " << config_.pairs << " pairs against "
       << d.incumbent_hash.substr(0, 12) << " logged";
    d.reason = os.str();
    return out;
  }
  d.paired_ratio = median(ratios);
  if (low >= rank) {
    // Decided before (or with) the last pair: the rank-th smallest ratio is already at most
    // 1 + margin, whatever the remaining pairs would show.
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    d.paired_bound = sorted[rank - 1];
    d.paired_confidence =
        median_lower_bound(std::vector<double>(config_.pairs, 0.0), config_.pair_confidence)
            .confidence;
    d.verdict = fb::Verdict::REVERT;
    os << "paired against " << d.incumbent_hash.substr(0, 12) << ": " << low << " of " << have
       << " pairs show a speedup of at most 1 + " << d.margin << " (median " << d.paired_ratio
       << "), so the lower bound over " << config_.pairs << " pairs (the " << rank
       << (rank == 1   ? "st"
           : rank == 2 ? "nd"
           : rank == 3 ? "rd"
                       : "th")
       << " smallest) cannot exceed it; unpaired score " << d.score << ", incumbent "
       << d.incumbent_score;
    d.reason = os.str();
    return out;
  }
  const MedianBound b = median_lower_bound(ratios, config_.pair_confidence);
  d.paired_bound = b.bound;
  d.paired_confidence = b.confidence;
  bool keep = b.bound > 1.0 + d.margin;
  const auto slower =
      keep ? slower_workload(proposal.candidate_hash, d.incumbent_hash, *logged, have)
           : std::nullopt;
  keep = keep && !slower;
  os << "paired against " << d.incumbent_hash.substr(0, 12) << " (" << have
     << " pairs): median speedup " << d.paired_ratio << ", lower bound " << b.bound << " ("
     << 100.0 * b.confidence << "% confidence) " << (keep || slower ? ">" : "<=") << " 1 + "
     << d.margin << "; unpaired score " << d.score << (was_keep ? " > " : " <= ") << "incumbent "
     << d.incumbent_score;
  if (slower) {
    os << "; but " << slower->second;
    d.slower_workload = slower->first;
  }
  d.reason = os.str();
  if (keep) {
    d.verdict = fb::Verdict::KEEP;
    fb::ConclusionRecordedT c;
    c.kind = fb::ConclusionKind::WIN;
    c.kernel_type = config_.kernel_type;
    c.move = proposal.move;
    c.speedup = d.paired_ratio;
    c.candidate_hash = proposal.candidate_hash;
    c.agent = proposal.agent;
    out.conclusion = std::move(c);
  } else {
    d.verdict = fb::Verdict::REVERT;
  }
  return out;
}

}  // namespace arc::actors
