#pragma once
// The CUDA backend: compiles a candidate's variants with NVRTC for the device's architecture
// (cuda/nvrtc.h; a library family needs no compilation) and checks and times them on the first
// GPU inside an isolated worker process (`arc-eval --worker --backend cuda`,
// eval/cuda_worker.h), through the same protocol and crash handling as the host backend
// (eval/worker_client.h): an illegal address, a trap, a hang or an out-of-memory costs that
// worker, REJECTs the candidate with the reason, and a fresh worker takes the next one.
//
// Peaks (copy bandwidth; a cuBLASLt GEMM per dtype) are measured by the worker once per
// device and driver and cached in <cache>/peaks-<uuid>-<driver>.json; PeaksMeasured records
// them (and whether they came from the cache). The flops peak used for the SOL bound is the
// GEMM peak of the problem's compute_dtype.
//
// Without a driver or a device, compile() still works (CI compiles every family); evaluate()
// fails every workload with CRASH "no CUDA device: ...", and peaks() says so.
#include <filesystem>
#include <memory>
#include <string>

#include "eval/evaluator.h"
#include "eval/sandbox.h"
#include "problem/problem.h"

namespace arc::eval {

struct CudaEvaluatorOptions {
  // Compile cache root (as the host backend's); cubins go to its "cuda" folder.
  std::filesystem::path cache_dir;
  std::filesystem::path worker_path;   // as HostEvaluatorOptions::worker_path
  unsigned compile_jobs = 0;           // NVRTC compiles at once; 0: hardware_concurrency
  std::string arch;                    // empty: the device's ("sm_90a" on the H200), else sm_90a
  int device = 0;                      // the CUDA device ordinal it measures on
  std::filesystem::path include_root;  // holds cuda/include/arc_cuda.h; empty: found
  double worker_start_timeout_s = 60;  // context creation + runtime kernels
  double peaks_timeout_s = 300;
  bool use_peaks_cache = true;
  // The worker runs in it (eval/sandbox.h) with the GPU's device nodes, the cache read-only and
  // its "cuda" folder writable (runtime kernels' cubins).
  Sandbox sandbox = Sandbox::disabled("not requested");
  // (The faster-than-SOL verdict is the guard's: [guard] sol_margin, actors/guard_core.h.)
};

class CudaEvaluator final : public Evaluator {
 public:
  explicit CudaEvaluator(const problem::Problem& problem, CudaEvaluatorOptions options = {});
  ~CudaEvaluator() override;
  CudaEvaluator(const CudaEvaluator&) = delete;
  CudaEvaluator& operator=(const CudaEvaluator&) = delete;

  std::string name() const override { return "cuda"; }
  // "cuda: NVIDIA H200 (sm_90, 132 SMs, ...), NVRTC 13.0, sm_90a" or "cuda: no CUDA device (...)".
  std::string device() const override;
  // device() without the GPU's UUID; device_key(): "gpu:<uuid> <pci bus id>".
  std::string device_model() const override;
  std::string device_key() const override;
  std::string worker() const override;  // "local:<ordinal>"
  Result<fb::PeaksMeasuredT> peaks() override;
  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override;
  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override;
  fb::CompiledVariantT compile_reference() override;

  uint32_t worker_restarts() const;
  // Whether a CUDA device is usable here (the driver loads and reports a device).
  static bool device_available(std::string* why = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc::eval
