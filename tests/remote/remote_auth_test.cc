// Who a remote worker serves, and whom an engine trusts (eval/remote_protocol.h): a wrong
// secret is refused both ways, a client that skips the handshake gets nothing evaluated, and a
// fake worker that cannot prove the secret is refused before it could answer anything. Real
// `arc-eval --serve` processes, real caf::io; the rogue client and the fake worker are CAF
// actors of the test's own actor system.
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/secure_random.h"
#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "eval/remote_atoms.h"
#include "eval/remote_evaluator.h"
#include "eval/worker_secret.h"
#include "problem/problem.h"
#include "tests/remote/worker_process.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::WorkerProcess;

const fs::path kProblem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";

// An actor system of the test's own, apart from the evaluators'.
struct TestSystem {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  TestSystem() {
    cfg.load<caf::io::middleman>();
    system = std::make_unique<caf::actor_system>(cfg);
  }
};

// The error's context string (what the worker said), else CAF's rendering.
std::string what(caf::actor_system& sys, const caf::error& err) {
  if (err.context().match_elements<std::string>()) return err.context().get_as<std::string>(0);
  return sys.render(err);
}

std::string nonce() {
  auto n = secure_random_hex(32);
  return n ? n.value() : std::string();
}

class RemoteAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_file_ = testing::new_secret_file("auth-secret");
    ASSERT_FALSE(secret_file_.empty());
    cache_ = testing::scratch_path("remote", "auth-cache");
    std::string why;
    worker_ = WorkerProcess::start(secret_file_, cache_, 0, &why);
    ASSERT_TRUE(worker_) << why;
    auto p = problem::load_problem(kProblem);
    ASSERT_TRUE(p) << p.status().to_string();
    problem_ = p.value();
  }

  // The worker as a remote actor of `sys`.
  caf::actor connect(caf::actor_system& sys) {
    auto a = sys.middleman().remote_actor(worker_->endpoint().host, worker_->endpoint().port);
    EXPECT_TRUE(a) << sys.render(a.error());
    return a ? *a : caf::actor();
  }

  fs::path secret_file_;
  fs::path cache_;
  std::unique_ptr<WorkerProcess> worker_;
  problem::Problem problem_;
};

TEST_F(RemoteAuthTest, AWrongSecretIsRefusedBothWays) {
  RemoteEvaluatorOptions o;
  o.endpoint = worker_->endpoint();
  o.secret = std::string(64, 'f');
  auto ev = make_remote_evaluator(problem_, o);
  ASSERT_FALSE(ev);
  EXPECT_THAT(ev.status().message(), HasSubstr("authentication failed"));
  EXPECT_THAT(ev.status().message(), HasSubstr(worker_->endpoint().text()));

  // A client that answers the worker's challenge without the secret is refused by the worker.
  TestSystem t;
  caf::actor w = connect(*t.system);
  ASSERT_TRUE(w);
  caf::scoped_actor self{*t.system};
  std::string worker_nonce;
  self->request(w, std::chrono::seconds(30), remote::hello_atom_v, nonce())
      .receive([&worker_nonce](std::string& n, std::string&) { worker_nonce = n; },
               [](caf::error&) {});
  ASSERT_EQ(worker_nonce.size(), 64u);
  std::string refusal;
  self->request(w, std::chrono::seconds(30), remote::login_atom_v, worker_nonce,
                std::string(64, '0'))
      .receive([](std::string&) {},
               [&refusal, &t](caf::error& err) { refusal = what(*t.system, err); });
  EXPECT_THAT(refusal, HasSubstr("authentication failed"));
  // The nonce was spent by the failed attempt.
  std::string again;
  self->request(w, std::chrono::seconds(30), remote::login_atom_v, worker_nonce,
                std::string(64, '0'))
      .receive([](std::string&) {},
               [&again, &t](caf::error& err) { again = what(*t.system, err); });
  EXPECT_THAT(again, HasSubstr("unknown or used nonce"));
  EXPECT_THAT(worker_->stderr_text(), HasSubstr("refused login from "));
}

TEST_F(RemoteAuthTest, ARogueClientWithoutTheHandshakeGetsNothingEvaluated) {
  TestSystem t;
  caf::actor w = connect(*t.system);
  ASSERT_TRUE(w);
  caf::scoped_actor self{*t.system};
  auto refused = [&self, &t, &w](auto... args) {
    std::string out = "answered";
    self->request(w, std::chrono::seconds(30), args...)
        .receive([](std::string&) {}, [&out, &t](caf::error& err) { out = what(*t.system, err); });
    return out;
  };
  const std::string token = nonce();
  const problem::Candidate& c = problem_.seed;
  EXPECT_THAT(refused(remote::attach_atom_v, token, std::string("{}")),
              HasSubstr("not authenticated"));
  EXPECT_THAT(refused(remote::compile_atom_v, token, problem_.hash, c.canonical(), c.hash()),
              HasSubstr("not authenticated"));
  EXPECT_THAT(
      refused(remote::evaluate_atom_v, token, problem_.hash, std::string("{\"candidate\":\"x\"}")),
      HasSubstr("not authenticated"));
  EXPECT_THAT(refused(remote::peaks_atom_v, token, problem_.hash), HasSubstr("not authenticated"));
  const std::string log = worker_->stderr_text();
  EXPECT_THAT(log, HasSubstr("refused evaluate from "));
  EXPECT_THAT(log, HasSubstr("refused compile from "));
  // Nothing was compiled: the worker's compile cache holds no file.
  std::error_code ec;
  size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(cache_, ec);
       !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file()) ++files;
  }
  EXPECT_EQ(files, 0u);

  // A real engine still gets served meanwhile.
  auto secret = read_worker_secret(secret_file_);
  ASSERT_TRUE(secret);
  RemoteEvaluatorOptions o;
  o.endpoint = worker_->endpoint();
  o.secret = secret.value();
  auto ev = make_remote_evaluator(problem_, o);
  ASSERT_TRUE(ev) << ev.status().to_string();
  EXPECT_TRUE(ev.value()->availability());
}

// A worker that does not know the secret: it answers hello with a made-up proof and counts
// whatever else reaches it.
struct FakeWorkerState {
  std::shared_ptr<std::atomic<int>> hellos;
  std::shared_ptr<std::atomic<int>> others;
  static inline const char* name = "fake-worker";
};

caf::behavior fake_worker(caf::stateful_actor<FakeWorkerState>* self,
                          std::shared_ptr<std::atomic<int>> hellos,
                          std::shared_ptr<std::atomic<int>> others) {
  self->state.hellos = std::move(hellos);
  self->state.others = std::move(others);
  self->set_default_handler([self](caf::scheduled_actor*, caf::message_view&) {
    ++*self->state.others;
    return caf::result<caf::message>(caf::make_message(std::string("injected")));
  });
  return {
      [self](remote::hello_atom, const std::string&) -> caf::result<std::string, std::string> {
        ++*self->state.hellos;
        return {nonce(), nonce()};
      },
  };
}

TEST_F(RemoteAuthTest, AFakeWorkerIsRefusedBeforeItCanAnswerAnything) {
  TestSystem t;
  auto hellos = std::make_shared<std::atomic<int>>(0);
  auto others = std::make_shared<std::atomic<int>>(0);
  caf::actor fake = t.system->spawn(fake_worker, hellos, others);
  auto port = t.system->middleman().publish(fake, 0, "127.0.0.1");
  ASSERT_TRUE(port) << t.system->render(port.error());

  auto secret = read_worker_secret(secret_file_);
  ASSERT_TRUE(secret);
  RemoteEvaluatorOptions o;
  o.endpoint = RemoteEndpoint{"127.0.0.1", port.value()};
  o.secret = secret.value();
  auto ev = make_remote_evaluator(problem_, o);
  ASSERT_FALSE(ev);
  EXPECT_THAT(ev.status().message(), HasSubstr("authentication failed"));
  EXPECT_THAT(ev.status().message(), HasSubstr(o.endpoint.text()));
  EXPECT_EQ(hellos->load(), 1);
  // No login, attach, compile or evaluate ever reached it.
  EXPECT_EQ(others->load(), 0);
  caf::anon_send_exit(fake, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace arc::eval
