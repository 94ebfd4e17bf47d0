// The verify core on in-memory logs: a log made by the cores re-derives, a tampered one names
// the seq of the first difference. Links arc_verify (and so arc_cores) only.
#include "replay/verify_core.h"

#include <gtest/gtest.h>

#include "actors/core_factory.h"
#include "tests/cores/fixtures.h"

namespace arc::replay {
namespace {

using actors::CoreFactory;
using actors::CoreSettings;

class VerifyCore : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    skills_ = testing::toy_skills();
    CoreSettings s;
    s.seed = 11;
    s.budget = 4;
    actors::AgentSpec a0;
    a0.name = "a0";
    a0.skill = "tiling";
    s.agents = {a0};
    factory_ = std::make_unique<CoreFactory>(s, problem_, skills_, sources_, "host: test");
    log_ = record(*factory_);
  }

  // A campaign as the live shells would log it, driven by cores from `cores`: the baseline,
  // then `proposals` proposals of agent a0, each evaluated faster than the last.
  std::vector<events::Event> record(const CoreFactory& cores, int proposals = 3) {
    testing::LogBuilder log;
    auto view = cores.view();
    auto memory = cores.memory();
    auto guard = cores.guard();
    auto plateau = cores.plateau();
    auto agent = cores.agent(0);
    auto add = [&](const std::string& actor, auto payload) {
      const events::Event& e = log.add(actor, std::move(payload));
      view->apply(e);
      memory->apply(e);
      guard->apply(e);
      plateau->apply(e);
      agent->apply(e);
      return e.seq;
    };
    auto evaluate_and_decide = [&](const fb::CandidateProposedT& p, double small, double large) {
      const uint64_t eval_seq =
          add(actors::kGuardActor, testing::evaluation(p.candidate_hash, {small, large}));
      const auto* ev = log.log().back().payload.AsCandidateEvaluated();
      actors::GuardOutcome out = guard->decide(p, *ev, eval_seq);
      add(actors::kGuardActor, out.decision);
      if (out.conclusion) add(actors::kGuardActor, *out.conclusion);
      for (auto& due : plateau->due()) add(actors::kCampaignActor, due);
    };
    fb::CampaignStartedT started;
    started.mode = "lockstep";
    started.seed = 11;
    add(actors::kCampaignActor, started);
    fb::AgentSpawnedT spawned;
    spawned.agent = "a0";
    spawned.index = 0;
    add(actors::kCampaignActor, spawned);
    auto base = testing::proposal(actors::kCampaignActor, problem_.seed, actors::kBaselineMove);
    add(actors::kCampaignActor, base);
    evaluate_and_decide(base, 1000, 8000);
    for (int i = 0; i < proposals; ++i) {
      actors::Proposal p =
          agent->propose(*view, memory->recall(problem_.kernel_type, view->last_seq()));
      EXPECT_TRUE(p.proposed) << p.idle_reason;
      if (!p.proposed) break;
      if (p.drafted) add("a0", *p.drafted);
      if (p.inspected) add("a0", *p.inspected);
      add("a0", *p.proposed);
      evaluate_and_decide(*p.proposed, 900.0 - 100 * i, 7000.0 - 500 * i);
    }
    return log.log();
  }

  uint64_t seq_of(fb::Payload type, int nth) const {
    for (const auto& e : log_) {
      if (e.payload.type == type && nth-- == 0) return e.seq;
    }
    return 0;
  }

  problem::Problem problem_;
  std::vector<skills::Skill> skills_;
  std::map<std::string, std::string> sources_;
  std::unique_ptr<CoreFactory> factory_;
  std::vector<events::Event> log_;
};

TEST_F(VerifyCore, ALogMadeByTheCoresReDerives) {
  VerifyReport r = verify_log(log_, *factory_);
  EXPECT_TRUE(r.ok) << r.message << " at seq " << r.divergence_seq;
  EXPECT_EQ(r.events, log_.size());
  EXPECT_EQ(r.proposals, 3u);
  EXPECT_EQ(r.decisions, 4u);  // the baseline's and the agent's three
  EXPECT_EQ(r.divergence_seq, 0u);
}

TEST_F(VerifyCore, ATamperedDecisionIsNamedBySeq) {
  const uint64_t seq = seq_of(fb::Payload::Decision, 2);  // the agent's second candidate
  ASSERT_NE(seq, 0u);
  auto* d = log_[seq - 1].payload.AsDecision();
  ASSERT_EQ(d->verdict, fb::Verdict::KEEP);  // faster than its parent by far more than the margin
  d->verdict = fb::Verdict::REVERT;
  VerifyReport r = verify_log(log_, *factory_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.divergence_seq, seq);
  EXPECT_NE(r.message.find("decision differs"), std::string::npos) << r.message;
}

TEST_F(VerifyCore, ATamperedScoreIsNamedBySeq) {
  const uint64_t seq = seq_of(fb::Payload::Decision, 1);
  ASSERT_NE(seq, 0u);
  log_[seq - 1].payload.AsDecision()->score *= 1.01;
  VerifyReport r = verify_log(log_, *factory_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.divergence_seq, seq);
}

TEST_F(VerifyCore, ATamperedProposalIsNamedBySeq) {
  const uint64_t seq = seq_of(fb::Payload::CandidateProposed, 2);  // a0's second
  ASSERT_NE(seq, 0u);
  log_[seq - 1].payload.AsCandidateProposed()->move += "-edited";
  VerifyReport r = verify_log(log_, *factory_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.divergence_seq, seq);
  EXPECT_NE(r.message.find("CandidateProposed differs"), std::string::npos) << r.message;
}

TEST_F(VerifyCore, OtherSettingsDoNotVerifyTheLog) {
  // Cores built with another seed propose other candidates from the same views (the first
  // proposals may agree; some later one does not).
  CoreSettings other = factory_->settings();
  other.seed = 12;
  CoreFactory cores(other, problem_, skills_, sources_, "host: test");
  VerifyReport r = verify_log(log_, cores);
  EXPECT_FALSE(r.ok);
  ASSERT_GE(r.divergence_seq, 1u);
  EXPECT_EQ(log_[r.divergence_seq - 1].payload.type, fb::Payload::CandidateProposed) << r.message;
}

TEST_F(VerifyCore, APreambleNeedsNoCores) {
  EXPECT_EQ(verify_preamble({})->message, "empty log");
  std::vector<events::Event> tail(log_.begin() + 1, log_.end());
  auto r = verify_preamble(tail);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->divergence_seq, 2u);
  EXPECT_TRUE(r->damaged) << "a log that lost its CampaignStarted is damaged, not divergent";
  EXPECT_FALSE(verify_preamble(log_));
  log_.front().payload.AsCampaignStarted()->mode = "sweep";
  ASSERT_TRUE(verify_preamble(log_));
  EXPECT_TRUE(verify_preamble(log_)->ok);
}

}  // namespace
}  // namespace arc::replay
