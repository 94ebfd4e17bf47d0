// Infrastructure faults (eval/worker_client.h): a worker killed or stopped from outside while it
// evaluates an honest candidate costs a retry on a fresh worker, never a verdict against the
// candidate. Real host evaluator, real worker processes, real signals.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "eval/host_evaluator.h"
#include "problem/problem.h"
#include "tests/eval/process_tree.h"
#include "tests/eval/slow_softmax.h"
#include "tests/scratch.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kProblem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";
const fs::path kWorker = fs::path(ARC_BINARY_DIR) / "tools" / "arc-eval";

using testing::parent_of;

// The pids of running worker processes started by this test process (argv[0] is the worker
// binary, "--worker" follows; under the sandbox it is bubblewrap's grandchild).
std::vector<pid_t> worker_pids() {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.rfind(kWorker.string() + '\0' + "--worker", 0) != 0) continue;
    const pid_t pid = std::stoi(name);
    for (pid_t up = pid; up > 1; up = parent_of(up)) {
      if (up == ::getpid()) {
        out.push_back(pid);
        break;
      }
    }
  }
  return out;
}

class InfrastructureFault : public ::testing::TestWithParam<int> {};

TEST_P(InfrastructureFault, IsRetriedOnAFreshWorkerAndBlamesNoOne) {
  const int sig = GetParam();
  auto p = problem::load_problem(kProblem);
  ASSERT_TRUE(p) << p.status().to_string();
  HostEvaluatorOptions o;
  o.cache_dir = testing::scratch_path("infra-fault", "cache-" + std::to_string(sig));
  o.worker_path = kWorker;
  o.include_root = ARC_SOURCE_DIR;
  o.sandbox = Sandbox::detect(SandboxMode::kAuto);
  HostEvaluator e(*p, o);
  const problem::Candidate c = testing::slow_softmax();
  auto compiled = e.compile(c, c.hash());
  ASSERT_TRUE(compiled.ok);
  EvalRequest req;
  req.candidate = c;
  req.candidate_hash = c.hash();
  req.input_seed = 3;
  req.settings.rounds = 2;
  req.settings.warmup = 2;
  req.settings.repetitions = 10;
  req.settings.buffer_sets = 1;
  req.settings.flush_cache = false;
  req.settings.timeout_s = 10;
  ASSERT_TRUE(e.compile_reference().ok);
  ASSERT_TRUE(e.peaks().ok());  // the worker that will evaluate is running now
  const std::vector<pid_t> ours = worker_pids();
  ASSERT_EQ(ours.size(), 1u);
  std::atomic<bool> hit{false};
  std::thread outsider([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // mid-evaluation
    hit = ::kill(ours[0], sig) == 0;
  });
  auto r = e.evaluate(req, compiled);
  outsider.join();
  ASSERT_TRUE(hit) << "no worker was seen to signal";
  ASSERT_EQ(r.workloads.size(), p->workloads.size());
  for (const auto& w : r.workloads) {
    EXPECT_EQ(w->status, fb::WorkloadStatus::OK)
        << fb::EnumNameWorkloadStatus(w->status) << ": " << w->error;
  }
  std::string retried;
  for (const auto& kv : r.workloads.front()->details) {
    if (kv->key == "retried") retried = kv->value;
  }
  EXPECT_THAT(retried, HasSubstr("infrastructure fault"));
  EXPECT_GE(r.worker_restarts, 1u);
}

INSTANTIATE_TEST_SUITE_P(Signals, InfrastructureFault, ::testing::Values(SIGKILL, SIGSTOP),
                         [](const auto& info) {
                           return info.param == SIGKILL ? "Killed" : "Stopped";
                         });

}  // namespace
}  // namespace arc::eval
