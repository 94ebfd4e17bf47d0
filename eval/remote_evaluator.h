#pragma once
// The client side of remote evaluation (DESIGN.md §9): an Evaluator whose compile, peaks and
// evaluate run on an `arc-eval --serve` worker on another host (eval/remote_worker.h), spoken to
// over CAF's network layer (caf::io; the protocol: eval/remote_protocol.h).
//
// Connecting authenticates both ways over the shared secret (eval/worker_secret.h): a worker
// that cannot prove it holds the secret is refused before anything is sent to it, so no fake
// worker can inject an evaluation; then the problem's files are attached.
//
// A worker that disconnects, is killed or stops answering makes availability() an error naming
// "host:port" and the reason. The call that noticed returns at once (a killed worker's
// connection drop is seen within moments, not at the call's timeout) with a result made up
// here that is not the candidate's: compile not ok, or every workload NOT_RUN with the reason;
// the guard discards it and dispatches the work again. reconnect() connects, authenticates and
// attaches again. Calls on one RemoteEvaluator are serialized; several RemoteEvaluators may
// be used from different threads at once. They share one actor system of their own (with the
// io middleman), apart from any other in the process, which lives while one of them does.
#include <memory>
#include <string>

#include "base/status.h"
#include "eval/evaluator.h"
#include "eval/remote_protocol.h"
#include "problem/problem.h"

namespace arc::eval {

struct RemoteEvaluatorOptions {
  RemoteEndpoint endpoint;
  std::string secret;             // the shared secret (read_worker_secret())
  double connect_timeout_s = 5;   // connecting, and each step of the handshake
  double attach_timeout_s = 300;  // the worker writes, loads and hashes the problem
  double compile_timeout_s = 900;
  double peaks_timeout_s = 600;
  // evaluate() waits (settings.timeout_s + 30) x (workloads + 1) + 120 s (the worker's own
  // watchdog fires first, per workload).
};

// Connects to the worker, authenticates and attaches `problem` (problem.files relative to
// problem.dir, the bytes its hash covers). Fails with a Status naming the endpoint and what
// went wrong: kInvalidArgument for what waiting will not mend ("authentication failed: ..." for
// a worker or a secret that does not prove the secret, a problem it cannot take), kUnavailable
// for a worker that cannot be reached or answered nothing.
Result<std::unique_ptr<Evaluator>> make_remote_evaluator(const problem::Problem& problem,
                                                         RemoteEvaluatorOptions options);

}  // namespace arc::eval
