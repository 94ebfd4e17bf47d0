// The margin's scope (actors/guard_core.h, "Margin scope"): with "changed" a candidate is judged
// on the workloads where it runs another variant than its incumbent; with "all", and in a log
// that does not name the scope, over every workload.
#include <cmath>

#include <gtest/gtest.h>

#include "actors/guard_core.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::evaluation;
using testing::LogBuilder;
using testing::proposal;

class GuardScopeTest : public ::testing::Test {
 protected:
  // A campaign whose CampaignStarted names `scope` ("" for a log without the entry), with
  // `pairs` paired decisions (0: decided from the evaluation alone), and `slower` as its
  // slower_workloads entry ("" for none).
  void open(const std::string& scope, uint32_t pairs, const std::string& slower = "") {
    problem_ = testing::toy_problem();
    GuardConfig gc{0.02, 50, "softmax", {"small", "large"}};
    gc.pairs = pairs;
    core_ = std::make_unique<GuardCore>(gc);
    fb::CampaignStartedT started;
    auto add = [&](const char* key, const std::string& value) {
      auto kv = std::make_unique<fb::KeyValueT>();
      kv->key = key;
      kv->value = value;
      started.software.push_back(std::move(kv));
    };
    add(kDecisionsKey, kPairedDecisions);
    if (!scope.empty()) add(kMarginScopeKey, scope);
    if (!slower.empty()) add(kSlowerWorkloadsKey, slower);
    apply(log_.add(kCampaignActor, started));
    testing::open_campaign(log_, problem_, {"a1"}, [this](const events::Event& e) { apply(e); });
  }
  void apply(const events::Event& e) { core_->apply(e); }
  // The seed with a gate on `workload` (TILE_M = tile there, the base elsewhere).
  problem::Candidate gated(const problem::Candidate& from, const std::string& workload,
                           const std::string& tile) {
    problem::Candidate c = from;
    c.gates[workload] = from.variant_for(workload);
    c.gates[workload].knobs["TILE_M"] = tile;
    return c;
  }
  GuardOutcome decide(const fb::CandidateProposedT& p, const fb::CandidateEvaluatedT& ev) {
    apply(log_.add("a1", p));
    const uint64_t seq = log_.add(kGuardActor, ev).seq;
    uint32_t index = 0;
    while (auto next = core_->next_pair(p, ev, seq)) {
      apply(log_.add(kGuardActor, pair(p, next->incumbent_hash, index++, seq)));
      if (index > 100) break;
    }
    GuardOutcome out = core_->decide(p, ev, seq);
    apply(log_.add(kGuardActor, out.decision));
    return out;
  }
  // Pair `index`: the candidate pair_small_ and pair_large_ times faster than the incumbent
  // (1000 and 8000 ns) on small and large, within 0.2%; with large_noise_, large's ratio
  // alternates 0.4% either side of pair_large_.
  fb::PairMeasuredT pair(const fb::CandidateProposedT& p, const std::string& incumbent,
                         uint32_t index, uint64_t seq) {
    const double jitter = 1 + 0.001 * (index % 3);
    const double large = large_noise_ ? (index % 2 == 0 ? 1.004 : 1 / 1.004) : jitter;
    return testing::pair_measured(p, incumbent, index, seq,
                                  {{"small", 1000 / (pair_small_ * jitter), 1000},
                                   {"large", 8000 / (pair_large_ * large), 8000}});
  }

  problem::Problem problem_;
  std::unique_ptr<GuardCore> core_;
  LogBuilder log_;
  double pair_small_ = 1.0, pair_large_ = 1.0;
  bool large_noise_ = false;
};

// 4% on one workload of two is 1.98% over both: under a 2% margin over all, over it where
// the candidate changes something.
TEST_F(GuardScopeTest, AGateIsJudgedOnTheWorkloadItChanges) {
  open(kScopeChanged, 0);
  auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.04, 8000}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
  EXPECT_NE(out.decision.reason.find("on the 1 workload(s) it changes (small)"), std::string::npos)
      << out.decision.reason;
  EXPECT_NEAR(out.decision.score, std::sqrt(1.04), 1e-9);  // the score is over every workload
  ASSERT_TRUE(out.conclusion.has_value());
  EXPECT_NEAR(out.conclusion->speedup, 1.04, 1e-9);
}

TEST_F(GuardScopeTest, TheAllScopeAndALogWithoutTheEntryJudgeOverEveryWorkload) {
  for (const std::string scope : {kScopeAll, ""}) {
    log_ = LogBuilder();
    open(scope, 0);
    auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
    auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.04, 8000}));
    EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT) << scope << ": " << out.decision.reason;
    EXPECT_NE(out.decision.reason.find("<= incumbent 1 x (1 + 0.02)"), std::string::npos)
        << out.decision.reason;
  }
}

// The noise of a workload the candidate does not change neither widens its margin nor counts.
TEST_F(GuardScopeTest, NoiseOnAnUnchangedWorkloadDoesNotWidenTheMargin) {
  open(kScopeChanged, 0);
  auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
  auto ev = evaluation(p.candidate_hash, {1000 / 1.05, 8000 * 1.3}, 0.01);
  ev.workloads[1]->spread = 0.4;  // 20% noise, and 30% slower, on the unchanged workload
  auto out = decide(p, ev);
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
  EXPECT_NEAR(out.decision.margin, 0.02, 1e-12);
  EXPECT_LT(out.decision.score, 1.0);  // over every workload it looks slower
}

TEST_F(GuardScopeTest, ACandidateRunningItsIncumbentsVariantsEverywhereIsReverted) {
  open(kScopeChanged, 0);
  // A gate equal to the base: another hash, the same kernel on every workload.
  problem::Candidate same = problem_.seed;
  same.gates["large"] = same.base;
  ASSERT_NE(same.hash(), problem_.seed.hash());
  auto p = proposal("a1", same, "shape_gate:1_gates");
  auto out = decide(p, evaluation(p.candidate_hash, {800, 6400}));  // 25% "faster": noise
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT);
  EXPECT_NE(out.decision.reason.find("variant on every workload"), std::string::npos)
      << out.decision.reason;
  EXPECT_FALSE(out.conclusion.has_value());
}

// Paired: the ratios are taken over the changed workload, so drift on the other one (3% against
// the candidate in every pair) cannot sink a 5% gain, nor can it make one.
TEST_F(GuardScopeTest, PairsAreJudgedOnTheChangedWorkloads) {
  open(kScopeChanged, 10);
  auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
  pair_small_ = 1.05;
  pair_large_ = 1 / 1.03;
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.05, 8000}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
  EXPECT_EQ(out.decision.pairs, 10u);
  EXPECT_NEAR(out.decision.paired_ratio, 1.05 * 1.001, 1e-9);

  auto q = proposal("a1", gated(gated(problem_.seed, "small", "16"), "large", "32"),
                    "shape_gate:2_gates");
  pair_small_ = 1.0;  // unchanged from its incumbent (the candidate above)
  pair_large_ = 1.0;
  auto drifted = decide(q, evaluation(q.candidate_hash, {1000 / 1.05 / 1.1, 8000 / 1.03}));
  EXPECT_EQ(drifted.decision.verdict, fb::Verdict::REVERT) << drifted.decision.reason;
  EXPECT_LE(drifted.decision.paired_bound, 1.02);
}

TEST_F(GuardScopeTest, PairsOverEveryWorkloadWithTheAllScope) {
  open(kScopeAll, 10);
  auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
  pair_small_ = 1.05;
  pair_large_ = 1 / 1.03;
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.05, 8000 / 1.02}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT) << out.decision.reason;
  EXPECT_LT(out.decision.paired_ratio, 1.02);
}

// A kept gate becomes the incumbent: the next candidate is judged against its speedups on the
// workloads the two differ on.
TEST_F(GuardScopeTest, TheNextCandidateIsComparedWithTheKeptSpeedups) {
  open(kScopeChanged, 0);
  const problem::Candidate first = gated(problem_.seed, "small", "16");
  auto p = proposal("a1", first, "shape_gate:1_gates");
  // Kept on small; its large measured 10% fast by chance (the same kernel as the baseline's).
  ASSERT_EQ(decide(p, evaluation(p.candidate_hash, {1000 / 1.04, 8000 / 1.1})).decision.verdict,
            fb::Verdict::KEEP);
  // Changing large to something 5% faster than the baseline is no gain over the 10% the
  // incumbent's measurement showed there.
  auto q = proposal("a1", gated(first, "large", "32"), "shape_gate:2_gates");
  auto out = decide(q, evaluation(q.candidate_hash, {1000 / 1.04, 8000 / 1.05}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT) << out.decision.reason;
  EXPECT_NE(out.decision.reason.find("(large)"), std::string::npos) << out.decision.reason;
  // 15% is.
  auto r = proposal("a1", gated(first, "large", "64"), "shape_gate:2_gates");
  EXPECT_EQ(decide(r, evaluation(r.candidate_hash, {1000, 8000 / 1.15})).decision.verdict,
            fb::Verdict::KEEP);
}

// Slower workloads (actors/guard_core.h): a gate table winning 5% on small whose gate on large
// is 0.4% slower in every pair is kept by the margin alone and reverted with "revert", naming
// large; the same table whose large is only noisy (either side of 1) is kept.
TEST_F(GuardScopeTest, AChangedWorkloadSlowerInThePairsRevertsTheCandidate) {
  const auto two_gates = [this] {
    return proposal("a1", gated(gated(problem_.seed, "small", "16"), "large", "32"),
                    "shape_gate:2_gates");
  };
  for (const std::string slower : {kSlowerRevert, kSlowerAllow, ""}) {
    log_ = LogBuilder();
    open(kScopeChanged, 10, slower);
    auto p = two_gates();
    pair_small_ = 1.05;
    pair_large_ = 1 / 1.004;
    large_noise_ = false;
    auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.05, 8000}));
    ASSERT_EQ(out.decision.pairs, 10u) << out.decision.reason;
    EXPECT_GT(out.decision.paired_bound, 1.02) << out.decision.reason;
    if (slower == kSlowerRevert) {
      EXPECT_EQ(out.decision.verdict, fb::Verdict::REVERT) << out.decision.reason;
      EXPECT_NE(out.decision.reason.find("workload large is slower than on the incumbent"),
                std::string::npos)
          << out.decision.reason;
      EXPECT_EQ(out.decision.slower_workload, "large");
      EXPECT_FALSE(out.conclusion.has_value());
    } else {
      EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << slower << ": " << out.decision.reason;
    }
  }
  log_ = LogBuilder();
  open(kScopeChanged, 10, kSlowerRevert);
  auto p = two_gates();
  pair_small_ = 1.05;
  pair_large_ = 1.0;
  large_noise_ = true;
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.05, 8000}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
}

// A changed base is one kernel for every workload: 0.4% slower on large while 10% faster on
// small is a trade-off the margin judges, not a slow gate.
TEST_F(GuardScopeTest, ABaseChangeSlowerOnOneWorkloadIsJudgedByTheMarginAlone) {
  open(kScopeChanged, 10, kSlowerRevert);
  problem::Candidate c = problem_.seed;
  c.base.knobs["TILE_M"] = "16";
  auto p = proposal("a1", c, "knob:TILE_M=16");
  pair_small_ = 1.10;
  pair_large_ = 1 / 1.004;
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.1, 8000}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
  EXPECT_EQ(out.decision.slower_workload, "");
}

// An unchanged workload slower in every pair (drift on the same kernel) is not the candidate's.
TEST_F(GuardScopeTest, AnUnchangedWorkloadSlowerInThePairsIsNotHeldAgainstIt) {
  open(kScopeAll, 10, kSlowerRevert);
  auto p = proposal("a1", gated(problem_.seed, "small", "16"), "shape_gate:1_gates");
  pair_small_ = 1.10;
  pair_large_ = 1 / 1.004;
  auto out = decide(p, evaluation(p.candidate_hash, {1000 / 1.1, 8000}));
  EXPECT_EQ(out.decision.verdict, fb::Verdict::KEEP) << out.decision.reason;
}

}  // namespace
}  // namespace arc::actors
