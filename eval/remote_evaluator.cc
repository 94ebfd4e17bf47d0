// The remote evaluator: an Evaluator over a worker on another host (eval/remote_evaluator.h;
// the protocol: eval/remote_protocol.h).
//
// Every request goes through a relay, a small actor of this process that stands between the
// caller's blocking request and the worker: it monitors the worker, so when the worker's
// connection drops it answers every request in flight at once with the reason instead of
// leaving the caller to wait for the timeout (a blocking receive on a response sees nothing
// else). The worker knows the engine by its relay: the session token is the relay's alone.
#include "eval/remote_evaluator.h"

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "base/hmac.h"
#include "base/secure_random.h"
#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "eval/remote_atoms.h"
#include "eval/worker_client.h"
#include "events/codec.h"

namespace arc::eval {

namespace {

using remote::attach_atom_v;
using remote::compile_atom_v;
using remote::evaluate_atom_v;
using remote::hello_atom_v;
using remote::login_atom_v;
using remote::peaks_atom_v;

// The actor system every RemoteEvaluator of the process shares, with the io middleman; created
// with the first and shut down after the last.
struct ClientRuntime {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;

  ClientRuntime() {
    cfg.load<caf::io::middleman>();
    cfg.set("scheduler.max-threads", 2);
    system = std::make_unique<caf::actor_system>(cfg);
  }
  ~ClientRuntime() { system.reset(); }
  ClientRuntime(const ClientRuntime&) = delete;
  ClientRuntime& operator=(const ClientRuntime&) = delete;
};

std::shared_ptr<ClientRuntime> client_runtime() {
  static std::mutex mu;
  static std::weak_ptr<ClientRuntime> shared;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<ClientRuntime> rt = shared.lock();
  if (!rt) {
    rt = std::make_shared<ClientRuntime>();
    shared = rt;
  }
  return rt;
}

struct RelayState {
  caf::actor worker;
  std::string lost;  // why the worker is gone; "" while it is there
  uint64_t next_id = 0;
  std::map<uint64_t, caf::response_promise> pending;
  static inline const char* name = "arc-remote-relay";
};

using RelayActor = caf::stateful_actor<RelayState>;

// Forwards `msg` to the worker; its reply (Reply...) or error goes back to the requester, or,
// when the worker is lost first, an error with the reason.
template <class... Reply>
caf::response_promise forward(RelayActor* self, caf::message msg) {
  caf::response_promise rp = self->make_response_promise();
  RelayState& st = self->state;
  if (!st.lost.empty()) {
    rp.deliver(caf::make_error(caf::sec::request_receiver_down, st.lost));
    return rp;
  }
  const uint64_t id = ++st.next_id;
  st.pending.emplace(id, rp);
  self->request(st.worker, caf::infinite, std::move(msg))
      .then(
          [self, id](Reply&... reply) {
            auto it = self->state.pending.find(id);
            if (it == self->state.pending.end()) return;
            it->second.deliver(std::move(reply)...);
            self->state.pending.erase(it);
          },
          [self, id](caf::error& err) {
            auto it = self->state.pending.find(id);
            if (it == self->state.pending.end()) return;
            it->second.deliver(std::move(err));
            self->state.pending.erase(it);
          });
  return rp;
}

caf::behavior relay(RelayActor* self, const caf::actor& worker) {
  self->state.worker = worker;
  self->monitor(worker);
  self->set_down_handler([self](caf::down_msg& msg) {
    RelayState& st = self->state;
    if (msg.source != st.worker.address()) return;
    st.lost = "the connection was lost (" + caf::to_string(msg.reason) + ")";
    for (auto& [id, rp] : st.pending) {
      rp.deliver(caf::make_error(caf::sec::request_receiver_down, st.lost));
    }
    st.pending.clear();
  });
  using S = std::string;
  return {
      [self](remote::hello_atom a, S& nonce) {
        return forward<S, S>(self, caf::make_message(a, std::move(nonce)));
      },
      [self](remote::login_atom a, S& nonce, S& proof) {
        return forward<S>(self, caf::make_message(a, std::move(nonce), std::move(proof)));
      },
      [self](remote::attach_atom a, S& token, S& text) {
        return forward<S>(self, caf::make_message(a, std::move(token), std::move(text)));
      },
      [self](remote::peaks_atom a, S& token, S& hash) {
        return forward<S>(self, caf::make_message(a, std::move(token), std::move(hash)));
      },
      [self](remote::compile_atom a, S& token, S& hash, S& canonical, S& candidate_hash) {
        return forward<S>(self, caf::make_message(a, std::move(token), std::move(hash),
                                                  std::move(canonical), std::move(candidate_hash)));
      },
      [self](remote::evaluate_atom a, S& token, S& hash, S& request) {
        return forward<S>(
            self, caf::make_message(a, std::move(token), std::move(hash), std::move(request)));
      },
  };
}

caf::timespan seconds(double s) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(s));
}

// A failed request: what went wrong, and whether the worker answered it with a refusal (it is
// still there) rather than being lost or silent.
struct CallError {
  std::string why;
  bool refused = false;
};

CallError describe(const caf::actor_system& system, const caf::error& err, double timeout_s) {
  CallError out;
  const bool system_error = err.category() == caf::atom("system");
  if (system_error && err.code() == static_cast<uint8_t>(caf::sec::request_timeout)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "it did not answer within %g s", timeout_s);
    out.why = buf;
    return out;
  }
  out.refused = system_error && err.code() == static_cast<uint8_t>(caf::sec::runtime_error);
  const caf::message& context = err.context();
  if (context.match_elements<std::string>()) {
    out.why = context.get_as<std::string>(0);
  } else {
    out.why = system.render(err);
  }
  return out;
}

class RemoteEvaluator final : public Evaluator {
 public:
  RemoteEvaluator(const problem::Problem& problem, RemoteEvaluatorOptions options)
      : problem_(problem),
        options_(std::move(options)),
        where_(options_.endpoint.text()),
        runtime_(client_runtime()) {}

  ~RemoteEvaluator() override {
    std::lock_guard<std::mutex> lock(call_mu_);
    drop();
  }
  RemoteEvaluator(const RemoteEvaluator&) = delete;
  RemoteEvaluator& operator=(const RemoteEvaluator&) = delete;

  // Connects, authenticates both ways and attaches the problem; availability() says how it went.
  Status open() {
    std::lock_guard<std::mutex> lock(call_mu_);
    Status s = open_locked();
    if (!s) drop();
    set_availability(s);
    return s;
  }

  std::string name() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return identity_.name;
  }
  std::string device() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return identity_.device;
  }
  std::string device_model() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return identity_.device_model;
  }
  std::string device_key() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return identity_.device_key;
  }
  std::string worker() const override { return where_; }
  Status availability() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return availability_;
  }
  Status reconnect() override { return open(); }

  Result<fb::PeaksMeasuredT> peaks() override {
    std::lock_guard<std::mutex> lock(call_mu_);
    bool refused = false;
    auto e = call(fb::Payload::PeaksMeasured, options_.peaks_timeout_s, &refused, peaks_atom_v,
                  token_, problem_.hash);
    if (!e) return e.status();
    return std::move(*e->payload.AsPeaksMeasured());
  }

  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override {
    std::lock_guard<std::mutex> lock(call_mu_);
    auto e = call(fb::Payload::CompileFinished, options_.compile_timeout_s, nullptr, compile_atom_v,
                  token_, problem_.hash, c.canonical(), hash);
    if (!e) return compile_failure(c, hash, e.status().message());
    fb::CompileFinishedT r = std::move(*e->payload.AsCompileFinished());
    if (r.candidate_hash != hash) {
      lose("it answered a compile of " + problem::short_hash(hash) + " for candidate " +
           problem::short_hash(r.candidate_hash));
      return compile_failure(c, hash, availability().message());
    }
    return r;
  }

  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override {
    std::lock_guard<std::mutex> lock(call_mu_);
    const double timeout_s =
        (request.settings.timeout_s + 30) * static_cast<double>(problem_.workloads.size() + 1) +
        120;
    auto e = call(fb::Payload::CandidateEvaluated, timeout_s, nullptr, evaluate_atom_v, token_,
                  problem_.hash, evaluate_request_json(request));
    if (!e) return not_run(request, e.status().message());
    fb::CandidateEvaluatedT r = std::move(*e->payload.AsCandidateEvaluated());
    if (r.candidate_hash != request.candidate_hash || r.input_seed != request.input_seed) {
      lose("it answered an evaluation of " + problem::short_hash(request.candidate_hash) +
           " with one of " + problem::short_hash(r.candidate_hash));
      return not_run(request, availability().message());
    }
    return r;
  }

 private:
  caf::actor_system& system() const { return *runtime_->system; }

  void set_availability(Status s) {
    std::lock_guard<std::mutex> lock(state_mu_);
    availability_ = std::move(s);
  }

  // Forgets the connection (the relay stops; the worker's sessions for it end with it).
  void drop() {
    if (relay_) caf::anon_send_exit(relay_, caf::exit_reason::user_shutdown);
    relay_ = caf::actor();
    worker_ = caf::actor();
    token_.clear();
  }

  // The worker is lost: availability() names it and `why`, until reconnect().
  void lose(const std::string& why) {
    drop();
    set_availability(Status::unavailable("remote worker " + where_ + ": " + why));
  }

  // One request through the relay, one reply of Reply... (strings) within the timeout.
  template <class Handler, class... Ts>
  std::optional<CallError> ask(double timeout_s, Handler on_reply, Ts&&... args) {
    std::optional<CallError> failed;
    caf::scoped_actor self{system()};
    const caf::actor_system* sys = &system();
    self->request(relay_, seconds(timeout_s), std::forward<Ts>(args)...)
        .receive(on_reply, [&failed, sys, timeout_s](caf::error& err) {
          failed = describe(*sys, err, timeout_s);
        });
    return failed;
  }

  // A request answered with an event frame of `expected`: the decoded event, or, when the
  // worker is lost, silent or answers nonsense, availability()'s error (the worker is then
  // dropped). A refusal (`refused` set, where asked for) leaves the connection as it is.
  template <class... Ts>
  Result<events::Event> call(fb::Payload expected, double timeout_s, bool* refused, Ts&&... args) {
    if (Status a = availability(); !a) return a;
    std::string frame;
    auto failed = ask(
        timeout_s, [&frame](std::string& reply) { frame = std::move(reply); },
        std::forward<Ts>(args)...);
    if (failed) {
      if (failed->refused && refused != nullptr) {
        *refused = true;
        return Status::unavailable("remote worker " + where_ + ": " + failed->why);
      }
      lose(failed->why);
      return availability();
    }
    auto e = events::decode_frame(frame);
    if (!e) {
      lose("its reply does not decode: " + e.status().message());
      return availability();
    }
    if (e->payload.type != expected) {
      lose(std::string("it answered with a ") + events::payload_name(e->payload.type) +
           ", expected a " + events::payload_name(expected));
      return availability();
    }
    return e;
  }

  // A result that is not the candidate's: every workload NOT_RUN with `why`.
  fb::CandidateEvaluatedT not_run(const EvalRequest& request, const std::string& why) const {
    fb::CandidateEvaluatedT out;
    out.candidate_hash = request.candidate_hash;
    out.input_seed = request.input_seed;
    out.device = device();
    out.evaluator = name();
    for (const problem::Workload& w : problem_.workloads) {
      out.workloads.push_back(make_workload(w.name, fb::WorkloadStatus::NOT_RUN, why));
    }
    return out;
  }

  // Connects to the worker, bounded by the connect timeout (connecting blocks for as long as
  // the network makes it).
  Result<caf::actor> connect() {
    using Connected = caf::expected<caf::actor>;
    auto promise = std::make_shared<std::promise<Connected>>();
    std::future<Connected> connected = promise->get_future();
    std::thread([rt = runtime_, host = options_.endpoint.host, port = options_.endpoint.port,
                 promise] {
      promise->set_value(rt->system->middleman().remote_actor(host, port));
    }).detach();
    if (connected.wait_for(seconds(options_.connect_timeout_s)) != std::future_status::ready) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "cannot connect: no connection within %g s",
                    options_.connect_timeout_s);
      return Status::unavailable(buf);
    }
    Connected worker = connected.get();
    if (!worker) return Status::unavailable("cannot connect: " + system().render(worker.error()));
    return std::move(*worker);
  }

  Status open_locked() {
    drop();
    const std::string at = "remote worker " + where_ + ": ";
    auto worker = connect();
    if (!worker) return Status::unavailable(at + worker.status().message());
    worker_ = std::move(worker.value());
    relay_ = system().spawn(relay, worker_);
    // The worker proves the secret first; nothing of ours is sent before it has.
    auto client_nonce = secure_random_hex(32);
    if (!client_nonce) return Status::unavailable(at + client_nonce.status().message());
    std::string worker_nonce, worker_proof;
    auto failed = ask(
        options_.connect_timeout_s,
        [&worker_nonce, &worker_proof](std::string& nonce, std::string& proof) {
          worker_nonce = std::move(nonce);
          worker_proof = std::move(proof);
        },
        hello_atom_v, client_nonce.value());
    if (failed) return Status::unavailable(at + "hello: " + failed->why);
    const std::string expected =
        remote_worker_proof(options_.secret, client_nonce.value(), worker_nonce);
    if (!is_remote_nonce(worker_nonce) || !constant_time_equal(expected, worker_proof)) {
      return Status::invalid_argument(
          at +
          "authentication failed: the worker did not prove that it holds the shared secret "
          "(another secret, or not a KernelArc worker)");
    }
    std::string token;
    failed = ask(
        options_.connect_timeout_s, [&token](std::string& t) { token = std::move(t); },
        login_atom_v, worker_nonce,
        remote_client_proof(options_.secret, worker_nonce, client_nonce.value()));
    if (failed) {
      // A refused proof is a credential to fix, not a fault that passes.
      const bool refused = failed->why.find("authentication") != std::string::npos;
      return refused ? Status::invalid_argument(at + "login: " + failed->why)
                     : Status::unavailable(at + "login: " + failed->why);
    }
    token_ = std::move(token);
    auto text = attach_json(problem_);
    if (!text) return Status::invalid_argument(at + text.status().message());
    std::string identity_text;
    failed = ask(
        options_.attach_timeout_s,
        [&identity_text](std::string& reply) { identity_text = std::move(reply); }, attach_atom_v,
        token_, text.value());
    if (failed) return Status::unavailable(at + "attach: " + failed->why);
    auto identity = parse_identity(identity_text);
    if (!identity) return Status::unavailable(at + identity.status().message());
    std::lock_guard<std::mutex> lock(state_mu_);
    identity_ = std::move(identity.value());
    return Status::ok();
  }

  const problem::Problem problem_;
  const RemoteEvaluatorOptions options_;
  const std::string where_;  // "host:port"
  std::shared_ptr<ClientRuntime> runtime_;

  std::mutex call_mu_;  // one call at a time; guards the connection below
  caf::actor worker_;
  caf::actor relay_;
  std::string token_;

  mutable std::mutex state_mu_;  // what other threads may read while a call runs
  Status availability_ = Status::unavailable("not connected");
  RemoteIdentity identity_;
};

}  // namespace

Result<std::unique_ptr<Evaluator>> make_remote_evaluator(const problem::Problem& problem,
                                                         RemoteEvaluatorOptions options) {
  auto evaluator = std::make_unique<RemoteEvaluator>(problem, std::move(options));
  if (Status s = evaluator->open(); !s) return s;
  return std::unique_ptr<Evaluator>(std::move(evaluator));
}

}  // namespace arc::eval
