#pragma once
// An agent's drafting state, a fold of the log shared by the builtin and the external agent
// cores: its current skill, the skills it has used (first use first), and whether a plateau
// addressed to it still waits for a draft.
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::actors {

struct DraftState {
  explicit DraftState(std::string initial_skill);

  // StrategyDrafted for `agent`: the new skill becomes current (and used), the draft is done.
  // PlateauDetected of scope AGENT for `agent`: a draft is pending.
  void apply(const events::Event& e, const std::string& agent);
  // A proposal of this agent's own ends a pending draft (it proposed instead of drafting).
  void proposed() { pending = false; }
  bool used(const std::string& skill) const;

  std::string skill;
  std::vector<std::string> used_skills;
  bool pending = false;
};

}  // namespace arc::actors
