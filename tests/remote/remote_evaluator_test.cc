// Remote evaluation end to end (eval/remote_evaluator.h, eval/remote_worker.h): real
// `arc-eval --serve` processes on 127.0.0.1, the shipped host softmax problem, real caf::io.
// A remote worker measures the baseline like a local one; a worker killed mid-evaluation is
// noticed by its connection dropping (not by the call's timeout), and a new worker on the same
// port is won back by reconnect().
#include "eval/remote_evaluator.h"

#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eval/subprocess.h"
#include "eval/worker_secret.h"
#include "problem/problem.h"
#include "tests/eval/process_tree.h"
#include "tests/eval/slow_softmax.h"
#include "tests/remote/worker_process.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::WorkerProcess;

const fs::path kProblem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";

problem::Problem softmax() {
  auto p = problem::load_problem(kProblem);
  EXPECT_TRUE(p) << p.status().to_string();
  return p.value();
}

EvalSettings quick() {
  EvalSettings s;
  s.rounds = 1;
  s.warmup = 1;
  s.repetitions = 3;
  s.buffer_sets = 1;
  s.timeout_s = 20;
  return s;
}

EvalRequest request_for(const problem::Candidate& c, EvalSettings settings) {
  EvalRequest r;
  r.candidate = c;
  r.candidate_hash = c.hash();
  r.input_seed = 7;
  r.settings = settings;
  return r;
}

// Whether `pid` has a child running `arc-eval --worker` (the evaluation's worker process).
bool has_worker_child(pid_t pid) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (testing::parent_of(std::stoi(name)) != pid) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(std::string("--worker") + '\0') != std::string::npos) return true;
  }
  return false;
}

class RemoteEvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_file_ = testing::new_secret_file("secret");
    ASSERT_FALSE(secret_file_.empty());
    auto secret = read_worker_secret(secret_file_);
    ASSERT_TRUE(secret) << secret.status().to_string();
    secret_ = secret.value();
    cache_ = testing::scratch_path("remote", "cache");
  }

  std::unique_ptr<WorkerProcess> start(uint16_t port = 0) {
    std::string why;
    auto w = WorkerProcess::start(secret_file_, cache_, port, &why);
    EXPECT_TRUE(w) << why;
    return w;
  }

  RemoteEvaluatorOptions options(const WorkerProcess& w) const {
    RemoteEvaluatorOptions o;
    o.endpoint = w.endpoint();
    o.secret = secret_;
    return o;
  }

  fs::path secret_file_;
  fs::path cache_;
  std::string secret_;
};

TEST_F(RemoteEvaluatorTest, MeasuresTheBaselineOnTheWorkersDevice) {
  auto w = start();
  ASSERT_TRUE(w);
  EXPECT_THAT(w->line(), HasSubstr("(device: "));
  const problem::Problem p = softmax();
  auto ev = make_remote_evaluator(p, options(*w));
  ASSERT_TRUE(ev) << ev.status().to_string();
  Evaluator& remote = *ev.value();
  EXPECT_TRUE(remote.availability());
  EXPECT_EQ(remote.worker(), "127.0.0.1:" + std::to_string(w->endpoint().port));
  EXPECT_EQ(remote.name(), "host");
  EXPECT_THAT(remote.device(), HasSubstr("host: "));

  auto peaks = remote.peaks();
  ASSERT_TRUE(peaks) << peaks.status().to_string();
  EXPECT_GT(peaks->bandwidth_bytes_per_s, 0);

  const fb::CompileFinishedT compiled = remote.compile(p.seed, p.seed.hash());
  ASSERT_TRUE(compiled.ok);
  EXPECT_EQ(compiled.candidate_hash, p.seed.hash());

  const fb::CandidateEvaluatedT r = remote.evaluate(request_for(p.seed, quick()), compiled);
  EXPECT_EQ(r.candidate_hash, p.seed.hash());
  EXPECT_EQ(r.device, remote.device());
  EXPECT_EQ(r.evaluator, "host");
  ASSERT_EQ(r.workloads.size(), p.workloads.size());
  for (size_t i = 0; i < r.workloads.size(); ++i) {
    EXPECT_EQ(r.workloads[i]->workload, p.workloads[i].name);
    EXPECT_EQ(r.workloads[i]->status, fb::WorkloadStatus::OK) << r.workloads[i]->error;
    EXPECT_EQ(r.workloads[i]->samples_ns.size(), 3u);
  }
  EXPECT_TRUE(remote.availability());
}

TEST_F(RemoteEvaluatorTest, AKilledWorkerIsNoticedAndANewOneOnThePortIsWonBack) {
  auto w = start();
  ASSERT_TRUE(w);
  const uint16_t port = w->endpoint().port;
  const std::string where = "127.0.0.1:" + std::to_string(port);
  const problem::Problem p = softmax();
  auto ev = make_remote_evaluator(p, options(*w));
  ASSERT_TRUE(ev) << ev.status().to_string();
  Evaluator& remote = *ev.value();

  const problem::Candidate slow = testing::slow_softmax();
  EvalSettings settings = quick();
  settings.repetitions = 500;  // ~10 s per workload
  const fb::CompileFinishedT compiled = remote.compile(slow, slow.hash());
  ASSERT_TRUE(compiled.ok);
  auto running = std::async(std::launch::async, [&remote, &slow, &settings, &compiled] {
    return remote.evaluate(request_for(slow, settings), compiled);
  });
  // Killed once its worker process measures.
  for (int i = 0; i < 600 && !has_worker_child(w->pid()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(has_worker_child(w->pid())) << w->stderr_text();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  w->kill_hard();
  // The call's own timeout is minutes away; the dropped connection ends it.
  ASSERT_EQ(running.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  const fb::CandidateEvaluatedT lost = running.get();
  ASSERT_EQ(lost.workloads.size(), p.workloads.size());
  for (const auto& wl : lost.workloads) {
    EXPECT_EQ(wl->status, fb::WorkloadStatus::NOT_RUN);
    EXPECT_THAT(wl->error, HasSubstr(where));
  }
  const Status down = remote.availability();
  ASSERT_FALSE(down);
  EXPECT_THAT(down.message(), HasSubstr("remote worker " + where));
  // Later calls answer at once while the worker is gone.
  EXPECT_FALSE(remote.compile(p.seed, p.seed.hash()).ok);
  EXPECT_FALSE(remote.reconnect());

  auto again = start(port);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->endpoint().port, port);
  Status back = remote.reconnect();
  ASSERT_TRUE(back) << back.to_string();
  EXPECT_TRUE(remote.availability());
  const fb::CompileFinishedT seed_compiled = remote.compile(p.seed, p.seed.hash());
  ASSERT_TRUE(seed_compiled.ok);
  const fb::CandidateEvaluatedT r = remote.evaluate(request_for(p.seed, quick()), seed_compiled);
  ASSERT_EQ(r.workloads.size(), p.workloads.size());
  for (const auto& wl : r.workloads) EXPECT_EQ(wl->status, fb::WorkloadStatus::OK) << wl->error;
}

TEST_F(RemoteEvaluatorTest, StopsCleanlyOnSigterm) {
  auto w = start();
  ASSERT_TRUE(w);
  const int status = w->stop();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << w->stderr_text();
}

TEST(RemoteWorkerArguments, BadFlagsExitTwoNamingTheFlag) {
  const fs::path secret = testing::new_secret_file("args-secret");
  ASSERT_FALSE(secret.empty());
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {{"--serve", "127.0.0.1:70000", "--secret-file", secret.string()}, "--serve"},
      {{"--serve", "127.0.0.1:http", "--secret-file", secret.string()}, "--serve"},
      {{"--serve", "0", "--secret-file", (secret.parent_path() / "missing").string()},
       "--secret-file"},
      {{"--serve", "0", "--secret-file", secret.string(), "--backend", "gpu"}, "--backend"},
      {{"--serve", "0", "--secret-file", secret.string(), "--sandbox", "maybe"}, "--sandbox"},
      {{"--serve", "0", "--secret-file", secret.string(), "--backend", "replay"}, "--replay"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {testing::kArcEval.string()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run_subprocess(argv);
    ASSERT_TRUE(r) << r.status().to_string();
    EXPECT_EQ(r->exit_code, 2) << c.args[1] << ": " << r->output;
    EXPECT_THAT(r->output, HasSubstr(c.flag)) << c.args[1];
  }
}

}  // namespace
}  // namespace arc::eval
