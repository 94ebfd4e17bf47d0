// The guard's power (docs/performance.md, "The guard's power"), on the problems of
// tests/data/power: A/A campaigns (every candidate the seed's code under another hash) keep
// nothing; a B/A candidate (the same kernel with 3% of its work removed) is kept. Real arcd
// processes and real evaluators; the GPU tests skip without a device. Each prints its figures.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "actors/guard_core.h"
#include "actors/view.h"
#include "base/stats.h"
#include "eval/cuda_evaluator.h"
#include "eval/evaluators.h"
#include "eval/pair.h"
#include "replay/summary.h"
#include "tests/cores/fixtures.h"
#include "tests/e2e/arcd_process.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

const fs::path kPower = fs::path(ARC_SOURCE_DIR) / "tests/data/power";

struct AaResult {
  int decided = 0, keeps = 0, paired = 0, pairs = 0;
  int unpaired_keeps = 0;  // what the rule on the evaluation alone would have kept
  double max_unpaired = 0;
};

// Runs an A/A campaign of `budget` candidates (the alias skill: knob ALIAS only) on `problem`
// and reads its decisions.
AaResult run_aa_campaign(const std::string& backend, int budget, const std::string& evaluation) {
  const fs::path dir = testing::scratch_path("guard-power", "aa-" + backend);
  const fs::path campaign = dir.string() + ".toml";
  std::ofstream(campaign) << "[campaign]\nname = \"aa-" << backend << "\"\nproblem = \""
                          << (kPower / backend / "problem.toml").string() << "\"\nskills = \""
                          << (kPower / "skills").string() << "\"\nseed = 7\nbudget = " << budget
                          << "\nglobal_plateau = 0\n[evaluation]\n"
                          << evaluation
                          << "[guard]\nmargin = 0.02\n[plateau]\nwindow = 1000\n"
                             "drafting = false\n[[agents]]\nname = \"alias\"\nskill = \"alias\"\n";
  auto r = testing::run_process(
      {testing::kArcd.string(), "run", campaign.string(), "--run-dir", dir.string(), "--quiet"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto v = testing::run_process({testing::kArcReplay.string(), "verify", dir.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  AaResult out;
  auto log = replay::read_run(dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  if (!log.ok()) return out;
  for (const auto& e : log.value()) {
    if (e.payload.type == fb::Payload::PairMeasured) ++out.pairs;
    if (e.payload.type != fb::Payload::Decision) continue;
    const auto* d = e.payload.AsDecision();
    if (d->agent == actors::kCampaignActor || d->verdict == fb::Verdict::STOP) continue;
    ++out.decided;
    if (d->verdict == fb::Verdict::KEEP) ++out.keeps;
    if (d->pairs > 0) ++out.paired;
    const double ratio = d->score / d->incumbent_score;
    out.max_unpaired = std::max(out.max_unpaired, ratio);
    if (ratio > 1 + d->margin) ++out.unpaired_keeps;
  }
  std::printf(
      "A/A %s: %d candidates, %d KEEP; %d paired (%d pairs); the evaluation alone would have "
      "kept %d (best unpaired score over the incumbent %.4f)\n",
      backend.c_str(), out.decided, out.keeps, out.paired, out.pairs, out.unpaired_keeps,
      out.max_unpaired);
  return out;
}

TEST(GuardPower, HostAaCampaignKeepsNothingInAHundredCandidates) {
  const AaResult r = run_aa_campaign(
      "host", 100,
      "rounds = 1\nwarmup = 2\nrepetitions = 10\nbuffer_sets = 2\nflush_cache = false\n");
  EXPECT_EQ(r.decided, 100);
  EXPECT_EQ(r.keeps, 0);
}

TEST(GuardPower, GpuAaCampaignKeepsNothingInAHundredCandidates) {
  std::string why;
  if (!eval::CudaEvaluator::device_available(&why)) GTEST_SKIP() << "no GPU here: " << why;
  const AaResult r =
      run_aa_campaign("gpu", 100, "memory_limit_mb = 0\nwarmup = 10\nrepetitions = 30\n");
  EXPECT_EQ(r.decided, 100);
  EXPECT_EQ(r.keeps, 0);
}

struct BaResult {
  int tries = 0, keeps = 0, rejects = 0, pairs = 0;
  int unpaired_keeps = 0;      // KEEPs that rest on no pairs (there must be none)
  std::vector<double> ratios;  // every try's median paired ratio (the measured speedup)
};

// B/A tries: each a fresh guard whose only agent's incumbent is the seed (ITER = extra),
// deciding on a B candidate (ITER = base, 3% less work) under its own hash, with the guard
// core's pairing run on the problem's own evaluator exactly as the guard actor runs it.
BaResult run_ba_tries(const std::string& backend, int tries, const eval::EvalSettings& settings) {
  BaResult out;
  auto problem = problem::load_problem(kPower / backend / "problem.toml");
  EXPECT_TRUE(problem.ok()) << problem.status().to_string();
  if (!problem.ok()) return out;
  eval::EvaluatorChoice choice;
  auto evaluator = eval::make_evaluator(choice, problem.value());
  EXPECT_TRUE(evaluator.ok()) << evaluator.status().to_string();
  if (!evaluator.ok()) return out;
  eval::Evaluator& ev = *evaluator.value();
  EXPECT_TRUE(ev.peaks().ok());
  const problem::Candidate a = problem->seed;
  const auto a_compiled = ev.compile(a, a.hash());
  EXPECT_TRUE(a_compiled.ok);
  actors::GuardConfig gc;
  gc.kernel_type = problem->kernel_type;
  for (const auto& w : problem->workloads) gc.workloads.push_back(w.name);
  gc.budget = 1000;
  gc.sol_margin = actors::sol_margin_for(std::nullopt, problem->backend);
  for (int t = 0; t < tries; ++t) {
    problem::Candidate b = a;
    b.base.knobs["ITER"] = "base";
    b.base.knobs["ALIAS"] = std::to_string(t + 1);
    const auto b_compiled = ev.compile(b, b.hash());
    EXPECT_TRUE(b_compiled.ok);
    actors::GuardCore core(gc);
    testing::LogBuilder log;
    fb::CampaignStartedT started;
    auto marker = std::make_unique<fb::KeyValueT>();
    marker->key = actors::kDecisionsKey;
    marker->value = actors::kPairedDecisions;
    started.software.push_back(std::move(marker));
    core.apply(log.add(actors::kCampaignActor, started));
    fb::AgentSpawnedT spawned;
    spawned.agent = "b";
    core.apply(log.add(actors::kCampaignActor, spawned));
    // The baseline (A) and the candidate (B), each evaluated on its own inputs.
    const uint64_t seed = 1000 + static_cast<uint64_t>(t);
    auto base = testing::proposal(actors::kCampaignActor, a, actors::kBaselineMove);
    core.apply(log.add(actors::kCampaignActor, base));
    auto a_eval = ev.evaluate({a, a.hash(), seed, settings}, a_compiled);
    const uint64_t a_seq = log.add(actors::kGuardActor, a_eval).seq;
    core.apply(log.log().back());
    auto base_decision = core.decide(base, a_eval, a_seq).decision;
    EXPECT_EQ(base_decision.verdict, fb::Verdict::KEEP) << base_decision.reason;
    core.apply(log.add(actors::kGuardActor, base_decision));
    auto prop = testing::proposal("b", b, "knob:ITER=base");
    core.apply(log.add("b", prop));
    auto b_eval = ev.evaluate({b, b.hash(), seed + 7777, settings}, b_compiled);
    const uint64_t b_seq = log.add(actors::kGuardActor, b_eval).seq;
    core.apply(log.log().back());
    while (auto next = core.next_pair(prop, b_eval, b_seq)) {
      eval::EvalSettings ps = settings;
      ps.rounds = 1;
      auto pair = eval::measure_pair(ev, {&b, b.hash(), &b_compiled}, {&a, a.hash(), &a_compiled},
                                     next->candidate_first, seed * 100 + next->index, ps);
      pair.agent = "b";
      pair.index = next->index;
      pair.evaluation_seq = b_seq;
      core.apply(log.add(actors::kGuardActor, pair));
      ++out.pairs;
    }
    const auto d = core.decide(prop, b_eval, b_seq).decision;
    ++out.tries;
    if (d.verdict == fb::Verdict::KEEP) ++out.keeps;
    if (d.verdict == fb::Verdict::KEEP && d.pairs == 0) ++out.unpaired_keeps;
    if (d.verdict == fb::Verdict::REJECT) ++out.rejects;
    if (d.pairs > 0) out.ratios.push_back(d.paired_ratio);
  }
  std::vector<double> sorted = out.ratios;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "B/A %s (%s): %d of %d tries KEPT, %d REJECT, %d pairs; measured speedup of B over A per "
      "try: median %.4f, min %.4f, max %.4f\n",
      backend.c_str(), ev.device().c_str(), out.keeps, out.tries, out.rejects, out.pairs,
      median(sorted), sorted.empty() ? 0.0 : sorted.front(), sorted.empty() ? 0.0 : sorted.back());
  return out;
}

TEST(GuardPower, GpuBaCandidateThreePercentFasterIsKeptInAtLeast95Of100Tries) {
  std::string why;
  if (!eval::CudaEvaluator::device_available(&why)) GTEST_SKIP() << "no GPU here: " << why;
  eval::EvalSettings s;
  s.memory_limit_mb = 0;
  s.warmup = 10;
  s.repetitions = 30;
  const BaResult r = run_ba_tries("gpu", 100, s);
  EXPECT_EQ(r.tries, 100);
  EXPECT_EQ(r.rejects, 0);
  EXPECT_EQ(r.unpaired_keeps, 0);
  EXPECT_GE(r.keeps, 95);
}

// The host evaluator's B/A: its timing noise (a shared CPU, no clock control) is the margin's
// floor, so a 3% gain is kept only when the host is quiet, and on a loaded host (tests running
// in parallel) the pairs' median ratio itself can fall either side of 1 (docs/performance.md,
// "The guard's power"). What holds on any host: the correct candidate is never rejected, and a
// KEEP rests on its pairs. The figures are printed.
TEST(GuardPower, HostBaCandidateIsNeverRejectedAndKeptOnlyOnItsPairs) {
  eval::EvalSettings s;
  s.rounds = 1;
  s.warmup = 2;
  s.repetitions = 10;
  s.buffer_sets = 2;
  s.flush_cache = false;
  const BaResult r = run_ba_tries("host", 10, s);
  EXPECT_EQ(r.tries, 10);
  EXPECT_EQ(r.rejects, 0);
  EXPECT_EQ(r.unpaired_keeps, 0);
}

}  // namespace
}  // namespace arc
