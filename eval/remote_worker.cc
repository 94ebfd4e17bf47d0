// The remote worker: the actor that serves engines over caf::io, and `arc-eval --serve`'s
// process around it (eval/remote_worker.h; the protocol: eval/remote_protocol.h).
#include "eval/remote_worker.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <pthread.h>
#include <signal.h>

#include "base/hmac.h"
#include "base/secure_random.h"
#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "eval/evaluators.h"
#include "eval/remote_atoms.h"
#include "eval/remote_protocol.h"
#include "eval/subprocess.h"
#include "eval/worker_secret.h"
#include "events/codec.h"
#include "problem/problem_copy.h"

namespace arc::eval {

namespace {

namespace fs = std::filesystem;
using remote::attach_atom;
using remote::compile_atom;
using remote::evaluate_atom;
using remote::hello_atom;
using remote::login_atom;
using remote::peaks_atom;

// Bounds on what peers can make the worker keep.
constexpr size_t kMaxPendingHellos = 256;  // handshakes begun and not finished
constexpr size_t kMaxSessions = 256;       // tokens; the oldest expires first
constexpr size_t kMaxCompiled = 4096;      // compile results kept per problem
constexpr char kActorName[] = "remote-worker";

// What every request is served with; fixed before the worker starts.
struct WorkerSetup {
  std::string secret;
  EvaluatorChoice choice;
  size_t max_problems = 8;
  // Set by the serving process before it stops the worker: only then does an exit message end
  // it (anyone holding its handle, remote peers included, can send one).
  std::atomic<bool> stopping{false};
};

struct PendingHello {
  std::string client_nonce;
  caf::actor_addr peer;
};

struct AttachedProblem {
  std::shared_ptr<const fs::path> folder;  // the private copy the problem was loaded from
  problem::Problem problem;
  std::unique_ptr<Evaluator> evaluator;
  std::string identity;                                  // the attach reply
  std::map<std::string, fb::CompileFinishedT> compiled;  // by candidate hash
};

struct WorkerState {
  std::shared_ptr<WorkerSetup> setup;
  std::map<std::string, PendingHello> hellos;  // by worker nonce
  std::deque<std::string> hello_order;
  std::vector<std::pair<std::string, caf::actor_addr>> sessions;     // token, owner; oldest first
  std::map<std::string, std::unique_ptr<AttachedProblem>> problems;  // by problem hash
  std::deque<std::string> problem_order;
  static inline const char* name = "arc-remote-worker";
};

using WorkerActor = caf::stateful_actor<WorkerState>;

std::string peer_of(WorkerActor* self) {
  const caf::strong_actor_ptr& s = self->current_sender();
  return s ? caf::to_string(s->node()) : std::string("an anonymous sender");
}

caf::actor_addr sender_of(WorkerActor* self) {
  const caf::strong_actor_ptr& s = self->current_sender();
  return s ? s->address() : caf::actor_addr();
}

// An error for the peer, printed with its node.
caf::error refuse(WorkerActor* self, const char* request, const std::string& why) {
  std::fprintf(stderr, "arc-eval: refused %s from %s: %s\n", request, peer_of(self).c_str(),
               why.c_str());
  return caf::make_error(caf::sec::runtime_error, why);
}

// Whether `token` is a session of the sender's. Every token is compared, in constant time.
bool authenticated(WorkerActor* self, const std::string& token) {
  const caf::actor_addr peer = sender_of(self);
  bool found = false;
  for (const auto& [t, owner] : self->state.sessions) {
    if (constant_time_equal(t, token) && owner && owner == peer) found = true;
  }
  return found;
}

// The attached problem `hash`, or null.
AttachedProblem* attached(WorkerActor* self, const std::string& hash) {
  auto it = self->state.problems.find(hash);
  return it == self->state.problems.end() ? nullptr : it->second.get();
}

caf::result<std::string, std::string> on_hello(WorkerActor* self, const std::string& client_nonce) {
  if (!is_remote_nonce(client_nonce)) {
    return refuse(self, "hello", "authentication failed: expected a nonce of 64 hex digits");
  }
  auto nonce = secure_random_hex(32);
  if (!nonce) return refuse(self, "hello", nonce.status().message());
  WorkerState& st = self->state;
  st.hellos[nonce.value()] = PendingHello{client_nonce, sender_of(self)};
  st.hello_order.push_back(nonce.value());
  while (st.hello_order.size() > kMaxPendingHellos) {
    st.hellos.erase(st.hello_order.front());
    st.hello_order.pop_front();
  }
  return {nonce.value(), remote_worker_proof(st.setup->secret, client_nonce, nonce.value())};
}

caf::result<std::string> on_login(WorkerActor* self, const std::string& worker_nonce,
                                  const std::string& proof) {
  WorkerState& st = self->state;
  auto it = st.hellos.find(worker_nonce);
  if (it == st.hellos.end()) {
    return refuse(self, "login", "authentication failed: unknown or used nonce");
  }
  const PendingHello hello = it->second;
  st.hellos.erase(it);  // single use, whatever follows
  const caf::actor_addr peer = sender_of(self);
  const std::string expected =
      remote_client_proof(st.setup->secret, worker_nonce, hello.client_nonce);
  if (!peer || peer != hello.peer || !constant_time_equal(expected, proof)) {
    return refuse(self, "login", "authentication failed: wrong proof of the shared secret");
  }
  auto token = secure_random_hex(32);
  if (!token) return refuse(self, "login", token.status().message());
  st.sessions.emplace_back(token.value(), peer);
  if (st.sessions.size() > kMaxSessions) st.sessions.erase(st.sessions.begin());
  // Its sessions end when it does (or its node's connection drops).
  self->monitor(caf::actor_cast<caf::actor>(self->current_sender()));
  return token.value();
}

caf::result<std::string> on_attach(WorkerActor* self, const std::string& token,
                                   const std::string& text) {
  if (!authenticated(self, token)) return refuse(self, "attach", "not authenticated");
  auto req = parse_attach(text);
  if (!req) return refuse(self, "attach", req.status().message());
  WorkerState& st = self->state;
  if (AttachedProblem* known = attached(self, req->problem_hash)) return known->identity;
  auto ap = std::make_unique<AttachedProblem>();
  auto folder = problem::make_private_folder("kernelarc-remote");
  if (!folder) return refuse(self, "attach", folder.status().message());
  ap->folder = std::move(folder.value());
  auto dir = problem::write_problem_files(*ap->folder, req->problem_dir, req->files);
  if (!dir)
    return refuse(self, "attach", "problem " + req->problem_dir + ": " + dir.status().message());
  auto loaded = problem::load_problem(dir.value());
  if (!loaded) {
    return refuse(self, "attach",
                  "problem " + req->problem_dir +
                      " does not load on the worker: " + loaded.status().message());
  }
  if (loaded->hash != req->problem_hash) {
    return refuse(self, "attach",
                  "problem " + req->problem_dir + ": the engine names hash " +
                      problem::short_hash(req->problem_hash) + ", its files hash to " +
                      problem::short_hash(loaded->hash) + " here");
  }
  ap->problem = std::move(loaded.value());
  auto evaluator = make_evaluator(st.setup->choice, ap->problem);
  if (!evaluator) return refuse(self, "attach", evaluator.status().message());
  ap->evaluator = std::move(evaluator.value());
  const Evaluator& ev = *ap->evaluator;
  ap->identity = identity_json({ev.name(), ev.device(), ev.device_model(), ev.device_key()});
  std::string identity = ap->identity;
  st.problems[req->problem_hash] = std::move(ap);
  st.problem_order.push_back(req->problem_hash);
  while (st.problem_order.size() > st.setup->max_problems) {
    st.problems.erase(st.problem_order.front());
    st.problem_order.pop_front();
  }
  return identity;
}

// The attached problem a request names, or the error for the peer.
AttachedProblem* problem_of(WorkerActor* self, const char* request, const std::string& hash,
                            caf::error* err) {
  AttachedProblem* ap = attached(self, hash);
  if (ap == nullptr) {
    *err = refuse(self, request,
                  "problem " + problem::short_hash(hash) + " is not attached (attach it first)");
  }
  return ap;
}

template <class Payload>
std::string frame_of(Payload payload) {
  return events::encode_frame(events::make_event(kActorName, std::move(payload)));
}

// The compile result of `c`, compiled now unless it was already.
const fb::CompileFinishedT& compiled(AttachedProblem& ap, const problem::Candidate& c,
                                     const std::string& hash) {
  auto it = ap.compiled.find(hash);
  if (it != ap.compiled.end()) return it->second;
  if (ap.compiled.size() >= kMaxCompiled) ap.compiled.clear();
  return ap.compiled.emplace(hash, ap.evaluator->compile(c, hash)).first->second;
}

caf::behavior remote_worker(WorkerActor* self, std::shared_ptr<WorkerSetup> setup) {
  self->state.setup = std::move(setup);
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (self->state.setup->stopping.load()) {
      self->quit(msg.reason);
    } else {
      refuse(self, "exit", "only the serving process stops its worker");
    }
  });
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& sessions = self->state.sessions;
    sessions.erase(std::remove_if(sessions.begin(), sessions.end(),
                                  [&msg](const auto& s) { return s.second == msg.source; }),
                   sessions.end());
  });
  return {
      [self](hello_atom, const std::string& client_nonce) { return on_hello(self, client_nonce); },
      [self](login_atom, const std::string& worker_nonce, const std::string& proof) {
        return on_login(self, worker_nonce, proof);
      },
      [self](attach_atom, const std::string& token, const std::string& text) {
        return on_attach(self, token, text);
      },
      [self](peaks_atom, const std::string& token,
             const std::string& hash) -> caf::result<std::string> {
        if (!authenticated(self, token)) return refuse(self, "peaks", "not authenticated");
        caf::error err;
        AttachedProblem* ap = problem_of(self, "peaks", hash, &err);
        if (ap == nullptr) return err;
        auto peaks = ap->evaluator->peaks();
        if (!peaks) return refuse(self, "peaks", peaks.status().to_string());
        return frame_of(std::move(peaks.value()));
      },
      [self](compile_atom, const std::string& token, const std::string& hash,
             const std::string& canonical,
             const std::string& candidate_hash) -> caf::result<std::string> {
        if (!authenticated(self, token)) return refuse(self, "compile", "not authenticated");
        caf::error err;
        AttachedProblem* ap = problem_of(self, "compile", hash, &err);
        if (ap == nullptr) return err;
        auto c = parse_remote_candidate(canonical, candidate_hash);
        if (!c) return refuse(self, "compile", c.status().message());
        return frame_of(compiled(*ap, c.value(), candidate_hash));
      },
      [self](evaluate_atom, const std::string& token, const std::string& hash,
             const std::string& text) -> caf::result<std::string> {
        if (!authenticated(self, token)) return refuse(self, "evaluate", "not authenticated");
        caf::error err;
        AttachedProblem* ap = problem_of(self, "evaluate", hash, &err);
        if (ap == nullptr) return err;
        auto req = parse_evaluate_request(text);
        if (!req) return refuse(self, "evaluate", req.status().message());
        const fb::CompileFinishedT& c = compiled(*ap, req->candidate, req->candidate_hash);
        fb::CandidateEvaluatedT e = ap->evaluator->evaluate(req.value(), c);
        // The request's, as a local guard records them (a replay backend answers with the
        // recorded run's seed).
        e.candidate_hash = req->candidate_hash;
        e.input_seed = req->input_seed;
        return frame_of(std::move(e));
      },
  };
}

std::string describe_device(const RemoteWorkerOptions& o) {
  if (o.backend == "cuda") {
    return "cuda device " + std::to_string(o.device);
  }
  if (o.backend == "replay") {
    return "replay of " + std::to_string(o.replay_logs.size()) + " recorded run(s)";
  }
  return o.backend + " (this machine's CPU)";
}

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "arc-eval: %s\n", message.c_str());
  return code;
}

// Ends the process, children with it (they die with their parent), when the worker is still
// busy `seconds` after it was asked to stop (an evaluation can take minutes).
class StopWatchdog {
 public:
  explicit StopWatchdog(double seconds)
      : thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                            [this] { return done_; })) {
            std::fprintf(stderr, "arc-eval: the worker did not stop in time; exiting\n");
            std::fflush(stderr);
            std::_Exit(0);
          }
        }) {}
  ~StopWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

int serve_remote_worker(const RemoteWorkerOptions& o) {
  const fs::path secret_path = o.secret_file.empty() ? default_worker_secret_path() : o.secret_file;
  // Nothing this process starts (compilers, workers, candidates) may learn where the secret is.
  ::unsetenv("ARC_WORKER_SECRET_FILE");
  ::unsetenv("ARC_WORKER_SECRET");
  auto secret = read_worker_secret(secret_path);
  if (!secret) return fail("--secret-file: " + secret.status().message(), 2);
  if (o.backend == "auto" || find_evaluator_backend(o.backend) == nullptr) {
    return fail("--backend: expected host, cuda, replay or synthetic, got \"" + o.backend + "\"",
                2);
  }
  if (o.backend == "replay" && o.replay_logs.empty()) {
    return fail("--replay: the replay backend needs at least one recorded run directory", 2);
  }
  auto setup = std::make_shared<WorkerSetup>();
  setup->secret = std::move(secret.value());
  setup->max_problems = std::max<size_t>(o.max_problems, 1);
  setup->choice.kind = o.backend;
  setup->choice.replay_logs = o.replay_logs;
  setup->choice.device = o.device;
  setup->choice.synthetic_seconds = o.synthetic_seconds;
  setup->choice.cache_dir = o.cache_dir.empty() ? default_cache_dir() : o.cache_dir;
  setup->choice.sandbox = Sandbox::detect(o.sandbox);
  if (o.sandbox == SandboxMode::kOn && !setup->choice.sandbox.enabled()) {
    return fail("--sandbox require: the sandbox is unavailable: " + setup->choice.sandbox.reason(),
                2);
  }
  if (find_evaluator_backend(o.backend)->measures && !setup->choice.sandbox.enabled()) {
    std::fprintf(stderr, "arc-eval: warning: candidates run without a sandbox (%s)\n",
                 setup->choice.sandbox.reason().c_str());
  }
  // Blocked before CAF starts its threads, so they inherit the mask and sigwait() below is the
  // one place the signals arrive.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::optional<StopWatchdog> watchdog;  // outlives the actor system: bounds its shutdown too
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system system{cfg};
  caf::actor worker = system.spawn<caf::detached>(remote_worker, setup);
  auto port = system.middleman().publish(worker, o.port, o.address.c_str(), /*reuse=*/true);
  if (!port) {
    setup->stopping = true;
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    return fail("--serve " + RemoteEndpoint{o.address, o.port}.text() +
                    ": cannot listen: " + system.render(port.error()),
                1);
  }
  const RemoteEndpoint bound{o.address, port.value()};
  std::printf("arc-eval: serving on %s (device: %s)\n", bound.text().c_str(),
              describe_device(o).c_str());
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  std::fprintf(stderr, "arc-eval: %s: stopping\n", signal_name(sig).c_str());
  (void)system.middleman().unpublish(worker, bound.port);
  setup->stopping = true;
  watchdog.emplace(10);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  caf::scoped_actor waiter{system};
  waiter->wait_for(worker);
  return 0;
}

}  // namespace arc::eval
