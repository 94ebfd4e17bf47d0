#include "actors/agent_core.h"

#include <set>

#include <gtest/gtest.h>

#include "actors/guard_core.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::evaluation;
using testing::proposal;

class AgentCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    skills_ = testing::toy_skills();
    view_ = CampaignView({"small", "large"});
    testing::open_campaign(log_, problem_, {"a1", "a2"},
                           [this](const events::Event& e) { apply(e); });
  }

  void apply(const events::Event& e) {
    view_.apply(e);
    memory_.apply(e);
    for (auto& c : cores_) c->apply(e);
  }

  AgentCore& add_agent(const std::string& name, uint32_t index, const std::string& skill) {
    cores_.push_back(std::make_unique<AgentCore>(
        AgentSetup{name, index, skill, 7, true, true, nullptr}, problem_, skills_));
    return *cores_.back();
  }

  // Logs a proposal (no evaluation) so the agent moves on.
  void log_proposal(const Proposal& p) {
    if (p.drafted) apply(log_.add(p.proposed->agent, *p.drafted));
    if (p.inspected) apply(log_.add(p.proposed->agent, *p.inspected));
    apply(log_.add(p.proposed->agent, *p.proposed));
  }

  // Logs an evaluation and decision of `hash` for `agent`.
  void decide(const std::string& agent, const fb::CandidateProposedT& p,
              std::vector<double> medians, fb::Verdict v, double score) {
    apply(log_.add(kGuardActor, evaluation(p.candidate_hash, medians)));
    fb::DecisionT d;
    d.agent = agent;
    d.candidate_hash = p.candidate_hash;
    d.verdict = v;
    d.score = score;
    apply(log_.add(kGuardActor, d));
  }

  // Agent a2's two candidates, each the fastest on one workload: TILE_M = 16 on small
  // (reverted), VEC = 4 on large (kept).
  std::pair<problem::Candidate, problem::Candidate> fast_on_one_workload_each() {
    problem::Candidate small_fast = problem_.seed;
    small_fast.base.knobs["TILE_M"] = "16";
    problem::Candidate large_fast = problem_.seed;
    large_fast.base.knobs["VEC"] = "4";
    auto p1 = proposal("a2", small_fast, "m1");
    apply(log_.add("a2", p1));
    decide("a2", p1, {200, 9000}, fb::Verdict::REVERT, 1.3);
    auto p2 = proposal("a2", large_fast, "m2");
    apply(log_.add("a2", p2));
    decide("a2", p2, {1200, 2000}, fb::Verdict::KEEP, 1.8);
    return {small_fast, large_fast};
  }

  problem::Problem problem_;
  std::vector<skills::Skill> skills_;
  CampaignView view_;
  MemoryCore memory_;
  testing::LogBuilder log_;
  std::vector<std::unique_ptr<AgentCore>> cores_;
};

TEST_F(AgentCoreTest, ProposesWithinItsSkillsKnobs) {
  AgentCore& a = add_agent("a1", 0, "tiling");
  for (int i = 0; i < 3; ++i) {  // TILE_M has three values besides the seed's
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value()) << p.idle_reason;
    EXPECT_EQ(p.proposed->skill, "tiling");
    EXPECT_EQ(p.proposed->parent, problem_.seed.hash());
    EXPECT_EQ(p.proposed->view_seq, view_.last_seq());
    auto c = problem::Candidate::from_canonical(p.proposed->canonical);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->hash(), p.proposed->candidate_hash);
    EXPECT_EQ(c->base.knobs.at("VEC"), "1") << "tiling must not touch VEC";
    EXPECT_EQ(p.proposed->move.rfind("knob:TILE_M=", 0), 0u) << p.proposed->move;
    log_proposal(p);
  }
}

TEST_F(AgentCoreTest, SameViewGivesTheSameProposal) {
  AgentCore& a = add_agent("a1", 0, "tiling");
  AgentCore& twin = add_agent("a1", 0, "tiling");
  Proposal p1 = a.propose(view_, memory_.recall("softmax"));
  Proposal p2 = twin.propose(view_, memory_.recall("softmax"));
  ASSERT_TRUE(p1.proposed && p2.proposed);
  EXPECT_TRUE(*p1.proposed == *p2.proposed);
}

TEST_F(AgentCoreTest, NeverRepeatsACandidateAndDraftsWhenExhausted) {
  AgentCore& a = add_agent("a1", 0, "tiling");
  std::set<std::string> seen{problem_.seed.hash()};
  bool drafted = false;
  for (int i = 0; i < 40; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    if (!p.proposed) break;
    EXPECT_TRUE(seen.insert(p.proposed->candidate_hash).second) << "repeated " << p.proposed->move;
    drafted |= p.drafted.has_value();
    log_proposal(p);
  }
  // TILE_M has 3 other values: tiling runs out after 3 and drafts another skill.
  EXPECT_TRUE(drafted);
  EXPECT_NE(a.skill(), "tiling");
  EXPECT_GT(seen.size(), 4u);
}

TEST_F(AgentCoreTest, AvoidsRecalledTraps) {
  AgentCore& a = add_agent("a1", 0, "tiling");
  fb::ConclusionRecordedT trap;
  trap.kind = fb::ConclusionKind::TRAP;
  trap.kernel_type = "softmax";
  trap.move = "knob:TILE_M=16";
  apply(log_.add(kGuardActor, trap));
  for (int i = 0; i < 2; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value());
    EXPECT_NE(p.proposed->move, "knob:TILE_M=16");
    log_proposal(p);
  }
}

TEST_F(AgentCoreTest, ReappliesRecalledWins) {
  AgentCore& a = add_agent("a1", 0, "vectorize");
  fb::ConclusionRecordedT win;
  win.kind = fb::ConclusionKind::WIN;
  win.kernel_type = "softmax";
  win.move = "knob:VEC=4";
  win.speedup = 3.0;
  apply(log_.add(kGuardActor, win));
  std::set<std::string> moves;
  for (int i = 0; i < 4; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value());
    moves.insert(p.proposed->move);
    log_proposal(p);
  }
  EXPECT_EQ(moves.count("knob:VEC=4"), 1u);
}

TEST_F(AgentCoreTest, PlateauDraftsAndAdoptsAFasterSibling) {
  AgentCore& a = add_agent("a1", 0, "tiling");
  add_agent("a2", 1, "vectorize");
  // a2 keeps a 3x candidate.
  problem::Candidate fast = problem_.seed;
  fast.base.knobs["VEC"] = "4";
  auto fp = proposal("a2", fast, "knob:VEC=4", view_.last_seq());
  apply(log_.add("a2", fp));
  decide("a2", fp, {333, 2666}, fb::Verdict::KEEP, 3.0);
  fb::PlateauDetectedT pl;
  pl.agent = "a1";
  pl.scope = fb::PlateauScope::AGENT;
  apply(log_.add("plateau", pl));
  ASSERT_TRUE(a.draft_pending());
  Proposal p = a.propose(view_, memory_.recall("softmax"));
  ASSERT_TRUE(p.drafted.has_value());
  EXPECT_EQ(p.drafted->from_skill, "tiling");
  EXPECT_NE(p.drafted->to_skill, "tiling");
  ASSERT_TRUE(p.inspected.has_value());
  EXPECT_EQ(p.inspected->sibling, "a2");
  EXPECT_TRUE(p.inspected->adopted);
  ASSERT_TRUE(p.proposed.has_value());
  EXPECT_EQ(p.proposed->parent, fp.candidate_hash);
  EXPECT_EQ(p.proposed->skill, p.drafted->to_skill);
  log_proposal(p);
  EXPECT_EQ(a.skill(), p.drafted->to_skill);
  EXPECT_FALSE(a.draft_pending());
  ASSERT_NE(view_.incumbent("a1"), nullptr);
  EXPECT_EQ(view_.incumbent("a1")->hash, fp.candidate_hash);
  // The sibling is untouched.
  EXPECT_EQ(view_.incumbent("a2")->hash, fp.candidate_hash);
}

TEST_F(AgentCoreTest, ShapeGateComposesPerWorkloadBest) {
  AgentCore& a = add_agent("a1", 0, "shape-gate");
  const auto [small_fast, large_fast] = fast_on_one_workload_each();
  bool gated = false;
  for (int i = 0; i < 6 && !gated; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value());
    if (p.proposed->move.rfind("shape_gate:", 0) == 0) {
      gated = true;
      auto c = problem::Candidate::from_canonical(p.proposed->canonical);
      ASSERT_TRUE(c.ok());
      EXPECT_TRUE(c->variant_for("small") == small_fast.base);
      EXPECT_TRUE(c->variant_for("large") == large_fast.base);
      EXPECT_EQ(c->gates.size(), 1u);
    }
    log_proposal(p);
  }
  EXPECT_TRUE(gated);
}

// A REVERT whose pairs showed a variant slower on a workload (Decision.slower_workload) takes
// that variant out of the gater's compositions for that workload: the composition falls back to
// the next fastest variant there, so the gate table without the slow gate is proposed.
TEST_F(AgentCoreTest, ShapeGateLeavesOutAVariantShownSlowerInPairs) {
  AgentCore& a = add_agent("a1", 0, "shape-gate");
  const auto [small_fast, large_fast] = fast_on_one_workload_each();
  // A composition gating large to large_fast's variant, reverted because that variant was
  // slower on large in its pairs.
  problem::Candidate table = small_fast;
  table.gates["large"] = large_fast.base;
  auto p3 = proposal("a2", table, "m3");
  apply(log_.add("a2", p3));
  apply(log_.add(kGuardActor, evaluation(p3.candidate_hash, {200, 2000})));
  fb::DecisionT d;
  d.agent = "a2";
  d.candidate_hash = p3.candidate_hash;
  d.verdict = fb::Verdict::REVERT;
  d.score = 2.0;
  d.slower_workload = "large";
  apply(log_.add(kGuardActor, d));
  ASSERT_TRUE(view_.slower_on("large", large_fast.base));
  EXPECT_FALSE(view_.slower_on("small", large_fast.base));
  EXPECT_FALSE(view_.slower_on("large", small_fast.base));
  bool gated = false;
  for (int i = 0; i < 8; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value());
    if (p.proposed->move.rfind("shape_gate:", 0) == 0) {
      gated = true;
      auto c = problem::Candidate::from_canonical(p.proposed->canonical);
      ASSERT_TRUE(c.ok());
      EXPECT_TRUE(c->variant_for("small") == small_fast.base) << p.proposed->canonical;
      // The next fastest on large: the baseline's variant (8000 ns against small_fast's 9000).
      EXPECT_TRUE(c->variant_for("large") == problem_.seed.base) << p.proposed->canonical;
    }
    log_proposal(p);
  }
  EXPECT_TRUE(gated);
}

TEST(AgentRng, MixIsDeterministic) {
  EXPECT_EQ(mix64(1), mix64(1));
  EXPECT_NE(seed_for(1, 2, 3), seed_for(1, 2, 4));
  EXPECT_EQ(seed_for(9, 8, 7), seed_for(9, 8, 7));
}

}  // namespace
}  // namespace arc::actors
