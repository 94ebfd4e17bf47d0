#pragma once
// The evaluator protocol: what the guard asks of a backend (host, replay, cuda). A backend
// compiles a candidate, then checks and times it on one device. Results are the event payloads
// the guard logs, so everything an evaluation says enters the log as it was measured.
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "events/events_generated.h"
#include "problem/candidate.h"

namespace arc::eval {

// How a candidate is checked and timed. Defaults follow DESIGN.md §6.
struct EvalSettings {
  uint32_t rounds = 5;              // correctness rounds, each with fresh random inputs
  uint32_t warmup = 10;             // untimed runs before timing
  uint32_t repetitions = 50;        // timed runs, one sample each
  uint32_t buffer_sets = 3;         // input/output sets rotated so addresses change
  double timeout_s = 30.0;          // watchdog per candidate; the worker is killed past it
  uint64_t memory_limit_mb = 4096;  // address-space limit of the worker process
  bool flush_cache = true;          // evict caches before every timed repetition
  // How the CUDA evaluator times a repetition: "auto" (CUPTI activity spans where CUPTI works,
  // else CUDA events, with the reason recorded), "cuda_events", or "cupti" (a workload CUPTI
  // cannot time fails). The host evaluator always uses steady_clock.
  std::string timing = "auto";
};

struct EvalRequest {
  problem::Candidate candidate;
  std::string candidate_hash;
  uint64_t input_seed = 0;  // seeds the correctness inputs; taken from the log
  EvalSettings settings;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // "host", "replay", "cuda".
  virtual std::string name() const = 0;
  // Human-readable device description; timings are never compared across devices.
  virtual std::string device() const = 0;
  // Peak bandwidth and compute measured on the device (for SOL bounds).
  virtual Result<fb::PeaksMeasuredT> peaks() = 0;
  // Compiles every variant of a candidate. Thread-safe: the guard calls it from its pool.
  virtual fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) = 0;
  // Checks and times a compiled candidate on every workload. One at a time per device.
  virtual fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                           const fb::CompileFinishedT& compiled) = 0;
  // Compiles the problem's reference as evaluate() does (same compiler, options and cache);
  // `variant` is "reference", `error` the compiler's message when not ok. Backends that
  // compile nothing (replay) answer ok with options "nothing to compile".
  // Whether the evaluator can measure now. A remote worker (eval/remote_evaluator.h) that
  // disconnected, crashed or stopped answering makes it an error naming the worker: whatever the
  // call that noticed returned is then not the candidate's, and the guard dispatches that work
  // again on another worker (actors/guard_actor.cc). reconnect() tries to win the worker back
  // (connect, authenticate, attach the problem again) and answers availability() afterwards.
  virtual Status availability() const { return Status::ok(); }
  virtual Status reconnect() { return availability(); }
  // Where the evaluator measures, as CandidateEvaluated.worker records it: "local" (this
  // process's own worker), "local:N" (the local worker of device N), or a remote worker's
  // "host:port".
  virtual std::string worker() const { return "local"; }
  // The physical device it times on when two evaluators could share one ("gpu:<uuid>"); empty
  // when they cannot collide. The guard never admits a second worker on a device already served.
  virtual std::string device_key() const { return ""; }
  // The device's model: device() without what tells two devices of one model apart (a GPU's
  // UUID). A campaign compares timings only between evaluators of one model.
  virtual std::string device_model() const { return device(); }
  virtual fb::CompiledVariantT compile_reference() {
    fb::CompiledVariantT r;
    r.variant = "reference";
    r.ok = true;
    r.options = "nothing to compile";
    return r;
  }
};

}  // namespace arc::eval
