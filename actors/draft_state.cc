#include "actors/draft_state.h"

#include <algorithm>
#include <utility>

namespace arc::actors {

DraftState::DraftState(std::string initial_skill) : skill(std::move(initial_skill)) {
  used_skills.push_back(skill);
}

bool DraftState::used(const std::string& s) const {
  return std::find(used_skills.begin(), used_skills.end(), s) != used_skills.end();
}

void DraftState::apply(const events::Event& e, const std::string& agent) {
  switch (e.payload.type) {
    case fb::Payload::StrategyDrafted: {
      const auto* p = e.payload.AsStrategyDrafted();
      if (p->agent != agent) break;
      skill = p->to_skill;
      if (!used(skill)) used_skills.push_back(skill);
      pending = false;
      break;
    }
    case fb::Payload::PlateauDetected: {
      const auto* p = e.payload.AsPlateauDetected();
      if (p->scope == fb::PlateauScope::AGENT && p->agent == agent) pending = true;
      break;
    }
    default:
      break;
  }
}

}  // namespace arc::actors
