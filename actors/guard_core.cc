#include "actors/guard_core.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "actors/view.h"

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
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      if (p->agent == kCampaignActor && p->move == kBaselineMove) baseline_hash_ = p->candidate_hash;
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
          for (auto& [agent, score] : incumbents_) score = 1.0;
        }
        break;
      }
      ++decided_;
      if (p->verdict == fb::Verdict::KEEP) incumbents_[p->agent] = p->score;
      break;
    }
    case fb::Payload::AgentSpawned:
      incumbents_[e.payload.AsAgentSpawned()->agent] = 1.0;
      break;
    case fb::Payload::SiblingInspected: {
      const auto* p = e.payload.AsSiblingInspected();
      if (p->adopted) incumbents_[p->agent] = p->sibling_score;
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

GuardOutcome GuardCore::decide(const fb::CandidateProposedT& proposal,
                               const fb::CandidateEvaluatedT& evaluation,
                               uint64_t evaluation_seq) const {
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

  double noise = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    const auto* w = ws[i];
    const double base = is_baseline || baseline_ns_.size() != ws.size() ? w->median_ns
                                                                           : baseline_ns_[i];
    d.speedups.push_back(base / w->median_ns);
    const double head = base - w->sol_ns;
    d.sol_scores.push_back(head > 0 ? 1.0 / (1.0 + (w->median_ns - w->sol_ns) / head) : 1.0);
    noise = std::max(noise, w->spread / 2);
  }
  d.score = is_baseline ? 1.0 : geomean(d.speedups);
  d.noise = noise;
  d.margin = std::max(config_.margin, noise);
  std::ostringstream os;
  os.precision(4);
  if (is_baseline) {
    d.verdict = fb::Verdict::KEEP;
    os << "baseline: every workload correct";
  } else if (d.score > d.incumbent_score * (1.0 + d.margin)) {
    d.verdict = fb::Verdict::KEEP;
    os << "score " << d.score << " > incumbent " << d.incumbent_score << " x (1 + " << d.margin
       << ")";
    fb::ConclusionRecordedT c;
    c.kind = fb::ConclusionKind::WIN;
    c.kernel_type = config_.kernel_type;
    c.move = proposal.move;
    c.speedup = d.score / d.incumbent_score;
    c.candidate_hash = proposal.candidate_hash;
    c.agent = proposal.agent;
    out.conclusion = std::move(c);
  } else {
    d.verdict = fb::Verdict::REVERT;
    os << "score " << d.score << " <= incumbent " << d.incumbent_score << " x (1 + " << d.margin
       << ")";
  }
  d.reason = os.str();
  return out;
}

}  // namespace arc::actors
