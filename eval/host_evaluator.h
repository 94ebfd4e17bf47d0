#pragma once
// The host backend: compiles a candidate's variants with g++ (eval/host_compiler.h) and checks
// and times them on this CPU inside an isolated worker process (arc-eval --worker,
// eval/worker.h), spoken to over pipes (eval/protocol.h). The worker is kept across candidates;
// when it crashes, hangs past the candidate's timeout, sends garbage or exits, the workload it
// was running gets CRASH, TIMEOUT or OUT_OF_MEMORY with the reason, the rest NOT_RUN, and a
// fresh worker serves the next request. Nothing here throws or lets a candidate crash the
// calling process.
//
// worker_restarts in a CandidateEvaluated counts the workers that evaluation lost (crash,
// hang, or a worker that declared itself tainted, e.g. after a candidate leaked memory up to
// the limit); each is replaced before the next request. Restarts to apply a different
// memory limit are not counted. worker_restarts() is the total over the evaluator's life.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "eval/evaluator.h"
#include "eval/sandbox.h"
#include "problem/problem.h"

namespace arc::eval {

struct HostEvaluatorOptions {
  // Compile cache. Empty: $ARC_CACHE, else $XDG_CACHE_HOME/kernelarc, else ~/.cache/kernelarc,
  // else /tmp/kernelarc-cache; objects go to its "host" folder.
  std::filesystem::path cache_dir;
  // The worker binary. Empty: $ARC_EVAL, else arc-eval next to the running executable
  // (/proc/self/exe), else ../tools/arc-eval and ../bin/arc-eval from there.
  std::filesystem::path worker_path;
  unsigned compile_jobs = 0;       // compilers at once; 0: hardware_concurrency
  double compile_timeout_s = 120;  // per compiler run
  std::string compiler = "g++";
  std::filesystem::path include_root;  // holds eval/host_abi.h; empty: arc_home() (base/arc_home.h)
  double worker_start_timeout_s = 10;  // until the worker says "ready"
  double peaks_timeout_s = 60;         // the peaks measurement
  uint64_t peaks_memory_limit_mb = 4096;  // the worker's limit when peaks() starts it
  // The compiler and the worker run in it (eval/sandbox.h); the worker sees the cache
  // read-only and nothing else of the file system but the system's libraries.
  Sandbox sandbox = Sandbox::disabled("not requested");
};

class HostEvaluator final : public Evaluator {
 public:
  explicit HostEvaluator(const problem::Problem& problem, HostEvaluatorOptions options = {});
  ~HostEvaluator() override;
  HostEvaluator(const HostEvaluator&) = delete;
  HostEvaluator& operator=(const HostEvaluator&) = delete;

  std::string name() const override { return "host"; }
  // "host: <cpu model>, <n> cores, <compiler version>".
  std::string device() const override;
  // Measured once by the worker, then cached.
  Result<fb::PeaksMeasuredT> peaks() override;
  // variants: the candidate's distinct variants (base, then gates in workload order), each
  // with object_ref = its cache key.
  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override;
  // Every workload COMPILE_ERROR without a worker call when a variant failed to compile.
  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override;
  fb::CompiledVariantT compile_reference() override;

  uint32_t worker_restarts() const;
  const std::filesystem::path& worker_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc::eval
