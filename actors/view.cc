#include "actors/view.h"

namespace arc::actors {

CampaignView::CampaignView(std::vector<std::string> workload_names)
    : workloads_(std::move(workload_names)) {}

const CandidateRecord* CampaignView::find(const std::string& hash) const {
  auto it = by_hash_.find(hash);
  return it == by_hash_.end() ? nullptr : &records_[it->second];
}

CandidateRecord* CampaignView::mutable_find(const std::string& hash) {
  auto it = by_hash_.find(hash);
  return it == by_hash_.end() ? nullptr : &records_[it->second];
}

const CandidateRecord* CampaignView::baseline() const { return find(baseline_hash_); }

const CandidateRecord* CampaignView::best() const { return find(best_hash_); }

const Incumbent* CampaignView::incumbent(const std::string& agent) const {
  auto it = incumbents_.find(agent);
  return it == incumbents_.end() ? nullptr : &it->second;
}

void CampaignView::apply(const events::Event& e) {
  last_seq_ = e.seq;
  switch (e.payload.type) {
    case fb::Payload::AgentSpawned: {
      const auto* p = e.payload.AsAgentSpawned();
      agents_.push_back(p->agent);
      if (const auto* b = baseline(); b != nullptr) {
        incumbents_[p->agent] = Incumbent{b->hash, b->candidate, 1.0};
      }
      break;
    }
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      if (by_hash_.count(p->candidate_hash) != 0) break;  // a duplicate proposal
      CandidateRecord r;
      r.hash = p->candidate_hash;
      auto c = problem::Candidate::from_canonical(p->canonical);
      if (c) r.candidate = std::move(c.value());
      r.agent = p->agent;
      r.parent = p->parent;
      r.skill = p->skill;
      r.move = p->move;
      r.proposed_seq = e.seq;
      by_hash_[r.hash] = records_.size();
      canonicals_.insert(p->canonical);
      records_.push_back(std::move(r));
      break;
    }
    case fb::Payload::CandidateEvaluated: {
      const auto* p = e.payload.AsCandidateEvaluated();
      CandidateRecord* r = mutable_find(p->candidate_hash);
      if (r == nullptr) break;
      r->evaluated_seq = e.seq;
      r->workloads.assign(workloads_.size(), WorkloadOutcome{});
      for (const auto& w : p->workloads) {
        for (size_t i = 0; i < workloads_.size(); ++i) {
          if (workloads_[i] == w->workload) {
            r->workloads[i] = {w->status == fb::WorkloadStatus::OK, w->median_ns,
                               w->status == fb::WorkloadStatus::UNANSWERED};
          }
        }
      }
      break;
    }
    case fb::Payload::Decision: {
      const auto* p = e.payload.AsDecision();
      CandidateRecord* r = mutable_find(p->candidate_hash);
      if (r == nullptr) break;
      const bool is_baseline = r->agent == kCampaignActor && r->move == kBaselineMove;
      if (p->verdict == fb::Verdict::STOP) break;
      if (!p->slower_workload.empty()) {
        slower_[p->slower_workload].insert(r->candidate.variant_for(p->slower_workload).key());
      }
      // A duplicate proposal is decided again for its proposer; the record keeps its first
      // verdict unless this one is a KEEP.
      if (!r->verdict || p->verdict == fb::Verdict::KEEP) {
        r->verdict = p->verdict;
        r->score = p->score;
      }
      if (is_baseline) {
        if (p->verdict == fb::Verdict::KEEP) {
          baseline_hash_ = r->hash;
          best_hash_ = r->hash;
          for (const auto& a : agents_) incumbents_[a] = Incumbent{r->hash, r->candidate, 1.0};
        }
        break;
      }
      ++decided_;
      if (p->verdict == fb::Verdict::KEEP) {
        incumbents_[p->agent] = Incumbent{r->hash, r->candidate, p->score};
        const CandidateRecord* best = this->best();
        if (best == nullptr || p->score > best->score) best_hash_ = r->hash;
      }
      break;
    }
    case fb::Payload::SiblingInspected: {
      const auto* p = e.payload.AsSiblingInspected();
      if (!p->adopted) break;
      // The adopted incumbent is the one the inspection named, whatever the sibling kept since.
      if (const auto* r = find(p->sibling_incumbent); r != nullptr) {
        incumbents_[p->agent] = Incumbent{r->hash, r->candidate, p->sibling_score};
      }
      break;
    }
    default:
      break;
  }
}

bool CampaignView::slower_on(const std::string& workload, const problem::Variant& variant) const {
  auto it = slower_.find(workload);
  return it != slower_.end() && it->second.count(variant.key()) != 0;
}

}  // namespace arc::actors
