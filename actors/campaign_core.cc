#include "actors/campaign_core.h"

#include <algorithm>
#include <set>

namespace arc::actors {

CampaignCore::CampaignCore(uint32_t budget, uint32_t global_plateau,
                           std::vector<std::string> agents, std::vector<std::string> workloads)
    : budget_(budget),
      global_plateau_(global_plateau),
      agents_(std::move(agents)),
      view_(std::move(workloads)) {}

void CampaignCore::apply(const events::Event& e) {
  view_.apply(e);
  switch (e.payload.type) {
    case fb::Payload::PlateauDetected:
      if (e.payload.AsPlateauDetected()->scope == fb::PlateauScope::CAMPAIGN) {
        campaign_plateau_ = true;
      }
      break;
    case fb::Payload::Decision: {
      const auto* d = e.payload.AsDecision();
      last_decision_seq_ = e.seq;
      undecided_.erase({d->agent, d->candidate_hash});
      if (d->agent == kCampaignActor && d->verdict != fb::Verdict::KEEP) baseline_rejected_ = true;
      break;
    }
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      idle_.erase(p->agent);
      undecided_[{p->agent, p->candidate_hash}] = {e.seq, *p};
      if (p->agent == kCampaignActor) baseline_ = *p;
      break;
    }
    case fb::Payload::CampaignStarted:
      started_ = true;
      break;
    case fb::Payload::PeaksMeasured:
      peaks_ = true;
      break;
    case fb::Payload::CampaignStopped:
      stopped_ = true;
      break;
    default:
      break;
  }
}

std::optional<std::string> CampaignCore::stop_reason() const {
  if (view_.decided() >= budget_) {
    return "budget of " + std::to_string(budget_) + " candidates spent";
  }
  if (campaign_plateau_) {
    return "campaign plateau: no KEEP in the last " + std::to_string(global_plateau_) +
           " candidates";
  }
  return std::nullopt;
}

uint32_t CampaignCore::remaining() const {
  return view_.decided() >= budget_ ? 0 : budget_ - view_.decided();
}

std::vector<size_t> CampaignCore::select_round(
    const std::vector<std::optional<Proposal>>& replies) const {
  std::vector<size_t> out;
  std::set<std::string> hashes;
  const uint32_t room = remaining();
  for (size_t i = 0; i < replies.size() && out.size() < room; ++i) {
    const auto& r = replies[i];
    if (!r || !r->proposed) continue;
    // Agents of one round cannot see each other: a candidate already proposed in this round is
    // left out, and its agent sits the round out.
    if (!hashes.insert(r->proposed->candidate_hash).second) continue;
    out.push_back(i);
  }
  return out;
}

const fb::CandidateProposedT* CampaignCore::baseline_proposal() const {
  return baseline_ ? &*baseline_ : nullptr;
}

std::vector<std::pair<uint64_t, fb::CandidateProposedT>> CampaignCore::undecided() const {
  std::vector<std::pair<uint64_t, fb::CandidateProposedT>> out;
  for (const auto& [key, item] : undecided_) out.push_back(item);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void CampaignCore::mark_idle(const std::string& agent, uint64_t seq) { idle_[agent] = seq; }

bool CampaignCore::all_idle() const {
  if (agents_.empty() || idle_.size() < agents_.size()) return false;
  for (const auto& [agent, at] : idle_) {
    if (at < last_decision_seq_) return false;  // the log has moved on since it looked
  }
  return true;
}

fb::CampaignStoppedT CampaignCore::stopped(const std::string& reason) const {
  fb::CampaignStoppedT s;
  s.reason = reason;
  s.candidates = view_.decided();
  if (const auto* best = view_.best(); best != nullptr) {
    s.best_hash = best->hash;
    s.best_score = best->score;
  }
  return s;
}

void JournalCore::apply(const events::Event& e) {
  last_seq_ = e.seq;
  if (e.payload.type == fb::Payload::CandidateProposed) {
    const auto* p = e.payload.AsCandidateProposed();
    proposals_.emplace(std::make_pair(p->agent, p->candidate_hash), e.seq);
  }
}

std::string JournalCore::refuse(const std::vector<events::Event>& batch) const {
  std::set<std::pair<std::string, std::string>> in_batch;
  for (const auto& e : batch) {
    if (e.payload.type == fb::Payload::NONE) return "an event without a payload";
    if (e.payload.type != fb::Payload::CandidateProposed) continue;
    const auto* p = e.payload.AsCandidateProposed();
    auto key = std::make_pair(p->agent, p->candidate_hash);
    if (auto it = proposals_.find(key); it != proposals_.end()) {
      return "agent " + p->agent + " already proposed candidate " +
             p->candidate_hash.substr(0, 12) + " at seq " + std::to_string(it->second);
    }
    if (!in_batch.insert(key).second) {
      return "agent " + p->agent + " proposes candidate " + p->candidate_hash.substr(0, 12) +
             " twice in one batch";
    }
  }
  return "";
}

}  // namespace arc::actors
