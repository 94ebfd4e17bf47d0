#include "actors/plateau_core.h"

#include "actors/view.h"

namespace arc::actors {

void PlateauCore::apply(const events::Event& e) {
  switch (e.payload.type) {
    case fb::Payload::Decision: {
      const auto* p = e.payload.AsDecision();
      if (p->agent == kCampaignActor || p->verdict == fb::Verdict::STOP) break;
      auto& a = agents_[p->agent];
      ++a.decided;
      ++global_decided_;
      if (p->verdict == fb::Verdict::KEEP) {
        a.since_keep = 0;
        a.fired = false;
        global_since_keep_ = 0;
      } else {
        ++a.since_keep;
        ++global_since_keep_;
      }
      last_decided_agent_ = p->agent;
      break;
    }
    case fb::Payload::PlateauDetected: {
      const auto* p = e.payload.AsPlateauDetected();
      if (p->scope == fb::PlateauScope::CAMPAIGN) {
        campaign_fired_ = true;
      } else {
        agents_[p->agent].fired = true;
      }
      break;
    }
    case fb::Payload::StrategyDrafted: {
      auto& a = agents_[e.payload.AsStrategyDrafted()->agent];
      a.since_keep = 0;
      a.fired = false;
      break;
    }
    default:
      break;
  }
}

std::vector<fb::PlateauDetectedT> PlateauCore::due() const {
  std::vector<fb::PlateauDetectedT> out;
  if (auto it = agents_.find(last_decided_agent_); it != agents_.end()) {
    const AgentState& a = it->second;
    if (!a.fired && a.since_keep >= config_.window) {
      fb::PlateauDetectedT p;
      p.agent = last_decided_agent_;
      p.scope = fb::PlateauScope::AGENT;
      p.window = config_.window;
      p.candidates = a.decided;
      out.push_back(std::move(p));
    }
  }
  if (!campaign_fired_ && config_.global_window != 0 &&
      global_since_keep_ >= config_.global_window) {
    fb::PlateauDetectedT p;
    p.scope = fb::PlateauScope::CAMPAIGN;
    p.window = config_.global_window;
    p.candidates = global_decided_;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace arc::actors
