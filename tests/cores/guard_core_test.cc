#include "actors/guard_core.h"

#include <gtest/gtest.h>

#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::evaluation;
using testing::LogBuilder;
using testing::proposal;

class GuardCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    GuardConfig gc{0.02, 3, "softmax", {"small", "large"}};
    gc.pairs = 0;  // the rule on the evaluation alone (paired decisions: guard_pairing_test.cc)
    core_ = std::make_unique<GuardCore>(gc);
    fb::AgentSpawnedT a;
    a.agent = "a1";
    apply(log_.add(kCampaignActor, a));
    auto base = proposal(kCampaignActor, problem_.seed, kBaselineMove);
    apply(log_.add(kCampaignActor, base));
    auto ev = evaluation(base.candidate_hash, {1000, 8000});
    const auto& e = log_.add(kGuardActor, ev);
    apply(e);
    auto out = core_->decide(base, ev, e.seq);
    EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP);
    EXPECT_FALSE(out.conclusion.has_value());
    apply(log_.add(kGuardActor, out.decision));
  }
  void apply(const events::Event& e) { core_->apply(e); }
  problem::Candidate variant(const std::string& tile) {
    problem::Candidate c = problem_.seed;
    c.base.knobs["TILE_M"] = tile;
    return c;
  }

  problem::Problem problem_;
  std::unique_ptr<GuardCore> core_;
  LogBuilder log_;
};

TEST_F(GuardCoreTest, KeepsAFasterCandidateAndRecordsAWin) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto out = core_->decide(p, evaluation(p.candidate_hash, {500, 4000}), 10);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP);
  EXPECT_NEAR(out.decision.score, 2.0, 1e-12);
  ASSERT_EQ(out.decision.speedups.size(), 2u);
  EXPECT_NEAR(out.decision.speedups[1], 2.0, 1e-12);
  ASSERT_TRUE(out.conclusion.has_value());
  EXPECT_EQ(out.conclusion->kind, fb::ConclusionKind::WIN);
  EXPECT_EQ(out.conclusion->move, "knob:TILE_M=16");
  EXPECT_NEAR(out.conclusion->speedup, 2.0, 1e-12);
}

TEST_F(GuardCoreTest, RevertsWithinTheMargin) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto out = core_->decide(p, evaluation(p.candidate_hash, {990, 7920}), 10);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_FALSE(out.conclusion.has_value());
}

TEST_F(GuardCoreTest, MarginIsNeverBelowMeasuredNoise) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  // 10% faster, but the samples spread by 40% (half-IQR 20%): not a KEEP.
  auto out = core_->decide(p, evaluation(p.candidate_hash, {900, 7200}, 0.40), 10);
  EXPECT_NEAR(out.decision.margin, 0.20, 1e-12);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
}

TEST_F(GuardCoreTest, RejectsAFailedWorkloadAndRecordsATrap) {
  auto p = proposal("a1", variant("64"), "knob:TILE_M=64");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  ev.workloads[1]->status = fb::WorkloadStatus::WRONG_RESULT;
  ev.workloads[1]->error = "matched 0.91 < 1.0";
  auto out = core_->decide(p, ev, 10);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REJECT);
  EXPECT_NE(out.decision.reason.find("large: WRONG_RESULT"), std::string::npos);
  ASSERT_TRUE(out.conclusion.has_value());
  EXPECT_EQ(out.conclusion->kind, fb::ConclusionKind::TRAP);
  EXPECT_EQ(out.conclusion->move, "knob:TILE_M=64");
}

TEST_F(GuardCoreTest, RejectsATimeBelowTheSolBound) {
  auto p = proposal("a1", variant("32"), "knob:TILE_M=32");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  ev.workloads[0]->sol_ns = 600;
  auto out = core_->decide(p, ev, 10);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REJECT);
  EXPECT_NE(out.decision.reason.find("IMPOSSIBLE"), std::string::npos);
}

TEST_F(GuardCoreTest, TheSolMarginIsTheGuardsAndDefaultsPerBackend) {
  EXPECT_EQ(sol_margin_for(std::nullopt, "host"), 1.0);
  EXPECT_EQ(sol_margin_for(std::nullopt, "cuda"), 0.5);
  EXPECT_EQ(sol_margin_for(0.25, "cuda"), 0.25);
  // A median of 500 ns against a bound of 600 ns: impossible for a host problem, plausible
  // for a CUDA one (measured peaks; docs/cuda-evaluator.md), impossible again under 0.9.
  auto p = proposal("a1", variant("32"), "knob:TILE_M=32");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  ev.workloads[0]->sol_ns = 600;
  auto decide_with = [&](double sol_margin) {
    GuardConfig gc{0.02, 3, "softmax", {"small", "large"}, sol_margin};
    gc.pairs = 0;
    GuardCore core(gc);
    for (const auto& e : log_.log()) core.apply(e);
    return core.decide(p, ev, 10).decision;
  };
  EXPECT_EQ(decide_with(kCudaSolMargin).verdict, fb::Verdict::KEEP);
  const auto strict = decide_with(0.9);
  EXPECT_EQ(strict.verdict, fb::Verdict::REJECT);
  EXPECT_NE(
      strict.reason.find("IMPOSSIBLE: median 500 ns is below the SOL bound 600 ns x 0.9 = 540 ns"),
      std::string::npos)
      << strict.reason;
  // An evaluation a worker already judged (logs written before the guard took the verdict
  // over) is rejected for its status, whatever the margin.
  ev.workloads[0]->status = fb::WorkloadStatus::IMPOSSIBLE;
  ev.workloads[0]->error = "median 500 ns is below the speed-of-light bound";
  const auto old = decide_with(kCudaSolMargin);
  EXPECT_EQ(old.verdict, fb::Verdict::REJECT);
  EXPECT_NE(old.reason.find("small: IMPOSSIBLE: median 500 ns"), std::string::npos) << old.reason;
}

TEST_F(GuardCoreTest, ComparesAgainstTheAgentsIncumbent) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  const auto& e = log_.add(kGuardActor, ev);
  apply(e);
  auto out = core_->decide(p, ev, e.seq);
  apply(log_.add(kGuardActor, out.decision));
  EXPECT_NEAR(core_->incumbent_score("a1"), 2.0, 1e-12);
  auto q = proposal("a1", variant("32"), "knob:TILE_M=32");
  auto slower = core_->decide(q, evaluation(q.candidate_hash, {600, 4800}), 20);
  EXPECT_EQ(slower.decision.verdict, fb::Verdict::REVERT);  // 1.67x < incumbent 2x
  EXPECT_NEAR(slower.decision.incumbent_score, 2.0, 1e-12);
}

TEST_F(GuardCoreTest, StopsOnceTheBudgetIsSpent) {
  for (int i = 0; i < 3; ++i) {
    auto p = proposal("a1", variant(i == 0 ? "16" : i == 1 ? "32" : "64"), "m");
    EXPECT_FALSE(core_->stop_decision(p).has_value());
    auto ev = evaluation(p.candidate_hash, {2000, 16000});
    const auto& e = log_.add(kGuardActor, ev);
    apply(e);
    apply(log_.add(kGuardActor, core_->decide(p, ev, e.seq).decision));
  }
  EXPECT_TRUE(core_->stopping());
  auto stop = core_->stop_decision(proposal("a1", variant("8"), "m"));
  ASSERT_TRUE(stop.has_value());
  EXPECT_EQ(stop->verdict, fb::Verdict::STOP);
}

TEST_F(GuardCoreTest, RemembersEvaluationsForDedup) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  EXPECT_FALSE(core_->earlier_evaluation(p.candidate_hash).has_value());
  const auto& e = log_.add(kGuardActor, evaluation(p.candidate_hash, {500, 4000}));
  apply(e);
  EXPECT_EQ(core_->earlier_evaluation(p.candidate_hash), e.seq);
}

TEST(Geomean, OfSpeedups) {
  EXPECT_NEAR(geomean({2.0, 8.0}), 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(geomean({}), 1.0);
}

}  // namespace
}  // namespace arc::actors
