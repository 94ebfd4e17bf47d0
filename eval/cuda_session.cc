// The CUDA worker's session (eval/cuda_session.h) and its peaks.
#include "eval/cuda_session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "cuda/nvml.h"
#include "cuda/nvrtc.h"
#include "cuda/runtime_kernels.h"
#include "eval/measure.h"

namespace arc::eval::cuda_worker {
namespace {

using json = nlohmann::json;
using cuda::Buffer;

Result<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::not_found("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace
Status CudaSession::start() {
  auto d = cuda::driver();
  if (!d) return d.status();
  driver_ = *d;
  // CUPTI's activity kinds are enabled before the context exists, so its kernels are traced
  // from the start. A missing libcupti or a refusal only takes CUPTI timing away.
  if (auto t = cuda::ActivityTracer::instance()) {
    tracer_ = *t;
  } else {
    cupti_unavailable_ = t.status().message();
  }
  auto ctx = cuda::Context::open(ordinal_);
  if (!ctx) return ctx.status();
  ctx_ = std::move(*ctx);
  auto stream = cuda::Stream::create();
  if (!stream) return stream.status();
  stream_ = std::move(*stream);
  // The worker's own kernels.
  cuda::CompilerOptions co;
  co.cache_dir = cache_dir_;
  co.arch = info().arch();
  co.jobs = 1;
  cuda::Compiler compiler(co);
  cuda::Cubin cubin = compiler.compile(cuda::runtime_kernels_source(), "arc runtime kernels", {});
  if (!cubin.ok) return Status::internal("the runtime kernels failed to compile: " + cubin.error);
  auto image = read_file(cubin.path);
  if (!image) return image.status();
  auto m = cuda::Module::load(*image, "the runtime kernels");
  if (!m) return m.status();
  runtime_ = std::move(*m);
  for (auto [name, out] : {std::pair{"arc_fill", &fill_}, std::pair{"arc_compare", &compare_},
                           std::pair{"arc_digest", &digest_}, std::pair{"arc_copy", &copy_},
                           std::pair{"arc_flush", &flush_fn_}}) {
    auto f = runtime_->function(name);
    if (!f) return f.status();
    *out = *f;
  }
  auto counters = Buffer::allocate(256);
  if (!counters) return counters.status();
  counters_ = std::move(*counters);
  return Status::ok();
}

// A failed call: its status and whether it poisoned the context.
Failure CudaSession::fail(CUresult r, const std::string& what, const char* status_if_not_sticky) {
  Failure f;
  const bool sticky = cuda::is_sticky(r);
  f.status = sticky ? "CRASH" : status_if_not_sticky;
  f.error = what + ": " + cuda::describe(r);
  if (sticky) {
    tainted_ = true;
    f.error += " (the CUDA context is lost; the worker is replaced)";
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) f.status = "OUT_OF_MEMORY";
  return f;
}

unsigned CudaSession::grid_for(size_t n, unsigned threads) const {
  const size_t blocks = (n + threads - 1) / threads;
  const size_t cap = static_cast<size_t>(info().sm_count) * 16;
  return static_cast<unsigned>(std::max<size_t>(1, std::min(blocks, cap)));
}

CUresult CudaSession::launch(CUfunction f, unsigned grid, unsigned block, void** params) {
  return cu().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream_->get(), params, nullptr);
}

CUresult CudaSession::fill(CUdeviceptr dst, const TensorDesc& t, uint64_t seed) {
  if (t.elements <= 0) return CUDA_SUCCESS;
  long long n = t.elements;
  int dtype = t.dtype;
  int normal = t.init == "normal" ? 1 : 0;
  double low = t.low, high = t.high;
  unsigned long long s = seed;
  void* params[] = {&dst, &n, &dtype, &normal, &low, &high, &s};
  return launch(fill_, grid_for(static_cast<size_t>(n), 256), 256, params);
}

// Digest of a buffer (synchronizes).
CUresult CudaSession::digest(CUdeviceptr p, size_t bytes, uint64_t* out) {
  CUresult r = cu().cuMemsetD8Async(counters_.get(), 0, 8, stream_->get());
  if (r != CUDA_SUCCESS) return r;
  long long words = static_cast<long long>((bytes + 3) / 4);
  CUdeviceptr c = counters_.get();
  void* params[] = {&p, &words, &c};
  r = launch(digest_, grid_for(static_cast<size_t>(words), 256), 256, params);
  if (r != CUDA_SUCCESS) return r;
  r = cu().cuStreamSynchronize(stream_->get());
  if (r != CUDA_SUCCESS) return r;
  return cu().cuMemcpyDtoH(out, c, 8);
}

CUresult CudaSession::poison(CUdeviceptr p, int dtype, size_t elements) {
  if (elements == 0) return CUDA_SUCCESS;
  switch (dtype) {
    case cuda::kF32:
      return cu().cuMemsetD32Async(p, 0x7fc00000u, elements, stream_->get());
    case cuda::kBF16:
      return cu().cuMemsetD16Async(p, 0x7fc0, elements, stream_->get());
    case cuda::kF16:
      return cu().cuMemsetD16Async(p, 0x7e00, elements, stream_->get());
    case cuda::kFP8E4M3:
    case cuda::kFP8E5M2:
      return cu().cuMemsetD8Async(p, 0x7f, elements, stream_->get());
    default:
      return cu().cuMemsetD32Async(p, 0x7ff80000u, elements * 2, stream_->get());
  }
}

// The L2 flush: a read over twice the L2 (the buffer is written once, when allocated).
// Reads leave the L2 full of clean lines, so a timed kernel pays no write-back for data it
// never wrote; a memset flush left dirty lines whose write-backs cost a read-bound skinny
// GEMM about 3.5 us of 15 (docs/cuda-evaluator.md, "The L2 flush").
CUresult CudaSession::flush() {
  if (flush_.bytes() == 0) {
    auto b = Buffer::allocate(padded(2 * static_cast<size_t>(info().l2_bytes)));
    if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = cu().cuMemsetD32Async(b->get(), 0x9e3779b9u, b->bytes() / 4, stream_->get());
    if (r != CUDA_SUCCESS) return r;
    flush_ = std::move(*b);
  }
  CUdeviceptr p = flush_.get();
  long long words = static_cast<long long>(flush_.bytes() / 16);
  unsigned key = 0x5bd1e995u;  // never the sum: the kernel never stores
  CUdeviceptr sink = counters_.get() + 192;
  void* params[] = {&p, &words, &key, &sink};
  return launch(flush_fn_, 4 * static_cast<unsigned>(info().sm_count), 512, params);
}

Result<const cuda::Module*> CudaSession::module(const std::string& path, const std::string& what) {
  auto it = modules_.find(path);
  if (it != modules_.end()) return it->second.get();
  auto image = read_file(path);
  if (!image) return image.status();
  auto m = cuda::Module::load(*image, what);
  if (!m) return m.status();
  return modules_.emplace(path, std::move(*m)).first->second.get();
}

void CudaSession::release_modules(size_t bound) {
  // Not in module(): a request binds the reference and then the candidate, and clearing there
  // unloaded the reference's module under its live CUfunction (CUDA_ERROR_INVALID_HANDLE at
  // the reference's launch, every 257th cubin of a sweep).
  if (modules_.size() > bound) modules_.clear();
}

Result<std::vector<CUfunction>> CudaSession::functions(const std::string& path,
                                                       const std::string& what,
                                                       const std::vector<LaunchDesc>& launches) {
  auto m = module(path, what);
  if (!m) return m.status();
  std::vector<CUfunction> fns;
  for (const auto& l : launches) {
    auto f = (*m)->function(l.kernel, l.shared);
    if (!f) return f.status();
    fns.push_back(*f);
  }
  return fns;
}

Status CudaSession::ensure_lt() {
  if (lt_) return Status::ok();
  auto lt = cuda::Lt::open();
  if (!lt) return lt.status();
  lt_ = std::move(*lt);
  return Status::ok();
}

json CudaSession::peaks() {
  json details = json::array();
  auto detail = [&](const std::string& k, const std::string& v) {
    details.push_back({{"key", k}, {"value", v}});
  };
  double copy_bw = 0;
  std::string copy_cfg;
  {
    const size_t bytes = size_t{1} << 30;
    auto src = Buffer::allocate(bytes);
    auto dst = Buffer::allocate(bytes);
    if (!src || !dst) return {{"op", "error"}, {"error", "peaks: cannot allocate 2 x 1 GiB"}};
    cu().cuMemsetD32Async(src->get(), 0x3f800000u, bytes / 4, stream_->get());
    cu().cuMemsetD32Async(dst->get(), 0, bytes / 4, stream_->get());
    auto e0 = cuda::Event::create();
    auto e1 = cuda::Event::create();
    if (!e0 || !e1) return {{"op", "error"}, {"error", "peaks: cuEventCreate failed"}};
    CUdeviceptr s = src->get(), d = dst->get();
    long long n = static_cast<long long>(bytes / 16);
    void* params[] = {&s, &d, &n};
    // Warm-up: the SM clock idles low until work arrives (about 0.5 s of copies).
    for (int i = 0; i < 1000; ++i) {
      cu().cuLaunchKernel(copy_, 4 * static_cast<unsigned>(info().sm_count), 1, 1, 512, 1, 1, 0,
                          stream_->get(), params, nullptr);
    }
    cu().cuStreamSynchronize(stream_->get());
    for (int t = 0; t < 8; ++t) {
      (*e0)->record(stream_->get());
      cu().cuMemcpyDtoDAsync(d, s, bytes, stream_->get());
      (*e1)->record(stream_->get());
      if (cu().cuStreamSynchronize(stream_->get()) != CUDA_SUCCESS) break;
      auto ms = (*e1)->since(**e0);
      if (ms && *ms > 0 && t > 0) {
        const double bw = 2.0 * static_cast<double>(bytes) / (*ms * 1e-3);
        if (bw > copy_bw) {
          copy_bw = bw;
          copy_cfg = "cuMemcpyDtoDAsync";
        }
      }
    }
    for (unsigned per_sm : {2u, 4u, 8u, 16u}) {
      for (unsigned threads : {256u, 512u, 1024u}) {
        const unsigned grid = per_sm * static_cast<unsigned>(info().sm_count);
        for (int t = 0; t < 6; ++t) {
          (*e0)->record(stream_->get());
          cu().cuLaunchKernel(copy_, grid, 1, 1, threads, 1, 1, 0, stream_->get(), params, nullptr);
          (*e1)->record(stream_->get());
          if (cu().cuStreamSynchronize(stream_->get()) != CUDA_SUCCESS) {
            tainted_ = true;
            return {{"op", "error"}, {"error", "peaks: the copy kernel failed"}};
          }
          auto ms = (*e1)->since(**e0);
          if (ms && *ms > 0 && t > 0) {
            const double bw = 2.0 * static_cast<double>(bytes) / (*ms * 1e-3);
            if (bw > copy_bw) {
              copy_bw = bw;
              copy_cfg =
                  std::to_string(per_sm) + " blocks/SM x " + std::to_string(threads) + " threads";
            }
          }
        }
      }
    }
  }
  detail("copy_bytes_per_s", format_number(copy_bw, 6));
  detail("copy_config", copy_cfg);
  json flops = json::object();
  Status lt = ensure_lt();
  if (lt) {
    detail("library", lt_->version());
    for (const char* dtype : {"bf16", "f16", "f32", "fp8_e4m3"}) {
      const bool f32 = std::string(dtype) == "f32";
      const bool fp8 = std::string(dtype) == "fp8_e4m3";
      double best = 0;
      std::string best_plan;
      // Several sizes: short GEMMs run at the boost clock, long ones settle under the power
      // cap; the peak is the best either reaches.
      for (int64_t size :
           f32 ? std::vector<int64_t>{2048, 4096} : std::vector<int64_t>{4096, 6144, 8192}) {
        // fp8: e4m3 x e4m3 -> bf16 without scales (a factor of 1), as a problem's
        // cuBLASLt family runs it.
        cuda::GemmProblem g{size, size, size, dtype, false, fp8 ? "bf16" : ""};
        auto plan = lt_->plan(g, cuda::LtConfig{}, size_t{64} << 20);
        if (!plan) {
          detail(std::string("gemm_") + dtype + "_error", plan.status().message());
          continue;
        }
        TensorDesc t;
        t.dtype = dtype_code(dtype);
        t.elements = size * size;
        if (t.dtype < 0) {
          detail(std::string("gemm_") + dtype + "_error", "the worker cannot draw this dtype");
          break;
        }
        // A and B in the dtype; D in it too, or bf16 after fp8 operands.
        auto a = Buffer::allocate(t.bytes()), b = Buffer::allocate(t.bytes());
        auto d = Buffer::allocate(static_cast<size_t>(size * size) * (f32 ? 4 : 2));
        auto ws = Buffer::allocate(std::max<size_t>((*plan)->workspace_bytes(), 256));
        if (!a || !b || !d || !ws) continue;
        fill(a->get(), t, 1);
        fill(b->get(), t, 2);
        auto e0 = cuda::Event::create();
        auto e1 = cuda::Event::create();
        if (!e0 || !e1) continue;
        for (int i = 0; i < 20; ++i) {  // warm-up: clocks up, plan and code paths loaded
          if (!lt_->run(**plan, a->ptr(), b->ptr(), nullptr, d->ptr(), ws->ptr(), stream_->get()))
            break;
        }
        cu().cuStreamSynchronize(stream_->get());
        for (int trial = 0; trial < 20; ++trial) {
          (*e0)->record(stream_->get());
          Status st =
              lt_->run(**plan, a->ptr(), b->ptr(), nullptr, d->ptr(), ws->ptr(), stream_->get());
          (*e1)->record(stream_->get());
          if (!st || cu().cuStreamSynchronize(stream_->get()) != CUDA_SUCCESS) break;
          auto ms = (*e1)->since(**e0);
          const double rate =
              ms && *ms > 0 ? 2.0 * std::pow(static_cast<double>(size), 3) / (*ms * 1e-3) : 0;
          if (rate > best) {
            best = rate;
            best_plan = (*plan)->description() + ", " + std::to_string(size) + "^3";
          }
        }
      }
      flops[dtype] = best;
      detail(std::string("gemm_") + dtype + "_flops_per_s", format_number(best, 6));
      detail(std::string("gemm_") + dtype + "_plan", best_plan);
    }
  } else {
    detail("library_error", lt.message());
  }
  for (const auto& [k, v] : cuda::read_clocks(info().pci_bus_id)) detail(k, v);
  return {{"op", "peaks"},
          {"bandwidth_bytes_per_s", copy_bw},
          {"flops", flops},
          {"device", info().describe()},
          {"method",
           "measured on the device after a warm-up at full clocks: copy bandwidth = the best "
           "timed run (CUDA events) of cuMemcpyDtoDAsync and of a 16-byte copy kernel (2-16 "
           "blocks per SM, 256-1024 threads) over 1 GiB, bytes read + written; GEMM = the best "
           "of 20 timed cuBLASLt matmuls (after 20 untimed) with the default heuristic at each "
           "of 4096^3, 6144^3 and 8192^3 (bf16, f16; fp8_e4m3 operands with a bf16 output) or "
           "2048^3 and 4096^3 (f32), fp32 accumulation, 2 m n k flops"},
          {"details", details}};
}

void CudaSession::describe(json* ready) const {
  (*ready)["memory_limit_mb"] = 0;
  (*ready)["backend"] = "cuda";
  if (!started()) return;
  (*ready)["device"] = info().describe();
  (*ready)["uuid"] = info().uuid;
  (*ready)["arch"] = info().arch();
  (*ready)["pci_bus_id"] = info().pci_bus_id;
  (*ready)["driver_version"] = info().driver_version;
  (*ready)["cupti"] =
      tracer_ != nullptr ? tracer_->library() : "unavailable: " + cupti_unavailable_;
}

CUresult CudaSession::compare(CUdeviceptr out, int dtype, CUdeviceptr ref, size_t n, double atol,
                              double rtol, uint64_t* k) {
  uint64_t init[cuda::kCompareCounters] = {};
  init[cuda::kFirstBad] = ~0ULL;
  init[cuda::kFirstNaN] = ~0ULL;
  CUresult r = cu().cuMemcpyHtoD(counters_.get(), init, sizeof init);
  long long nn = static_cast<long long>(n);
  CUdeviceptr cp = counters_.get();
  void* params[] = {&out, &dtype, &ref, &nn, &atol, &rtol, &cp};
  if (r == CUDA_SUCCESS) r = launch(compare_, grid_for(n, 256), 256, params);
  if (r == CUDA_SUCCESS) r = cu().cuStreamSynchronize(stream());
  if (r == CUDA_SUCCESS) r = cu().cuMemcpyDtoH(k, counters_.get(), sizeof init);
  return r;
}

double CudaSession::element(CUdeviceptr p, int dtype, uint64_t i) const {
  double v = std::numeric_limits<double>::quiet_NaN();
  unsigned char raw[8] = {};
  cu().cuMemcpyDtoH(raw, p + i * code_bytes(dtype), code_bytes(dtype));
  if (dtype == cuda::kF32) {
    float f;
    std::memcpy(&f, raw, 4);
    v = f;
  } else if (dtype == cuda::kBF16) {
    uint32_t u = (uint32_t{raw[1]} << 24) | (uint32_t{raw[0]} << 16);
    float f;
    std::memcpy(&f, &u, 4);
    v = f;
  } else if (dtype == cuda::kF16) {
    const uint16_t h = static_cast<uint16_t>(raw[0] | (raw[1] << 8));
    const int e = (h >> 10) & 31, m = h & 1023;
    const double sign = (h & 0x8000) ? -1 : 1;
    if (e == 31)
      v = m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
    else if (e == 0)
      v = sign * std::ldexp(m, -24);
    else
      v = sign * std::ldexp(1024 + m, e - 25);
  } else if (dtype == cuda::kFP8E4M3) {
    const int e = (raw[0] >> 3) & 15, m = raw[0] & 7;
    const double sign = (raw[0] & 0x80) ? -1 : 1;
    if ((raw[0] & 0x7f) == 0x7f)
      v = std::numeric_limits<double>::quiet_NaN();
    else
      v = sign * (e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10));
  } else if (dtype == cuda::kFP8E5M2) {
    const int e = (raw[0] >> 2) & 31, m = raw[0] & 3;
    const double sign = (raw[0] & 0x80) ? -1 : 1;
    if (e == 31)
      v = m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
    else
      v = sign * (e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17));
  } else {
    std::memcpy(&v, raw, 8);
  }
  return v;
}

Result<const cuda::LtPlan*> CudaSession::plan(const GemmDesc& g) {
  if (Status lt = ensure_lt(); !lt) return lt;
  const std::string key = std::to_string(g.problem.m) + "x" + std::to_string(g.problem.n) + "x" +
                          std::to_string(g.problem.k) + g.problem.dtype + ">" +
                          g.problem.out_dtype + (g.problem.accumulate ? "+c" : "") + "/" +
                          g.variant;
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    auto p = lt_->plan(g.problem, g.config, size_t{64} << 20);
    if (!p) return p.status();
    it = plans_.emplace(key, std::move(*p)).first;
  }
  return it->second.get();
}

}  // namespace arc::eval::cuda_worker
