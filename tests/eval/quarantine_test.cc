// Quarantine (eval/quarantine.h) with the real host evaluator in real processes: a process that
// evaluates a hanging candidate is killed mid-evaluation twice; the third process to meet the
// candidate does not run it and answers CRASH "quarantined".
#include "eval/quarantine.h"

#include <chrono>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/host_evaluator.h"
#include "problem/problem.h"
#include "tests/scratch.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kProblem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";

problem::Candidate hanging() {
  problem::Candidate c;
  c.base.source =
      "#include \"eval/host_abi.h\"\n"
      "extern \"C\" int arc_kernel(const arc_host_args* a) { for (;;) {} }\n";
  return c;
}

std::unique_ptr<Evaluator> make(const problem::Problem& p, const fs::path& dir) {
  HostEvaluatorOptions o;
  o.cache_dir = dir / "cache";
  o.worker_path = fs::path(ARC_BINARY_DIR) / "tools" / "arc-eval";
  o.include_root = ARC_SOURCE_DIR;
  return with_quarantine(std::make_unique<HostEvaluator>(p, o), dir / "quarantine", p);
}

EvalRequest request_for(const problem::Candidate& c) {
  EvalRequest r;
  r.candidate = c;
  r.candidate_hash = c.hash();
  r.input_seed = 7;
  r.settings.timeout_s = 60;
  r.settings.rounds = 1;
  return r;
}

int attempts(const fs::path& note) {
  std::ifstream in(note);
  int n = 0;
  return in >> n ? n : 0;
}

TEST(Quarantine, ACandidateThatTookTheEngineDownTwiceIsNotRunAgain) {
  auto p = problem::load_problem(kProblem);
  ASSERT_TRUE(p) << p.status().to_string();
  const fs::path dir = testing::scratch_path("quarantine", "run");
  const problem::Candidate c = hanging();
  const fs::path note = dir / "quarantine" / c.hash();
  for (int round = 1; round <= kQuarantineAttempts; ++round) {
    pid_t child = ::fork();
    if (child == 0) {
      auto e = make(*p, dir);
      auto compiled = e->compile(c, c.hash());
      (void)e->evaluate(request_for(c), compiled);  // hangs until killed
      ::_exit(0);
    }
    // Killed once it is evaluating: its note counts this attempt.
    bool evaluating = false;
    for (int i = 0; i < 3000 && !evaluating; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      evaluating = attempts(note) == round;
      if (evaluating) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        evaluating = attempts(note) == round;
      }
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(evaluating) << "round " << round << ": the attempt was never noted (count "
                            << attempts(note) << ")";
  }
  auto e = make(*p, dir);
  auto compiled = e->compile(c, c.hash());
  EXPECT_FALSE(compiled.ok);
  ASSERT_FALSE(compiled.variants.empty());
  EXPECT_THAT(compiled.variants[0]->error, HasSubstr("quarantined"));
  auto r = e->evaluate(request_for(c), compiled);
  ASSERT_EQ(r.workloads.size(), p->workloads.size());
  for (const auto& w : r.workloads) {
    EXPECT_EQ(w->status, fb::WorkloadStatus::CRASH);
    EXPECT_THAT(w->error, HasSubstr("quarantined: 2 attempts"));
  }
  // An honest candidate is unaffected, and its note is gone once it returns.
  problem::Candidate honest = hanging();
  honest.base.source =
      "#include \"eval/host_abi.h\"\nextern \"C\" int arc_kernel(const arc_host_args* a) "
      "{ return 0; }\n";
  auto hc = e->compile(honest, honest.hash());
  EXPECT_THAT(hc.variants.empty() ? "" : hc.variants[0]->error, Not(HasSubstr("quarantined")));
  EXPECT_FALSE(fs::exists(dir / "quarantine" / honest.hash()));
}

}  // namespace
}  // namespace arc::eval
