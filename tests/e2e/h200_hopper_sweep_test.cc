// The shipped H200 sweep of gemm_bf16's hopper family (tests/data/sweeps/
// h200-gemm_bf16-hopper-sweep: `arcd sweep problems/gpu/gemm_bf16 --family hopper --sample 520
// --seed 1`, a seeded sample of 520 of the family's constrained space plus the cuBLASLt seed):
// what it holds, that every point lies in the family's constraints, and that the replay
// evaluator answers its points from their records.
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "eval/replay_evaluator.h"
#include "problem/problem.h"
#include "replay/summary.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using problem::Candidate;

const fs::path kSweep = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/h200-gemm_bf16-hopper-sweep";
// The problem version the sweep measured (shipped beside it): its points are points of that
// family's space, whose knobs and constraints problems/gpu/gemm_bf16 has since extended.
const fs::path kProblem = kSweep / "problem" / "gemm_bf16";

// The sweep's points by hash, from its CandidateProposed events.
std::map<std::string, Candidate> points() {
  std::map<std::string, Candidate> out;
  auto log = replay::read_run(kSweep);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  if (!log.ok()) return out;
  for (const auto& e : log.value()) {
    if (e.payload.type != fb::Payload::CandidateProposed) continue;
    const auto* p = e.payload.AsCandidateProposed();
    auto c = Candidate::from_canonical(p->canonical);
    EXPECT_TRUE(c.ok()) << p->candidate_hash;
    if (c.ok()) out.emplace(p->candidate_hash, std::move(c.value()));
  }
  return out;
}

// The problem version the sweep measured ships beside it (problem/: gemm_bf16 and the shared
// gemm sources as they were), so that replay and ablation answer for that version after the
// sources in problems/gpu change: its hash is the one the sweep's measurements carry.
TEST(H200HopperSweep, ShipsTheProblemVersionItMeasured) {
  auto pr = problem::load_problem(kProblem);
  ASSERT_TRUE(pr.ok()) << pr.status().to_string();
  auto records = eval::ReplayRecords::load({kSweep});
  ASSERT_TRUE(records.ok()) << records.status().to_string();
  ASSERT_EQ(records.value()->problem_hashes.size(), 1u);
  EXPECT_EQ(records.value()->problem_hashes.begin()->second, pr->hash);
  EXPECT_NE(pr->family("hopper"), nullptr);
}

TEST(H200HopperSweep, HoldsTheSeedAndPointsOfTheConstrainedSpace) {
  auto pr = problem::load_problem(kProblem);
  ASSERT_TRUE(pr.ok()) << pr.status().to_string();
  const auto pts = points();
  ASSERT_EQ(pts.size(), 521u);  // 520 sampled + the seed
  EXPECT_EQ(pts.count(pr->seed.hash()), 1u);
  size_t hopper = 0;
  for (const auto& [hash, c] : pts) {
    EXPECT_EQ(hash, c.hash());
    EXPECT_TRUE(c.gates.empty()) << hash;  // points, not compositions
    EXPECT_EQ(pr->constraint_violation(c), "") << c.base.key();
    if (c.base.family == "hopper") ++hopper;
  }
  EXPECT_EQ(hopper, 520u);

  auto records = eval::ReplayRecords::load({kSweep});
  ASSERT_TRUE(records.ok()) << records.status().to_string();
  EXPECT_EQ(records.value()->evaluations.size(), 521u);
  EXPECT_EQ(records.value()->device.find("H200") != std::string::npos, true)
      << records.value()->device;
  size_t correct = 0;
  for (const auto& [hash, e] : records.value()->evaluations) {
    ASSERT_EQ(pts.count(hash), 1u) << hash;
    bool ok = e.workloads.size() == pr->workloads.size();
    for (const auto& w : e.workloads) ok &= w->status == fb::WorkloadStatus::OK;
    correct += ok ? 1 : 0;
  }
  EXPECT_EQ(correct, 518u);
}

TEST(H200HopperSweep, TheReplayEvaluatorAnswersRecordedPoints) {
  auto pr = problem::load_problem(kProblem);
  ASSERT_TRUE(pr.ok()) << pr.status().to_string();
  auto records = eval::ReplayRecords::load({kSweep});
  ASSERT_TRUE(records.ok()) << records.status().to_string();
  auto evaluator = eval::ReplayEvaluator::over(records.value(), pr->workloads);
  const auto pts = points();
  size_t asked = 0;
  for (const auto& [hash, c] : pts) {
    if (asked++ % 50 != 0 && hash != pr->seed.hash()) continue;
    const auto& recorded = records.value()->evaluations.at(hash);
    const auto e = evaluator->evaluate({c, hash, 0, {}}, {});
    ASSERT_EQ(e.workloads.size(), recorded.workloads.size()) << hash;
    for (size_t i = 0; i < e.workloads.size(); ++i) {
      EXPECT_NE(e.workloads[i]->status, fb::WorkloadStatus::UNANSWERED) << hash;
      EXPECT_EQ(e.workloads[i]->status, recorded.workloads[i]->status) << hash;
      EXPECT_EQ(e.workloads[i]->median_ns, recorded.workloads[i]->median_ns) << hash;
    }
  }
  EXPECT_TRUE(evaluator->unanswered().empty());
  // A point of the family's space the sample does not hold is unanswered, not invented.
  Candidate unrecorded;
  unrecorded.base = pr->family("hopper")->default_variant();
  if (pts.count(unrecorded.hash()) == 0 &&
      records.value()->variants.measurement(unrecorded.base.key(), pr->workloads[0].name) ==
          nullptr) {
    const auto e = evaluator->evaluate({unrecorded, unrecorded.hash(), 0, {}}, {});
    ASSERT_FALSE(e.workloads.empty());
    EXPECT_EQ(e.workloads[0]->status, fb::WorkloadStatus::UNANSWERED);
  }
}

}  // namespace
}  // namespace arc
