#pragma once
// The parent side of the worker protocol (eval/worker.h), shared by the host and CUDA
// evaluators: starts `arc-eval --worker ...`, keeps it across candidates, sends a request,
// collects the streamed results, and when the worker crashes, hangs past the candidate's
// timeout, talks nonsense or exits, turns that into CRASH, TIMEOUT or OUT_OF_MEMORY for the
// workload it was running (the rest NOT_RUN) and replaces it before the next request.
// Not thread-safe: the evaluator serializes calls (one request at a time per device).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "eval/sandbox.h"
#include "problem/problem.h"

namespace arc::eval {

struct WorkerClientOptions {
  std::filesystem::path worker_path;
  std::vector<std::string> extra_args;  // after --worker --in 3 --out 4 --memory-mb N
  double start_timeout_s = 10;          // until the worker says "ready"
  std::string method = "steady_clock";  // the method of results made up here (crashes)
  // Where the worker runs: the sandbox (disabled: as it is) and its profile, to which the
  // worker binary's directories (program_paths) are added.
  Sandbox sandbox = Sandbox::disabled("not requested");
  SandboxProfile profile;
};

class WorkerProcess;

class WorkerClient {
 public:
  explicit WorkerClient(WorkerClientOptions options);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // A live worker with this memory limit (0: none), started or restarted if needed. A worker
  // that died between requests is replaced (and counted) before anyone is blamed.
  Status ensure(uint64_t memory_limit_mb);
  bool running() const;
  uint64_t memory_limit_mb() const;  // of the running worker
  // The running worker's "ready" message.
  const nlohmann::json& ready() const;
  // Kills the worker and counts a restart.
  void lose();
  uint32_t restarts() const { return restarts_.load(); }

  // One request, one reply (e.g. peaks) within the timeout. On failure the worker is lost.
  Result<nlohmann::json> call(const nlohmann::json& request, const std::string& reply_op,
                              double timeout_s);

  // An evaluate request: fills out->workloads (one per name, in order) and adds to
  // out->worker_restarts. A worker lost in a way the candidate cannot have caused (killed by
  // SIGKILL, SIGTERM, SIGINT, SIGHUP or SIGQUIT without a fatal-signal report, or found stopped
  // when the timeout fired: someone outside did it) is an infrastructure fault: the request runs
  // once more on a fresh worker, and only that second answer counts (a "retried" detail names
  // the first loss on its first workload).
  void evaluate(const nlohmann::json& request, const std::vector<std::string>& workloads,
                const EvalSettings& settings, fb::CandidateEvaluatedT* out);

 private:
  // One attempt; true when the worker was lost to an infrastructure fault (above), with `why`.
  bool evaluate_once(const nlohmann::json& request, const std::vector<std::string>& workloads,
                     const EvalSettings& settings, fb::CandidateEvaluatedT* out, std::string* why);
  // Fills `out` for a lost worker; true when the loss was an infrastructure fault.
  bool worker_lost(fb::CandidateEvaluatedT* out,
                   std::vector<std::unique_ptr<fb::WorkloadEvaluationT>>& done,
                   const std::vector<std::string>& workloads, int current, const std::string& phase,
                   const std::optional<nlohmann::json>& fatal, const Status& why,
                   const EvalSettings& settings);

  WorkerClientOptions options_;
  std::unique_ptr<WorkerProcess> worker_;
  std::atomic<uint32_t> restarts_{0};
};

// The worker binary: $ARC_EVAL, else arc-eval next to the running executable
// (/proc/self/exe), else ../tools/arc-eval and ../bin/arc-eval from there.
std::filesystem::path default_worker_path();

// A candidate's distinct variants: the base, then each workload's in problem order, then gates
// naming no workload (they still must build).
std::vector<problem::Variant> distinct_variants(const problem::Candidate& c,
                                                const std::vector<problem::Workload>& workloads);

// The settings every "evaluate" request carries (eval/worker.h), host or CUDA: op, input seed,
// rounds, warm-up, repetitions, buffer sets, flush, tolerance and the measured peaks (0: none).
// Backends add their own fields (workloads; the CUDA backend's "timing").
nlohmann::json evaluate_request_settings(const EvalRequest& req, const problem::Tolerance& tol,
                                         double peak_bandwidth, double peak_flops);

// The compile result of a candidate whose compilation threw: not ok, the error on its base.
fb::CompileFinishedT compile_failure(const problem::Candidate& c, const std::string& hash,
                                     const std::string& error);

// A result made up by the parent: name, status, error, and the method.
std::unique_ptr<fb::WorkloadEvaluationT> make_workload(const std::string& name,
                                                       fb::WorkloadStatus status, std::string error,
                                                       const std::string& method = "steady_clock");

}  // namespace arc::eval
