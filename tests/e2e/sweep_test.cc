// arcd sweep on a real problem, and the replay evaluator answering from it.
#include "actors/sweep.h"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "actors/worker_slot.h"
#include "eval/host_evaluator.h"
#include "eval/replay_evaluator.h"
#include "replay/summary.h"
#include "replay/verifier.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

TEST(Sweep, SearchSpaceEnumeratesEveryKnobCombination) {
  auto p = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/softmax");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  uint64_t expected = 0;
  for (const auto& f : p->families) {
    uint64_t n = 1;
    for (const auto& k : f.knobs) n *= k.values.size();
    expected += n;
  }
  EXPECT_EQ(actors::search_space_size(p.value()), expected);
  auto all = actors::search_space(p.value(), expected);
  ASSERT_EQ(all.size(), expected);
  std::set<std::string> hashes;
  for (const auto& c : all) hashes.insert(c.hash());
  EXPECT_EQ(hashes.size(), expected);  // no candidate twice
}

// The Hopper GEMM family: millions of knob combinations; enumeration and sampling both stay
// inside its constraints, a sample is the same for a seed and differs across seeds, and a
// family filter keeps to that family.
TEST(Sweep, LargeSpacesAreSampledWithinTheFamilyConstraints) {
  auto p = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_bf16");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const problem::Family* f = p->family("hopper");
  ASSERT_NE(f, nullptr);
  const uint64_t space = actors::search_space_size(p.value(), {"hopper"});
  EXPECT_GT(space, 1'000'000u);
  EXPECT_LT(space, actors::search_space_size(p.value()));
  auto a = actors::sample_space(p.value(), 600, 7, {"hopper"});
  auto b = actors::sample_space(p.value(), 600, 7, {"hopper"});
  auto c = actors::sample_space(p.value(), 600, 8, {"hopper"});
  ASSERT_EQ(a.size(), 600u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::string> hashes;
  std::set<std::string> values_of_block_n;
  for (const auto& cand : a) {
    EXPECT_EQ(cand.base.family, "hopper");
    EXPECT_EQ(p->constraint_violation(cand), "") << cand.base.key();
    hashes.insert(cand.hash());
    values_of_block_n.insert(cand.base.knobs.at("BLOCK_N"));
  }
  EXPECT_EQ(hashes.size(), a.size());
  EXPECT_EQ(values_of_block_n.size(), f->knob("BLOCK_N")->values.size());
  // Enumeration in order also skips what the constraints exclude.
  auto first = actors::search_space(p.value(), 2000, {"hopper"});
  ASSERT_EQ(first.size(), 2000u);
  for (const auto& cand : first) EXPECT_EQ(p->constraint_violation(cand), "") << cand.base.key();
}

// A sweep on three workers logs the candidates, seeds and answers one worker logs, in the same
// order: replay evaluators (exact answers from the shipped matmul sweep) as the workers.
TEST(Sweep, OnThreeWorkersLogsWhatOneWorkerLogs) {
  auto p = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/matmul");
  ASSERT_TRUE(p.ok());
  const fs::path recorded = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-matmul";
  struct Point {
    std::string hash, worker;
    uint64_t seed;
    std::vector<double> medians;
  };
  auto sweep_on = [&](size_t n) {
    const fs::path dir = fs::temp_directory_path() /
                         ("arc-sweep-" + std::to_string(n) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    std::vector<actors::CampaignWorker> workers(n);
    for (size_t i = 0; i < n; ++i) {
      workers[i].name = "local:" + std::to_string(i);
      auto r = eval::ReplayEvaluator::open({recorded}, p->workloads);
      EXPECT_TRUE(r.ok()) << r.status().to_string();
      if (!r.ok()) return std::vector<Point>{};
      workers[i].owned = std::move(r.value());
      workers[i].evaluator = workers[i].owned.get();
    }
    actors::SweepOptions o;
    o.run_dir = dir;
    o.sample = 40;  // the first 40 of the recorded 300 (the same seed, the same shuffle)
    o.seed = 2;
    o.compile_jobs = 2;
    auto r = actors::run_sweep(p.value(), workers, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    std::vector<Point> out;
    auto log = replay::read_run(dir);
    EXPECT_TRUE(log.ok());
    if (!log.ok()) return out;
    for (const auto& e : log.value()) {
      if (const auto* ev = e.payload.AsCandidateEvaluated()) {
        Point pt{ev->candidate_hash, ev->worker, ev->input_seed, {}};
        for (const auto& w : ev->workloads) {
          EXPECT_EQ(w->status, fb::WorkloadStatus::OK) << ev->candidate_hash;
          pt.medians.push_back(w->median_ns);
        }
        out.push_back(std::move(pt));
      }
    }
    auto v = replay::verify_run(dir);
    EXPECT_TRUE(v.ok) << v.message;
    fs::remove_all(dir);
    return out;
  };
  const auto one = sweep_on(1);
  const auto three = sweep_on(3);
  ASSERT_GE(one.size(), 40u);  // the seed and the sample (which may contain it)
  ASSERT_LE(one.size(), 41u);
  ASSERT_EQ(three.size(), one.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(three[i].hash, one[i].hash) << i;
    EXPECT_EQ(three[i].seed, one[i].seed) << i;
    EXPECT_EQ(three[i].medians, one[i].medians) << i;
    EXPECT_EQ(one[i].worker, "local:0");
    EXPECT_TRUE(three[i].worker == "local:0" || three[i].worker == "local:1" ||
                three[i].worker == "local:2")
        << three[i].worker;
  }
}

TEST(Sweep, RecordsASampleThatTheReplayEvaluatorAnswers) {
  auto p = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/matmul");
  ASSERT_TRUE(p.ok());
  const fs::path dir = fs::temp_directory_path() / ("arc-sweep-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  actors::SweepOptions o;
  o.run_dir = dir;
  o.sample = 8;
  o.seed = 5;
  o.evaluation.rounds = 1;
  o.evaluation.warmup = 1;
  o.evaluation.repetitions = 7;
  o.evaluation.flush_cache = false;
  eval::HostEvaluator host(p.value());
  auto r = actors::run_sweep(p.value(), host, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_GE(r->candidates, 8u);
  EXPECT_LE(r->candidates, 9u);  // the seed, plus the sample (which may contain it)
  auto log = replay::read_run(dir);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->front().payload.AsCampaignStarted()->mode, "sweep");
  std::vector<std::string> evaluated;
  for (const auto& e : log.value()) {
    if (e.payload.type == fb::Payload::CandidateEvaluated) {
      evaluated.push_back(e.payload.AsCandidateEvaluated()->candidate_hash);
    }
  }
  ASSERT_EQ(evaluated.size(), r->candidates);
  EXPECT_EQ(evaluated.front(), p->seed.hash());
  EXPECT_EQ(std::set<std::string>(evaluated.begin(), evaluated.end()).size(), evaluated.size());
  auto v = replay::verify_run(dir);
  EXPECT_TRUE(v.ok) << v.message;

  // Exact answers, resampled answers (deterministic per seed), and what it cannot answer.
  auto exact = eval::ReplayEvaluator::open({dir}, p->workloads);
  auto again = eval::ReplayEvaluator::open({dir}, p->workloads, 11);
  auto same = eval::ReplayEvaluator::open({dir}, p->workloads, 11);
  auto other = eval::ReplayEvaluator::open({dir}, p->workloads, 12);
  ASSERT_TRUE(exact.ok() && again.ok() && same.ok() && other.ok());
  EXPECT_EQ(exact.value()->recorded(), r->candidates);
  eval::EvalRequest req{p->seed, p->seed.hash(), 0, {}};
  auto e0 = exact.value()->evaluate(req, {});
  auto e1 = again.value()->evaluate(req, {});
  auto e2 = same.value()->evaluate(req, {});
  auto e3 = other.value()->evaluate(req, {});
  ASSERT_EQ(e0.workloads.size(), p->workloads.size());
  bool differs = false;
  for (size_t i = 0; i < e0.workloads.size(); ++i) {
    EXPECT_EQ(e0.workloads[i]->status, fb::WorkloadStatus::OK);
    EXPECT_EQ(e1.workloads[i]->median_ns, e2.workloads[i]->median_ns);
    EXPECT_EQ(e1.workloads[i]->samples_ns.size(), e0.workloads[i]->samples_ns.size());
    differs |= e1.workloads[i]->samples_ns != e3.workloads[i]->samples_ns;
  }
  EXPECT_TRUE(differs);
  // A candidate of another hash whose every workload runs the seed's variant (a gate naming no
  // workload changes the hash, not what runs) is composed from the seed's measurements.
  problem::Candidate composed = p->seed;
  composed.gates["nowhere"] = p->seed.base;
  auto same_runs = exact.value()->evaluate({composed, composed.hash(), 0, {}}, {});
  ASSERT_EQ(same_runs.workloads.size(), p->workloads.size());
  for (size_t i = 0; i < e0.workloads.size(); ++i) {
    EXPECT_EQ(same_runs.workloads[i]->samples_ns, e0.workloads[i]->samples_ns);
  }
  // One whose variant was never measured: every workload UNANSWERED, each with the reason.
  problem::Candidate missing = p->seed;
  missing.base.knobs["NOWHERE"] = "1";
  auto none = exact.value()->evaluate({missing, "feedface", 0, {}}, {});
  ASSERT_EQ(none.workloads.size(), p->workloads.size());
  for (const auto& w : none.workloads) {
    EXPECT_EQ(w->status, fb::WorkloadStatus::UNANSWERED);
    EXPECT_EQ(w->error, "replay: no recorded measurement of variant " + missing.base.key() +
                            " on workload " + w->workload);
  }
  EXPECT_EQ(exact.value()->unanswered(), std::vector<std::string>{"feedface"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace arc
