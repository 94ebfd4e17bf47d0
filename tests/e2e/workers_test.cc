// Campaigns on several workers (DESIGN.md §9, docs/distributed.md), through real arcd
// processes: in lockstep, with equal measurements (the replay evaluator), three local workers
// give the proposals and decisions one worker gives, while the evaluations spread over them;
// every evaluation names its worker, none is made twice; bad worker lists are refused.
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "replay/summary.h"
#include "tests/e2e/arcd_process.h"
#include "tests/remote/worker_process.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using testing::kArcd;
using testing::kArcReplay;
using testing::run_process;

const fs::path kCampaign = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";
const fs::path kMeasurements = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax";

fs::path scratch(const std::string& name) { return testing::scratch_path("workers", name); }

testing::ProcessResult run_on(const fs::path& run_dir, const std::string& workers,
                              const std::string& mode = "lockstep") {
  return run_process({kArcd.string(), "run", kCampaign.string(), "--run-dir", run_dir.string(),
                      "--budget", "16", "--mode", mode, "--quiet", "--evaluator", "replay",
                      "--replay-from", kMeasurements.string(), "--workers", workers});
}

std::vector<events::Event> log_of(const fs::path& run_dir) {
  auto log = replay::read_run(run_dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? log.value() : std::vector<events::Event>{};
}

// What a campaign decided, in log order: each proposal (agent, candidate, parent, move, the
// view it was made from) and each decision (candidate, verdict, score, pairs), each pair
// (candidate, index, ratio inputs). Worker names and seqs of worker events are left out.
std::vector<std::string> trajectory(const std::vector<events::Event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log) {
    if (const auto* p = e.payload.AsCandidateProposed()) {
      out.push_back("proposed " + p->agent + " " + p->candidate_hash + " " + p->parent + " " +
                    p->move + " " + std::to_string(p->view_seq));
    } else if (const auto* d = e.payload.AsDecision()) {
      out.push_back("decided " + d->candidate_hash + " " + fb::EnumNameVerdict(d->verdict) + " " +
                    std::to_string(d->score) + " " + std::to_string(d->pairs));
    } else if (const auto* q = e.payload.AsPairMeasured()) {
      std::string sides;
      for (const auto& w : q->workloads) {
        sides += " " + std::to_string(w->candidate->median_ns) + "/" +
                 std::to_string(w->incumbent->median_ns);
      }
      out.push_back("pair " + q->candidate_hash + " " + std::to_string(q->index) + sides);
    }
  }
  return out;
}

TEST(Workers, LockstepOnThreeWorkersDecidesAsOnOne) {
  const fs::path one = scratch("one"), three = scratch("three");
  auto a = run_on(one, "local");
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = run_on(three, "local:0,local:1,local:2");
  ASSERT_EQ(b.code, 0) << b.err;
  const auto log_one = log_of(one);
  const auto log_three = log_of(three);
  const auto t1 = trajectory(log_one);
  ASSERT_GT(t1.size(), 16u);
  EXPECT_EQ(t1, trajectory(log_three));

  // The three workers shared the work; each candidate was evaluated once, by a named worker.
  std::map<std::string, int> by_worker;
  std::set<std::string> evaluated;
  for (const auto& e : log_three) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      ++by_worker[ev->worker];
      EXPECT_TRUE(evaluated.insert(ev->candidate_hash).second)
          << ev->candidate_hash << " evaluated twice";
    }
    if (const auto* p = e.payload.AsPairMeasured()) {
      EXPECT_TRUE(p->worker == "local:0" || p->worker == "local:1" || p->worker == "local:2")
          << p->worker;
    }
  }
  EXPECT_EQ(by_worker.size(), 3u);
  for (const auto& [worker, n] : by_worker) {
    EXPECT_TRUE(worker == "local:0" || worker == "local:1" || worker == "local:2") << worker;
  }
  for (const auto& e : log_one) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      EXPECT_EQ(ev->worker, "local");
    }
  }
  // The roster is in CampaignStarted; nothing joined or was lost on the way.
  const auto* started = log_three.front().payload.AsCampaignStarted();
  ASSERT_NE(started, nullptr);
  bool named = false;
  for (const auto& kv : started->software) {
    if (kv->key == "workers") {
      EXPECT_EQ(kv->value, "local:0, local:1, local:2");
      named = true;
    }
  }
  EXPECT_TRUE(named);
  auto v = run_process({kArcReplay.string(), "verify", three.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

// Three remote workers answering from the same recorded measurements (arc-eval --serve
// --backend replay), over caf::io with their secret: the campaign equals the one-worker run.
TEST(Workers, ThreeRemoteReplayWorkersDecideAsOneLocalWorker) {
  const fs::path secret = testing::new_secret_file("workers-secret");
  ASSERT_FALSE(secret.empty());
  std::vector<std::unique_ptr<testing::WorkerProcess>> workers;
  std::string list;
  for (int i = 0; i < 3; ++i) {
    std::string why;
    auto w =
        testing::WorkerProcess::start(secret, scratch("cache-" + std::to_string(i)), 0, &why,
                                      {"--backend", "replay", "--replay", kMeasurements.string()});
    ASSERT_NE(w, nullptr) << why;
    list += (list.empty() ? "" : ",") + w->endpoint().text();
    workers.push_back(std::move(w));
  }
  const fs::path one = scratch("remote-one"), three = scratch("remote-three");
  auto a = run_on(one, "local");
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = run_process({kArcd.string(), "run", kCampaign.string(), "--run-dir", three.string(),
                        "--budget", "16", "--mode", "lockstep", "--quiet", "--workers", list,
                        "--worker-secret", secret.string()});
  ASSERT_EQ(b.code, 0) << b.err;
  const auto log_three = log_of(three);
  EXPECT_EQ(trajectory(log_of(one)), trajectory(log_three));
  std::set<std::string> used;
  for (const auto& e : log_three) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) used.insert(ev->worker);
  }
  EXPECT_EQ(used.size(), 3u);
  for (const auto& w : workers) EXPECT_EQ(used.count(w->endpoint().text()), 1u);
  auto v = run_process({kArcReplay.string(), "verify", three.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

TEST(Workers, AsyncOnThreeWorkersVerifies) {
  const fs::path dir = scratch("async");
  auto r = run_on(dir, "local:0,local:1,local:2", "async");
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> evaluated;
  for (const auto& e : log_of(dir)) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      EXPECT_TRUE(evaluated.insert(ev->candidate_hash).second);
      EXPECT_FALSE(ev->worker.empty());
    }
  }
  EXPECT_GT(evaluated.size(), 10u);
  auto v = run_process({kArcReplay.string(), "verify", dir.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

TEST(Workers, BadWorkerListsAreRefusedBeforeAnythingIsWritten) {
  struct Case {
    std::string workers, message;
  };
  for (const Case& c :
       {Case{"local:x", "local:N with a device ordinal"}, Case{"local,local:0", "listed twice"},
        Case{"auto,local", "\"auto\" stands alone"}, Case{"host-without-port", "--workers"},
        Case{"10.0.0.1:99999", "--workers"}}) {
    const fs::path dir = scratch("bad");
    auto r = run_on(dir, c.workers);
    EXPECT_EQ(r.code, 2) << c.workers << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.workers << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "log")) << c.workers;
  }
}

}  // namespace
}  // namespace arc
