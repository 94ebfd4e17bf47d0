#pragma once
// What the CUDA worker keeps for its whole life (eval/cuda_worker.h): the driver, the primary
// context and a stream, the worker's own kernels (fill, compare, digest, copy, flush;
// cuda/runtime_kernels.h), loaded modules and cuBLASLt plans, and the CUPTI tracer. Every
// operation runs on the stream; a failed call becomes a Failure that names it, and a sticky
// error taints the session (the worker exits after its reply).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cuda/cublaslt.h"
#include "cuda/cupti.h"
#include "cuda/driver.h"
#include "eval/cuda_request.h"
#include "eval/device.h"

namespace arc::eval::cuda_worker {

class CudaSession {
 public:
  // `ordinal`: the CUDA device it opens (as the driver numbers them).
  explicit CudaSession(std::filesystem::path cache_dir, int ordinal = 0)
      : cache_dir_(std::move(cache_dir)), ordinal_(ordinal) {}

  // Loads the driver and CUPTI (before the context), opens the context, compiles and loads the
  // runtime kernels.
  Status start();
  bool started() const { return ctx_ != nullptr; }
  // The "ready" fields (device, uuid, arch, pci_bus_id, driver_version, cupti).
  void describe(nlohmann::json* ready) const;
  // The "peaks" reply: copy bandwidth and a cuBLASLt GEMM per dtype.
  nlohmann::json peaks();

  const cuda::Driver& cu() const { return *driver_; }
  CUstream stream() const { return stream_->get(); }
  const cuda::DeviceInfo& info() const { return ctx_->info(); }

  // A failed call: CRASH when sticky (and the session is tainted), OUT_OF_MEMORY for
  // CUDA_ERROR_OUT_OF_MEMORY, else `status_if_not_sticky`.
  Failure fail(CUresult r, const std::string& what, const char* status_if_not_sticky);
  bool tainted() const { return tainted_; }

  unsigned grid_for(size_t n, unsigned threads) const;
  CUresult launch(CUfunction f, unsigned grid, unsigned block, void** params);
  // Draws a tensor's values from `seed` (uniform or normal, rounded to its dtype).
  CUresult fill(CUdeviceptr dst, const TensorDesc& t, uint64_t seed);
  // An order-independent digest of a buffer (synchronizes).
  CUresult digest(CUdeviceptr p, size_t bytes, uint64_t* out);
  // NaN in the dtype.
  CUresult poison(CUdeviceptr p, int dtype, size_t elements);
  // The L2 flush: a read over twice the L2.
  CUresult flush();
  // arc_compare of n elements of `out` (dtype) with double `ref` into `counters`
  // (cuda::kCompareCounters; synchronizes).
  CUresult compare(CUdeviceptr out, int dtype, CUdeviceptr ref, size_t n, double atol, double rtol,
                   uint64_t* counters);
  // One element, as a double, for messages.
  double element(CUdeviceptr p, int dtype, uint64_t i) const;

  // The kernels of a cubin, its module loaded once and kept: the functions stay valid until
  // release_modules(), which only a new request may call.
  Result<std::vector<CUfunction>> functions(const std::string& path, const std::string& what,
                                            const std::vector<LaunchDesc>& launches);
  // Unloads every module once more than `bound` are loaded (long campaigns). Call it only
  // before a request binds anything: it invalidates every CUfunction handed out.
  void release_modules(size_t bound);
  Status ensure_lt();
  cuda::Lt* lt() const { return lt_.get(); }
  // The cuBLASLt plan of a library workload, cached by problem and variant.
  Result<const cuda::LtPlan*> plan(const GemmDesc& g);

  // CUPTI: null when unusable in this process (unavailable_reason() says why).
  cuda::ActivityTracer* tracer() const { return tracer_; }
  const std::string& cupti_unavailable() const { return cupti_unavailable_; }
  std::string cupti_enable_error;  // why the tracer's activity kinds are off ("" when on)
  // CUPTI external ids, never reused within the worker: the first of n new ones.
  uint64_t reserve_external_ids(uint64_t n) {
    const uint64_t first = next_external_id_;
    next_external_id_ += n;
    return first;
  }

 private:
  Result<const cuda::Module*> module(const std::string& path, const std::string& what);

  std::filesystem::path cache_dir_;
  int ordinal_ = 0;
  const cuda::Driver* driver_ = nullptr;
  std::unique_ptr<cuda::Context> ctx_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::Module> runtime_;
  CUfunction fill_ = nullptr, compare_ = nullptr, digest_ = nullptr, copy_ = nullptr,
             flush_fn_ = nullptr;
  cuda::Buffer counters_;
  cuda::Buffer flush_;
  std::map<std::string, std::unique_ptr<cuda::Module>> modules_;
  std::unique_ptr<cuda::Lt> lt_;
  std::map<std::string, std::unique_ptr<cuda::LtPlan>> plans_;
  cuda::ActivityTracer* tracer_ = nullptr;
  std::string cupti_unavailable_;
  uint64_t next_external_id_ = 1;
  bool tainted_ = false;
};

}  // namespace arc::eval::cuda_worker
