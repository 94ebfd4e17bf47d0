#pragma once
// AgentCore: a builtin agent's decisions. Its state is a fold of the log (its proposals, its
// drafts, plateaus addressed to it); its incumbent comes from the CampaignView. propose() is a
// pure function of (state, view, recall): the same prefix of the log gives the same proposal.
//
// A proposal may begin with a draft: after a PlateauDetected for this agent (or when its skill
// has nothing new left to try) it switches to another eligible skill and, after a plateau, when
// a sibling's incumbent scores higher, adopts a copy of it as its new base. Drafts never switch
// into an opt-in skill, and an agent in one keeps it through plateaus (skills/skill.h). When no
// skill has anything new around its incumbent, it builds on the campaign's other candidates,
// correct ones first.
//
// Skills with the "model" move also search beyond the incumbent's neighbourhood: the move, and
// the fallback when nothing new is left around the incumbent, is the pick of
// actors/model_move.h over the skill's search space (move text "model:ei:<variant key>", or
// "model:explore:<variant key>" while there is too little to fit).
//
// With a restriction (AgentSetup::restriction) every move is filtered by it: a candidate with a
// variant it does not list is not proposed, and the model's pool is its variants.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/draft_state.h"
#include "actors/memory_core.h"
#include "actors/search_space.h"
#include "actors/view.h"
#include "base/rng.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::actors {

struct AgentSetup {
  std::string name;
  uint32_t index = 0;
  std::string skill;  // initial skill
  uint64_t campaign_seed = 1;
  bool drafting = true;
  bool sibling_inspection = true;
  // Null (default): the problem's whole space. Else every proposal lies in this restriction
  // (each variant of the candidate listed) and the model move scores its variants alone
  // (arc-replay ablate --space measured). It is no event: a campaign run with one is
  // re-derived only with the same restriction.
  std::shared_ptr<const VariantRestriction> restriction;
};

struct Proposal {
  std::optional<fb::StrategyDraftedT> drafted;
  std::optional<fb::SiblingInspectedT> inspected;
  std::optional<fb::CandidateProposedT> proposed;  // empty: nothing new to propose
  std::string idle_reason;                         // why `proposed` is empty
  // llm/exec agents: the exchange the proposal was derived from; logged first, and logged
  // even when it gave no candidate (a recorded failure).
  std::optional<fb::AgentExchangeT> exchange;
};

class AgentCore {
 public:
  // `problem` and `skills` must outlive the core.
  AgentCore(AgentSetup setup, const problem::Problem& problem,
            const std::vector<skills::Skill>& skills);

  void apply(const events::Event& e);
  Proposal propose(const CampaignView& view, const Recall& recall) const;

  const std::string& name() const { return setup_.name; }
  const std::string& skill() const { return draft_.skill; }
  uint32_t proposals() const { return proposals_; }
  bool draft_pending() const { return draft_.pending; }

 private:
  struct Generated {
    std::string canonical;  // of the new candidate; its hash is taken once it is chosen
    std::string move;
  };
  // The composed gate of a view (per workload the fastest variant so far) and its canonical
  // form, worked out at most once per proposal: the view does not change while it is made.
  struct ComposedGate {
    bool done = false;
    std::optional<problem::Candidate> gated;
    std::string canonical;  // empty without a gate
  };
  const skills::Skill* find_skill(const std::string& name) const;
  std::optional<Generated> generate(const skills::Skill& skill, const Incumbent& incumbent,
                                    const CampaignView& view, const Recall& recall,
                                    uint64_t rng_seed, int attempts, ComposedGate& gate) const;
  // Eligible skills other than `from`, untried ones first, in a seeded order.
  std::vector<std::string> draft_order(const std::string& from, uint64_t rng_seed) const;

  AgentSetup setup_;
  const problem::Problem* problem_;
  const std::vector<skills::Skill>* skills_;
  DraftState draft_;
  uint32_t proposals_ = 0;
  // (skill, base, recall, composed gate) keys around which nothing new exists: a memo of a pure
  // predicate, so it never changes what propose() returns.
  mutable std::unordered_set<std::string> exhausted_;
};

// Deterministic 64-bit mixing (splitmix64, base/rng.h), the source of every agent's randomness.
using arc::mix64;
uint64_t seed_for(uint64_t campaign_seed, uint64_t a, uint64_t b);

}  // namespace arc::actors
