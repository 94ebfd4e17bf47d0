// Paired decisions (actors/guard_core.h, "Paired decisions"): which candidates are paired, with
// which incumbent and in which order, and how the pairs decide.
#include <cmath>

#include <gtest/gtest.h>

#include "actors/guard_core.h"
#include "base/stats.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::evaluation;
using testing::LogBuilder;
using testing::proposal;

class GuardPairingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    GuardConfig gc{0.02, 50, "softmax", {"small", "large"}};
    gc.pairs = 10;
    core_ = std::make_unique<GuardCore>(gc);
    fb::CampaignStartedT started;
    auto marker = std::make_unique<fb::KeyValueT>();
    marker->key = kDecisionsKey;
    marker->value = kPairedDecisions;
    started.software.push_back(std::move(marker));
    apply(log_.add(kCampaignActor, started));
    testing::open_campaign(log_, problem_, {"a1", "a2"},
                           [this](const events::Event& e) { apply(e); });
    baseline_ = problem_.seed.hash();
  }
  void apply(const events::Event& e) { core_->apply(e); }
  problem::Candidate variant(const std::string& tile) {
    problem::Candidate c = problem_.seed;
    c.base.knobs["TILE_M"] = tile;
    return c;
  }
  // Pair `index`: the candidate at cand_ns and the incumbent at inc_ns on both workloads
  // (scaled: large = 8 x small).
  fb::PairMeasuredT pair(const fb::CandidateProposedT& p, const std::string& incumbent,
                         uint32_t index, double cand_ns, double inc_ns, uint64_t eval_seq) {
    return testing::pair_measured(p, incumbent, index, eval_seq,
                                  {{"small", cand_ns, inc_ns}, {"large", 8 * cand_ns, 8 * inc_ns}});
  }
  // Logs the candidate's proposal and evaluation; returns the evaluation's seq.
  uint64_t evaluate(const fb::CandidateProposedT& p, const fb::CandidateEvaluatedT& ev) {
    apply(log_.add("a", p));
    return log_.add(kGuardActor, ev).seq;
  }
  // Logs pairs while the core asks for them, with the candidate's time of pair i from `ns(i)`
  // and the incumbent at 1000 ns; returns how many were asked for.
  template <class Ns>
  uint32_t run_pairs(const fb::CandidateProposedT& p, const fb::CandidateEvaluatedT& ev,
                     uint64_t seq, Ns ns) {
    uint32_t n = 0;
    while (auto next = core_->next_pair(p, ev, seq)) {
      EXPECT_EQ(next->index, n);
      EXPECT_EQ(next->candidate_first, n % 2 == 1);
      apply(log_.add(kGuardActor, pair(p, next->incumbent_hash, n, ns(n), 1000, seq)));
      ++n;
      if (n > 100) break;
    }
    return n;
  }

  problem::Problem problem_;
  std::unique_ptr<GuardCore> core_;
  LogBuilder log_;
  std::string baseline_;
};

TEST_F(GuardPairingTest, AWouldBeKeepIsPairedWithTheBaselineAndUndecidedWithoutItsPairs) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {900, 7200});
  const uint64_t seq = evaluate(p, ev);
  auto next = core_->next_pair(p, ev, seq);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->incumbent_hash, baseline_);
  EXPECT_EQ(next->index, 0u);
  EXPECT_FALSE(next->candidate_first);  // pair 0: incumbent first
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_NE(out.decision.reason.find("paired confirmation incomplete: 0 of 10"), std::string::npos);
  EXPECT_FALSE(out.conclusion.has_value());
}

TEST_F(GuardPairingTest, PairsThatConfirmTheGainKeepWithTheirRatioAndBound) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {900, 7200});
  const uint64_t seq = evaluate(p, ev);
  // The candidate 5% faster in every pair, within +-0.5%.
  EXPECT_EQ(run_pairs(p, ev, seq, [](uint32_t i) { return 1000 / (1.05 + 0.001 * (i % 5)); }), 10u);
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
  EXPECT_EQ(out.decision.pairs, 10u);
  EXPECT_EQ(out.decision.incumbent_hash, baseline_);
  EXPECT_NEAR(out.decision.paired_ratio, 1.052, 1e-9);
  EXPECT_NEAR(out.decision.paired_bound, 1.05, 1e-9);  // the 2nd smallest of 10
  EXPECT_GT(out.decision.paired_confidence, 0.95);
  EXPECT_NEAR(out.decision.score, 1000.0 / 900.0, 1e-9);  // the evaluation's, over the baseline
  ASSERT_TRUE(out.conclusion.has_value());
  EXPECT_EQ(out.conclusion->kind, fb::ConclusionKind::WIN);
  EXPECT_NEAR(out.conclusion->speedup, out.decision.paired_ratio, 1e-12);
}

TEST_F(GuardPairingTest, AnUnpairedGainThatThePairsDoNotShowIsReverted) {
  // A/A: the evaluation happened to run 10% faster than the baseline's; in pairs it is the same.
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {900, 7200});
  const uint64_t seq = evaluate(p, ev);
  // Two pairs at or below 1 + margin decide it: the bound over 10 pairs is the 2nd smallest.
  EXPECT_EQ(run_pairs(p, ev, seq, [](uint32_t i) { return 1000 * (1 + 0.004 * ((i % 3) - 1.0)); }),
            2u);
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_EQ(out.decision.pairs, 2u);
  EXPECT_NE(out.decision.reason.find("2 of 2 pairs show a speedup of at most 1 + 0.02"),
            std::string::npos)
      << out.decision.reason;
  EXPECT_LE(out.decision.paired_bound, 1.02);
  EXPECT_FALSE(out.conclusion.has_value());
}

TEST_F(GuardPairingTest, OnePairBelowTheMarginDoesNotSinkAClearGainButTwoDo) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {900, 7200});
  const uint64_t seq = evaluate(p, ev);
  run_pairs(p, ev, seq, [](uint32_t i) { return i == 3 ? 1000.0 : 1000 / 1.05; });
  EXPECT_EQ(core_->decide(p, ev, seq).decision.verdict, fb::Verdict::KEEP);

  auto q = proposal("a2", variant("32"), "knob:TILE_M=32");
  auto ev2 = evaluation(q.candidate_hash, {900, 7200});
  const uint64_t seq2 = evaluate(q, ev2);
  EXPECT_EQ(
      run_pairs(q, ev2, seq2, [](uint32_t i) { return i == 3 || i == 8 ? 1000.0 : 1000 / 1.05; }),
      9u);  // decided at the second pair at or below the margin
  EXPECT_EQ(core_->decide(q, ev2, seq2).decision.verdict, fb::Verdict::REVERT);
}

TEST_F(GuardPairingTest, AClearRevertIsNotPaired) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {1200, 9600});  // 20% slower: far below the band
  const uint64_t seq = evaluate(p, ev);
  EXPECT_FALSE(core_->next_pair(p, ev, seq).has_value());
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_EQ(out.decision.pairs, 0u);
}

TEST_F(GuardPairingTest, ACandidateJustBelowTheMarginIsPairedToo) {
  // 1% faster unpaired: below the 2% margin but within the 5% band.
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {990, 7920});
  const uint64_t seq = evaluate(p, ev);
  EXPECT_TRUE(core_->next_pair(p, ev, seq).has_value());
  // The pairs show 4%: a KEEP the unpaired measurement would have missed.
  run_pairs(p, ev, seq, [](uint32_t) { return 1000 / 1.04; });
  EXPECT_EQ(core_->decide(p, ev, seq).decision.verdict, fb::Verdict::KEEP);
}

TEST_F(GuardPairingTest, ACandidateFailingInAPairIsRejectedWithATrapAndNoMorePairsAreAsked) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  const uint64_t seq = evaluate(p, ev);
  for (uint32_t i = 0; i < 3; ++i) {
    auto m = pair(p, baseline_, i, 500, 1000, seq);
    if (i == 2) {
      m.workloads[1]->candidate->status = fb::WorkloadStatus::STALE_OUTPUT;
      m.workloads[1]->candidate->error = "timed run 7 does not match the reference";
    }
    apply(log_.add(kGuardActor, m));
  }
  EXPECT_FALSE(core_->next_pair(p, ev, seq).has_value());
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REJECT);
  EXPECT_NE(out.decision.reason.find("pair 2: workload large: STALE_OUTPUT"), std::string::npos)
      << out.decision.reason;
  ASSERT_TRUE(out.conclusion.has_value());
  EXPECT_EQ(out.conclusion->kind, fb::ConclusionKind::TRAP);
}

TEST_F(GuardPairingTest, APairBelowTheSolFloorOrMissingAWorkloadIsTheCandidatesFailure) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {500, 4000});  // sol_ns = 1 ns per workload
  const uint64_t seq = evaluate(p, ev);
  apply(log_.add(kGuardActor, pair(p, baseline_, 0, 0.5, 1000, seq)));  // 0.5 ns < 1 ns
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REJECT);
  EXPECT_NE(out.decision.reason.find("pair 0: workload small: IMPOSSIBLE"), std::string::npos)
      << out.decision.reason;

  auto q = proposal("a2", variant("32"), "knob:TILE_M=32");
  auto ev2 = evaluation(q.candidate_hash, {500, 4000});
  const uint64_t seq2 = evaluate(q, ev2);
  auto m = pair(q, baseline_, 0, 500, 1000, seq2);
  m.workloads.pop_back();  // no "large"
  apply(log_.add(kGuardActor, m));
  out = core_->decide(q, ev2, seq2);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);  // the incumbent side is missing first
  EXPECT_NE(out.decision.reason.find("pair 0: workload large: no result"), std::string::npos)
      << out.decision.reason;
}

TEST_F(GuardPairingTest, AnIncumbentFailingInAPairIsARevertThatNamesIt) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {500, 4000});
  const uint64_t seq = evaluate(p, ev);
  auto m = pair(p, baseline_, 0, 500, 1000, seq);
  m.workloads[0]->incumbent->status = fb::WorkloadStatus::CRASH;
  // A failed candidate side in the same pair does not make the incumbent's failure a trap.
  m.workloads[0]->candidate->status = fb::WorkloadStatus::CRASH;
  apply(log_.add(kGuardActor, m));
  auto out = core_->decide(p, ev, seq);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_NE(out.decision.reason.find("the incumbent"), std::string::npos);
  EXPECT_FALSE(out.conclusion.has_value());
}

TEST_F(GuardPairingTest, TheIncumbentIsTheCandidateTheAgentLastKept) {
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {800, 6400});
  const uint64_t seq = evaluate(p, ev);
  run_pairs(p, ev, seq, [](uint32_t) { return 800.0; });
  auto out = core_->decide(p, ev, seq);
  ASSERT_EQ(out.decision.verdict, fb::Verdict::KEEP);
  apply(log_.add(kGuardActor, out.decision));
  EXPECT_EQ(core_->incumbent_hash("a1"), p.candidate_hash);
  EXPECT_EQ(core_->incumbent_hash("a2"), baseline_);

  auto q = proposal("a1", variant("32"), "knob:TILE_M=32");
  auto ev2 = evaluation(q.candidate_hash, {700, 5600});
  const uint64_t seq2 = evaluate(q, ev2);
  auto next = core_->next_pair(q, ev2, seq2);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->incumbent_hash, p.candidate_hash);
  // Pairs against another incumbent (here the baseline) do not count for this decision.
  apply(log_.add(kGuardActor, pair(q, baseline_, 0, 700, 1000, seq2)));
  EXPECT_EQ(core_->next_pair(q, ev2, seq2)->index, 0u);
}

TEST_F(GuardPairingTest, ALogFromBeforePairedDecisionsIsDecidedUnpaired) {
  GuardConfig gc{0.02, 50, "softmax", {"small", "large"}};
  GuardCore legacy(gc);
  LogBuilder log;
  legacy.apply(log.add(kCampaignActor, fb::CampaignStartedT{}));  // no "decisions" entry
  testing::open_campaign(log, problem_, {"a1"},
                         [&legacy](const events::Event& e) { legacy.apply(e); });
  auto p = proposal("a1", variant("16"), "knob:TILE_M=16");
  auto ev = evaluation(p.candidate_hash, {900, 7200});
  EXPECT_FALSE(legacy.next_pair(p, ev, 9).has_value());
  EXPECT_EQ(legacy.decide(p, ev, 9).decision.verdict, fb::Verdict::KEEP);
}

TEST(MedianLowerBound, IsTheSignTestsOrderStatistic) {
  std::vector<double> v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  MedianBound b = median_lower_bound(v, 0.95);
  EXPECT_EQ(b.rank, 2u);  // P(Bin(10, 1/2) <= 1) = 11/1024 <= 0.05 < P(<= 2) = 56/1024
  EXPECT_EQ(b.bound, 2);
  EXPECT_NEAR(b.confidence, 1 - 11.0 / 1024, 1e-12);
  // n = 20: P(Bin(20, 1/2) <= 5) = 0.0207 <= 0.05 < P(<= 6) = 0.0577: the 6th smallest.
  std::vector<double> w;
  for (int i = 20; i >= 1; --i) w.push_back(i);
  b = median_lower_bound(w, 0.95);
  EXPECT_EQ(b.rank, 6u);
  EXPECT_EQ(b.bound, 6);
  // Too few for 95%: the smallest, with what it carries.
  b = median_lower_bound({3, 1, 2}, 0.95);
  EXPECT_EQ(b.rank, 1u);
  EXPECT_EQ(b.bound, 1);
  EXPECT_NEAR(b.confidence, 1 - 1.0 / 8, 1e-12);
  EXPECT_EQ(median_lower_bound({}, 0.95).confidence, 0);
}

}  // namespace
}  // namespace arc::actors
