// The GPU side of the arc-eval worker (`arc-eval --worker --backend cuda`): the protocol of
// eval/worker.h with CUDA workloads. The request and what is measured are documented in
// eval/cuda_worker.h.
#include "eval/cuda_worker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cuda/cublaslt.h"
#include "cuda/cupti.h"
#include "cuda/cupti_spans.h"
#include "cuda/driver.h"
#include "cuda/nvml.h"
#include "cuda/nvrtc.h"
#include "cuda/runtime_kernels.h"
#include "cuda/include/arc_cuda.h"
#include "eval/protocol.h"
#include "eval/worker.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;
using cuda::Buffer;

std::string fmt_g(double v, int digits = 3) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}


int dtype_code(const std::string& d) {
  if (d == "f32") return cuda::kF32;
  if (d == "bf16") return cuda::kBF16;
  if (d == "f16") return cuda::kF16;
  if (d == "f64") return cuda::kF64;
  return -1;
}

int code_bytes(int code) { return code == cuda::kF32 ? 4 : code == cuda::kF64 ? 8 : 2; }

// A failure of one workload: the status it gets, and whether the context is gone.
struct Failure {
  std::string status;  // WorkloadStatus name
  std::string error;
  bool sticky = false;
};

// The outcome of a driver call inside a workload.
struct Call {
  CUresult r = CUDA_SUCCESS;
  explicit operator bool() const { return r == CUDA_SUCCESS; }
};

struct TensorDesc {
  std::string name;
  int dtype = 0;
  int64_t elements = 0;
  std::string init = "uniform";
  double low = -1, high = 1;
  int alias = -1;  // outputs: the input whose buffer this output is
  size_t bytes() const { return static_cast<size_t>(std::max<int64_t>(elements, 0)) * code_bytes(dtype); }
};

struct LaunchDesc {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared = 0;
};

struct GemmDesc {
  int a = -1, b = -1, c = -1, d = -1;  // input, input, input (-1: none), output indices
  cuda::GemmProblem problem;
  cuda::LtConfig config;
  std::string variant;
};

struct WorkloadJob {
  std::string name;
  uint64_t index = 0;
  std::vector<int64_t> axes;
  double flops = 0, bytes = 0;
  std::vector<TensorDesc> inputs, outputs;
  std::string module;  // cubin of the candidate's variant (kernels) or "" (library)
  std::vector<LaunchDesc> launches;
  uint64_t workspace = 0;
  bool library = false;
  GemmDesc gemm;
  std::string reference_module;
  std::vector<LaunchDesc> reference_launches;
};

struct Request : EvaluateSettings {
  double sol_margin = 0.5;
  std::vector<WorkloadJob> workloads;
};

LaunchDesc parse_launch(const json& l) {
  LaunchDesc d;
  d.kernel = l.at("kernel").get<std::string>();
  auto g = l.at("grid").get<std::vector<int64_t>>();
  auto b = l.at("block").get<std::vector<int64_t>>();
  for (size_t i = 0; i < 3 && i < g.size(); ++i) d.grid[i] = static_cast<unsigned>(g[i]);
  for (size_t i = 0; i < 3 && i < b.size(); ++i) d.block[i] = static_cast<unsigned>(b[i]);
  d.shared = static_cast<unsigned>(l.value("shared", int64_t{0}));
  return d;
}

TensorDesc parse_tensor(const json& t) {
  TensorDesc d;
  d.name = t.at("name").get<std::string>();
  const std::string dtype = t.at("dtype").get<std::string>();
  d.dtype = dtype_code(dtype);
  if (d.dtype < 0) {
    throw json::other_error::create(501, "tensor " + d.name + ": dtype \"" + dtype +
                                             "\" is not supported by the GPU worker (f32, bf16, "
                                             "f16, f64)", &t);
  }
  d.elements = t.at("elements").get<int64_t>();
  d.init = t.value("init", d.init);
  d.low = t.value("low", d.low);
  d.high = t.value("high", d.high);
  d.alias = t.value("alias", -1);
  return d;
}

Request parse_request(const json& j) {
  Request r;
  static_cast<EvaluateSettings&>(r) = parse_evaluate_settings(j);
  r.sol_margin = j.value("sol_margin", r.sol_margin);
  for (const json& w : j.at("workloads")) {
    WorkloadJob job;
    job.name = w.at("name").get<std::string>();
    job.index = w.at("index").get<uint64_t>();
    job.axes = w.at("axes").get<std::vector<int64_t>>();
    job.flops = w.value("flops", 0.0);
    job.bytes = w.value("bytes", 0.0);
    for (const json& t : w.at("inputs")) job.inputs.push_back(parse_tensor(t));
    for (const json& t : w.at("outputs")) job.outputs.push_back(parse_tensor(t));
    job.module = w.value("module", "");
    for (const json& l : w.value("launches", json::array())) job.launches.push_back(parse_launch(l));
    job.workspace = w.value("workspace", uint64_t{0});
    job.reference_module = w.at("reference_module").get<std::string>();
    for (const json& l : w.at("reference_launches")) job.reference_launches.push_back(parse_launch(l));
    if (w.contains("gemm") && !w.at("gemm").is_null()) {
      const json& g = w.at("gemm");
      job.library = true;
      job.gemm.a = g.at("a").get<int>();
      job.gemm.b = g.at("b").get<int>();
      job.gemm.c = g.value("c", -1);
      job.gemm.d = g.at("d").get<int>();
      job.gemm.problem.m = g.at("m").get<int64_t>();
      job.gemm.problem.n = g.at("n").get<int64_t>();
      job.gemm.problem.k = g.at("k").get<int64_t>();
      job.gemm.problem.dtype = g.value("dtype", "bf16");
      job.gemm.problem.accumulate = job.gemm.c >= 0;
      job.gemm.variant = g.value("variant", "");
      const json& c = g.value("config", json::object());
      auto knob = [&](const char* k, const std::string& fallback) {
        return c.contains(k) ? c.at(k).get<std::string>() : fallback;
      };
      job.gemm.config.heur = std::stoi(knob("HEUR", "0"));
      job.gemm.config.tile = knob("TILE", "auto");
      job.gemm.config.stages = knob("STAGES", "auto");
      const std::string splitk = knob("SPLITK", "auto");
      job.gemm.config.splitk = splitk == "auto" ? 0 : std::stoi(splitk);
      job.gemm.config.reduction = knob("REDUCTION", "auto");
      const std::string swz = knob("SWIZZLE", "auto");
      job.gemm.config.swizzle = swz == "auto" ? -1 : std::stoi(swz);
    }
    r.workloads.push_back(std::move(job));
  }
  return r;
}

size_t padded(size_t bytes) { return std::max<size_t>(256, (bytes + 255) / 256 * 256); }

// -------------------------------------------------------------------------------------------
// Everything a workload needs on the device, for one set of inputs.
struct BufferSet {
  std::vector<Buffer> in;        // what the candidate reads (an aliased input: restored copy)
  std::vector<Buffer> pristine;  // aliased inputs only: the values drawn, restored before runs
  std::vector<Buffer> out;       // non-aliased outputs
  std::vector<Buffer> ref_out;   // double
  Buffer ws;
  arc_args args{};
  arc_args ref_args{};
  std::vector<uint64_t> digests;  // of the non-aliased inputs after filling
};

class CudaWorker {
 public:
  CudaWorker(int in_fd, int out_fd, std::filesystem::path cache_dir)
      : in_fd_(in_fd), out_fd_(out_fd), cache_dir_(std::move(cache_dir)) {}

  int serve() {
    json ready = {{"op", "ready"}, {"pid", ::getpid()}, {"memory_limit_mb", 0}, {"backend", "cuda"}};
    Status started = start();
    if (started) {
      ready["device"] = ctx_->info().describe();
      ready["uuid"] = ctx_->info().uuid;
      ready["arch"] = ctx_->info().arch();
      ready["pci_bus_id"] = ctx_->info().pci_bus_id;
      ready["driver_version"] = ctx_->info().driver_version;
      ready["cupti"] =
          tracer_ != nullptr ? tracer_->library() : "unavailable: " + cupti_unavailable_;
    } else {
      ready["op"] = "unavailable";
      ready["error"] = started.message();
    }
    if (!write_message(out_fd_, ready)) return 3;
    if (!started) return 5;
    for (;;) {
      auto msg = read_message(in_fd_);
      if (!msg) return msg.status().code() == Status::Code::kUnavailable ? 0 : 2;
      json reply;
      try {
        const std::string op = msg->value("op", "");
        if (op == "shutdown") return 0;
        if (op == "peaks") {
          reply = peaks();
        } else if (op == "evaluate") {
          reply = evaluate(parse_request(*msg));
        } else {
          reply = {{"op", "error"}, {"error", "unknown op '" + op + "'"}};
        }
      } catch (const json::exception& e) {
        reply = {{"op", "error"}, {"error", std::string("malformed request: ") + e.what()}};
      } catch (const std::exception& e) {
        reply = {{"op", "error"}, {"error", std::string("worker error: ") + e.what()}};
        tainted_ = true;
      }
      if (!write_message(out_fd_, reply)) return 3;
      if (tainted_) ::_exit(0);  // the context is lost: the parent starts a fresh worker
    }
  }

 private:
  const cuda::Driver& cu() const { return *driver_; }

  Status start() {
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
    auto ctx = cuda::Context::open(0);
    if (!ctx) return ctx.status();
    ctx_ = std::move(*ctx);
    auto stream = cuda::Stream::create();
    if (!stream) return stream.status();
    stream_ = std::move(*stream);
    // The worker's own kernels.
    cuda::CompilerOptions co;
    co.cache_dir = cache_dir_;
    co.arch = ctx_->info().arch();
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

  static Result<std::string> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return Status::not_found("cannot read " + p.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // A failed call: its status and whether it poisoned the context.
  Failure fail(CUresult r, const std::string& what, const char* status_if_not_sticky) {
    Failure f;
    f.sticky = cuda::is_sticky(r);
    f.status = f.sticky ? "CRASH" : status_if_not_sticky;
    f.error = what + ": " + cuda::describe(r);
    if (f.sticky) {
      tainted_ = true;
      f.error += " (the CUDA context is lost; the worker is replaced)";
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) f.status = "OUT_OF_MEMORY";
    return f;
  }

  void progress(size_t i, const std::string& name, const char* phase) {
    (void)write_message(out_fd_, json{{"op", "progress"}, {"workload", i}, {"name", name}, {"phase", phase}});
  }

  unsigned grid_for(size_t n, unsigned threads) const {
    const size_t blocks = (n + threads - 1) / threads;
    const size_t cap = static_cast<size_t>(ctx_->info().sm_count) * 16;
    return static_cast<unsigned>(std::max<size_t>(1, std::min(blocks, cap)));
  }

  CUresult launch(CUfunction f, unsigned grid, unsigned block, void** params) {
    return cu().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream_->get(), params, nullptr);
  }

  CUresult fill(CUdeviceptr dst, const TensorDesc& t, uint64_t seed) {
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
  CUresult digest(CUdeviceptr p, size_t bytes, uint64_t* out) {
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

  CUresult poison(CUdeviceptr p, int dtype, size_t elements) {
    if (elements == 0) return CUDA_SUCCESS;
    switch (dtype) {
      case cuda::kF32: return cu().cuMemsetD32Async(p, 0x7fc00000u, elements, stream_->get());
      case cuda::kBF16: return cu().cuMemsetD16Async(p, 0x7fc0, elements, stream_->get());
      case cuda::kF16: return cu().cuMemsetD16Async(p, 0x7e00, elements, stream_->get());
      default: return cu().cuMemsetD32Async(p, 0x7ff80000u, elements * 2, stream_->get());
    }
  }

  // The L2 flush: a read over twice the L2 (the buffer is written once, when allocated).
  // Reads leave the L2 full of clean lines, so a timed kernel pays no write-back for data it
  // never wrote; a memset flush left dirty lines whose write-backs cost a read-bound skinny
  // GEMM about 3.5 us of 15 (docs/cuda-evaluator.md, "The L2 flush").
  CUresult flush() {
    if (flush_.bytes() == 0) {
      auto b = Buffer::allocate(padded(2 * static_cast<size_t>(ctx_->info().l2_bytes)));
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
    return launch(flush_fn_, 4 * static_cast<unsigned>(ctx_->info().sm_count), 512, params);
  }

  struct Compared {
    bool pass = true;
    std::string error;
    double max_abs_error = 0, matched_ratio = 1;
  };

  // Compares every output of a set with its reference (synchronizes). A CUDA failure is
  // returned through *failure.
  Compared compare_set(const WorkloadJob& job, const Request& req, BufferSet& s,
                       std::optional<Failure>* failure) {
    Compared c;
    uint64_t total = 0, matched = 0;
    for (size_t t = 0; t < job.outputs.size(); ++t) {
      const TensorDesc& o = job.outputs[t];
      const size_t n = static_cast<size_t>(std::max<int64_t>(o.elements, 0));
      if (n == 0) continue;
      CUdeviceptr out = output_ptr(job, s, t);
      CUdeviceptr ref = s.ref_out[t].get();
      uint64_t init[cuda::kCompareCounters] = {};
      init[cuda::kFirstBad] = ~0ULL;
      init[cuda::kFirstNaN] = ~0ULL;
      CUresult r = cu().cuMemcpyHtoD(counters_.get(), init, sizeof init);
      long long nn = static_cast<long long>(n);
      int dtype = o.dtype;
      double atol = req.atol, rtol = req.rtol;
      CUdeviceptr cp = counters_.get();
      void* params[] = {&out, &dtype, &ref, &nn, &atol, &rtol, &cp};
      if (r == CUDA_SUCCESS) r = launch(compare_, grid_for(n, 256), 256, params);
      if (r == CUDA_SUCCESS) r = cu().cuStreamSynchronize(stream_->get());
      uint64_t k[cuda::kCompareCounters] = {};
      if (r == CUDA_SUCCESS) r = cu().cuMemcpyDtoH(k, counters_.get(), sizeof k);
      if (r != CUDA_SUCCESS) {
        *failure = fail(r, "comparing output " + o.name, "CRASH");
        c.pass = false;
        return c;
      }
      double worst;
      std::memcpy(&worst, &k[cuda::kMaxErrorBits], sizeof worst);
      c.max_abs_error = std::max(c.max_abs_error, worst);
      auto element = [&](uint64_t i, bool from_ref) {
        double v = std::numeric_limits<double>::quiet_NaN();
        if (from_ref) {
          cu().cuMemcpyDtoH(&v, ref + i * 8, 8);
          return v;
        }
        unsigned char raw[8] = {};
        cu().cuMemcpyDtoH(raw, out + i * code_bytes(dtype), code_bytes(dtype));
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
          if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
          else if (e == 0) v = sign * std::ldexp(m, -24);
          else v = sign * std::ldexp(1024 + m, e - 25);
        } else {
          std::memcpy(&v, raw, 8);
        }
        return v;
      };
      if (k[cuda::kRefNonfinite] > 0) {
        c.pass = false;
        c.error = "the reference (not the candidate) produced " +
                  std::to_string(k[cuda::kRefNonfinite]) + " non-finite values in " + o.name;
        return c;
      }
      if (k[cuda::kNaN] + k[cuda::kInf] > 0) {
        const uint64_t i = k[cuda::kFirstNaN];
        c.pass = false;
        c.error = o.name + "[" + std::to_string(i) + "] is " + fmt_g(element(i, false)) + " (" +
                  std::to_string(k[cuda::kNaN]) + " NaN and " + std::to_string(k[cuda::kInf]) +
                  " Inf elements; outputs are poisoned with NaN before every run: an element not "
                  "written, or a NaN computed)";
        c.max_abs_error = std::numeric_limits<double>::infinity();
        c.matched_ratio = 0;
        return c;
      }
      if (k[cuda::kOutNonzero] == 0 && k[cuda::kRefNonzero] > 0) {
        c.pass = false;
        c.error = "output " + o.name + " is all zeros but the reference is not";
        c.matched_ratio = 0;
        return c;
      }
      total += n;
      matched += k[cuda::kMatched];
      if (k[cuda::kMatched] < n && c.error.empty()) {
        const uint64_t i = k[cuda::kFirstBad];
        c.error = "first out of tolerance: " + o.name + "[" + std::to_string(i) + "]: got " +
                  fmt_g(element(i, false), 9) + ", expected " + fmt_g(element(i, true), 9);
      }
    }
    c.matched_ratio = total == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(total);
    if (c.matched_ratio < req.matched_ratio) {
      c.pass = false;
      c.error = std::to_string(matched) + " of " + std::to_string(total) + " elements (" +
                fmt_g(100.0 * c.matched_ratio) + "%) within atol " + fmt_g(req.atol) + " + rtol " +
                fmt_g(req.rtol) + " * |ref| (required " + fmt_g(100.0 * req.matched_ratio) +
                "%); largest error " + fmt_g(c.max_abs_error) + "; " + c.error;
    } else {
      c.error.clear();
    }
    return c;
  }

  CUdeviceptr output_ptr(const WorkloadJob& job, const BufferSet& s, size_t t) const {
    const int alias = job.outputs[t].alias;
    return alias >= 0 ? s.in[static_cast<size_t>(alias)].get() : s.out[t].get();
  }

  // Allocates a set; OUT_OF_MEMORY names the tensor.
  std::optional<Failure> allocate(const WorkloadJob& job, BufferSet* s) {
    auto alloc = [&](size_t bytes, const std::string& what, Buffer* into) -> std::optional<Failure> {
      auto b = Buffer::allocate(padded(bytes));
      if (!b) {
        return Failure{"OUT_OF_MEMORY", "cannot allocate " + what + " of workload " + job.name +
                                            " (" + std::to_string(bytes) + " bytes): " +
                                            b.status().message(), false};
      }
      *into = std::move(*b);
      // Padding and tails are zero, so digests of whole words are stable.
      cu().cuMemsetD8Async(into->get(), 0, into->bytes(), stream_->get());
      return std::nullopt;
    };
    std::vector<bool> aliased(job.inputs.size(), false);
    for (const auto& o : job.outputs) if (o.alias >= 0) aliased[static_cast<size_t>(o.alias)] = true;
    s->in.resize(job.inputs.size());
    s->pristine.resize(job.inputs.size());
    s->out.resize(job.outputs.size());
    s->ref_out.resize(job.outputs.size());
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (auto f = alloc(job.inputs[i].bytes(), "input " + job.inputs[i].name, &s->in[i])) return f;
      if (aliased[i]) {
        if (auto f = alloc(job.inputs[i].bytes(), "a pristine copy of " + job.inputs[i].name, &s->pristine[i]))
          return f;
      }
    }
    for (size_t t = 0; t < job.outputs.size(); ++t) {
      const auto& o = job.outputs[t];
      if (o.alias < 0) {
        if (auto f = alloc(o.bytes(), "output " + o.name, &s->out[t])) return f;
      }
      if (auto f = alloc(static_cast<size_t>(std::max<int64_t>(o.elements, 0)) * 8,
                         "the reference's double output " + o.name, &s->ref_out[t]))
        return f;
    }
    if (job.workspace > 0) {
      if (auto f = alloc(job.workspace, "the workspace", &s->ws)) return f;
    }
    std::memset(&s->args, 0, sizeof s->args);
    std::memset(&s->ref_args, 0, sizeof s->ref_args);
    s->args.n_in = s->ref_args.n_in = static_cast<int>(job.inputs.size());
    s->args.n_out = s->ref_args.n_out = static_cast<int>(job.outputs.size());
    s->args.n_axes = s->ref_args.n_axes = static_cast<int>(job.axes.size());
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      s->args.in[i] = s->in[i].ptr();
      s->ref_args.in[i] = aliased[i] ? s->pristine[i].ptr() : s->in[i].ptr();
    }
    for (size_t t = 0; t < job.outputs.size(); ++t) {
      s->args.out[t] = reinterpret_cast<void*>(output_ptr(job, *s, t));
      s->ref_args.out[t] = s->ref_out[t].ptr();
    }
    for (size_t a = 0; a < job.axes.size(); ++a) s->args.axes[a] = s->ref_args.axes[a] = job.axes[a];
    s->args.ws = s->ws.bytes() > 0 ? s->ws.ptr() : nullptr;
    return std::nullopt;
  }

  // Draws the set's inputs from `seed` (an aliased input into its pristine copy), on the
  // stream, without synchronizing.
  std::optional<Failure> draw_inputs(const WorkloadJob& job, BufferSet& s, uint64_t seed) {
    uint64_t state = seed;
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const bool aliased = s.pristine[i].bytes() > 0;
      CUresult r = fill(aliased ? s.pristine[i].get() : s.in[i].get(), job.inputs[i], state ^ seed);
      if (r != CUDA_SUCCESS) return fail(r, "drawing input " + job.inputs[i].name, "CRASH");
    }
    return std::nullopt;
  }

  // Poisons the reference's outputs: while candidate code runs there is no answer to copy
  // (the reference runs after the candidate).
  std::optional<Failure> poison_reference(const WorkloadJob& job, BufferSet& s) {
    for (size_t t = 0; t < job.outputs.size(); ++t) {
      CUresult r = poison(s.ref_out[t].get(), cuda::kF64,
                          static_cast<size_t>(std::max<int64_t>(job.outputs[t].elements, 0)));
      if (r != CUDA_SUCCESS) return fail(r, "poisoning the reference output", "CRASH");
    }
    return std::nullopt;
  }

  // Digests of the non-aliased inputs as they are now (synchronizes).
  std::optional<Failure> digest_inputs(const WorkloadJob& job, BufferSet& s,
                                       std::vector<uint64_t>* digests) {
    digests->assign(job.inputs.size(), 0);
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (s.pristine[i].bytes() > 0) continue;
      CUresult r = digest(s.in[i].get(), job.inputs[i].bytes(), &(*digests)[i]);
      if (r != CUDA_SUCCESS) return fail(r, "digesting input " + job.inputs[i].name, "CRASH");
    }
    return std::nullopt;
  }

  // Draws the set's inputs, poisons the reference's outputs and records the input digests
  // (synchronizes).
  std::optional<Failure> prepare(const WorkloadJob& job, BufferSet& s, uint64_t seed) {
    if (auto f = draw_inputs(job, s, seed)) return f;
    if (auto f = poison_reference(job, s)) return f;
    return digest_inputs(job, s, &s.digests);
  }

  // Runs the reference kernels on the set's inputs (the pristine copy of an aliased one) into
  // its double outputs (synchronizes).
  std::optional<Failure> run_reference(const WorkloadJob& job, BufferSet& s,
                                       const std::vector<CUfunction>& ref_fns) {
    for (size_t l = 0; l < ref_fns.size(); ++l) {
      const LaunchDesc& d = job.reference_launches[l];
      void* params[] = {&s.ref_args};
      CUresult r = cu().cuLaunchKernel(ref_fns[l], d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                       d.block[1], d.block[2], d.shared, stream_->get(), params, nullptr);
      if (r != CUDA_SUCCESS) {
        Failure f = fail(r, "launching the reference kernel " + d.kernel, "LOAD_ERROR");
        f.error = "the reference (not the candidate) failed: " + f.error;
        return f;
      }
    }
    CUresult r = cu().cuStreamSynchronize(stream_->get());
    if (r != CUDA_SUCCESS) {
      Failure f = fail(r, "running the reference", "CRASH");
      f.error = "the reference (not the candidate) failed: " + f.error;
      return f;
    }
    return std::nullopt;
  }

  // "" while every non-aliased input is as drawn, else which changed.
  std::string inputs_changed(const WorkloadJob& job, BufferSet& s, std::optional<Failure>* failure) {
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (s.pristine[i].bytes() > 0) continue;
      uint64_t d = 0;
      CUresult r = digest(s.in[i].get(), job.inputs[i].bytes(), &d);
      if (r != CUDA_SUCCESS) {
        *failure = fail(r, "digesting input " + job.inputs[i].name, "CRASH");
        return "";
      }
      if (d != s.digests[i]) {
        return "the candidate wrote to its input " + job.inputs[i].name +
               " (inputs are read-only; only an output with alias may update one)";
      }
    }
    return "";
  }

  // Before every candidate run, on the stream: aliased inputs restored, outputs poisoned.
  CUresult reset_outputs(const WorkloadJob& job, BufferSet& s) {
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (s.pristine[i].bytes() == 0) continue;
      CUresult r = cu().cuMemcpyDtoDAsync(s.in[i].get(), s.pristine[i].get(), s.in[i].bytes(), stream_->get());
      if (r != CUDA_SUCCESS) return r;
    }
    for (size_t t = 0; t < job.outputs.size(); ++t) {
      if (job.outputs[t].alias >= 0) continue;
      CUresult r = poison(s.out[t].get(), job.outputs[t].dtype,
                          static_cast<size_t>(std::max<int64_t>(job.outputs[t].elements, 0)));
      if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
  }

  struct Bound {
    std::vector<CUfunction> fns;
    const cuda::LtPlan* plan = nullptr;
  };

  // The candidate's launches for a set, on the stream (no synchronization).
  std::optional<Failure> run_candidate(const WorkloadJob& job, const Bound& b, BufferSet& s) {
    if (job.library) {
      const GemmDesc& g = job.gemm;
      const void* c = g.c >= 0 ? s.in[static_cast<size_t>(g.c)].ptr() : nullptr;
      void* d = reinterpret_cast<void*>(output_ptr(job, s, static_cast<size_t>(g.d)));
      Status st = lt_->run(*b.plan, s.in[static_cast<size_t>(g.a)].ptr(),
                           s.in[static_cast<size_t>(g.b)].ptr(), c, d, s.ws.bytes() ? s.ws.ptr() : nullptr,
                           stream_->get());
      if (!st) return Failure{"LOAD_ERROR", st.message(), false};
      return std::nullopt;
    }
    for (size_t l = 0; l < b.fns.size(); ++l) {
      const LaunchDesc& d = job.launches[l];
      void* params[] = {&s.args};
      CUresult r = cu().cuLaunchKernel(b.fns[l], d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                       d.block[1], d.block[2], d.shared, stream_->get(), params, nullptr);
      if (r != CUDA_SUCCESS) {
        return fail(r, "cuLaunchKernel(" + d.kernel + ", grid " + std::to_string(d.grid[0]) + "x" +
                           std::to_string(d.grid[1]) + "x" + std::to_string(d.grid[2]) + ", block " +
                           std::to_string(d.block[0]) + "x" + std::to_string(d.block[1]) + "x" +
                           std::to_string(d.block[2]) + ", " + std::to_string(d.shared) +
                           " bytes of shared memory) was refused",
                    "LOAD_ERROR");
      }
    }
    return std::nullopt;
  }

  Result<const cuda::Module*> module(const std::string& path, const std::string& what) {
    auto it = modules_.find(path);
    if (it != modules_.end()) return it->second.get();
    auto image = read_file(path);
    if (!image) return image.status();
    auto m = cuda::Module::load(*image, what);
    if (!m) return m.status();
    if (modules_.size() > 256) modules_.clear();  // long campaigns: keep the set bounded
    return modules_.emplace(path, std::move(*m)).first->second.get();
  }

  Result<std::vector<CUfunction>> functions(const std::string& path, const std::string& what,
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

  struct Outcome {
    std::string status = "OK";
    std::string error;
    std::string method = "cuda_events";  // what produced `samples`
    std::vector<double> samples;
    SampleStats stats;
    double sol_ns = 0, max_abs_error = 0, matched_ratio = 1;
    uint32_t rounds = 0;
    std::vector<std::pair<std::string, std::string>> details;
  };

  Status ensure_lt() {
    if (lt_) return Status::ok();
    auto lt = cuda::Lt::open();
    if (!lt) return lt.status();
    lt_ = std::move(*lt);
    return Status::ok();
  }

  Outcome failed(Outcome o, const Failure& f) {
    o.status = f.status;
    o.error = f.error;
    return o;
  }

  Outcome evaluate_workload(const Request& req, size_t position, const WorkloadJob& job) {
    Outcome o;
    // Bind the reference and the candidate.
    auto ref_fns = functions(job.reference_module, "the reference", job.reference_launches);
    if (!ref_fns) {
      o.status = "LOAD_ERROR";
      o.error = "the reference (not the candidate): " + ref_fns.status().message();
      return o;
    }
    Bound bound;
    WorkloadJob effective = job;
    if (job.library) {
      if (Status lt = ensure_lt(); !lt) {
        o.status = "LOAD_ERROR";
        o.error = lt.message();
        return o;
      }
      const GemmDesc& g = job.gemm;
      const std::string key = std::to_string(g.problem.m) + "x" + std::to_string(g.problem.n) + "x" +
                              std::to_string(g.problem.k) + g.problem.dtype +
                              (g.problem.accumulate ? "+c" : "") + "/" + g.variant;
      auto it = plans_.find(key);
      if (it == plans_.end()) {
        auto p = lt_->plan(g.problem, g.config, size_t{64} << 20);
        if (!p) {
          o.status = "LOAD_ERROR";
          o.error = "cuBLASLt refused " + g.variant + " for " + job.name + ": " + p.status().message();
          return o;
        }
        it = plans_.emplace(key, std::move(*p)).first;
      }
      bound.plan = it->second.get();
      effective.workspace = bound.plan->workspace_bytes();
      o.details.push_back({"library", lt_->version()});
      o.details.push_back({"plan", bound.plan->description()});
    } else {
      auto fns = functions(job.module, "the candidate's cubin " + job.module, job.launches);
      if (!fns) {
        o.status = "LOAD_ERROR";
        o.error = fns.status().message();
        return o;
      }
      bound.fns = std::move(*fns);
      std::string launches;
      for (const auto& l : job.launches) {
        if (!launches.empty()) launches += "; ";
        launches += l.kernel + " <<<" + std::to_string(l.grid[0]) + "x" + std::to_string(l.grid[1]) +
                    "x" + std::to_string(l.grid[2]) + ", " + std::to_string(l.block[0]) + "x" +
                    std::to_string(l.block[1]) + "x" + std::to_string(l.block[2]) + ", " +
                    std::to_string(l.shared) + ">>>";
      }
      o.details.push_back({"launches", launches});
    }
    std::optional<Failure> failure;
    const Request& r = req;

    // Correctness: fresh inputs every round.
    {
      BufferSet s;
      if (auto f = allocate(effective, &s)) return failed(o, *f);
      for (uint32_t round = 0; round < r.rounds; ++round) {
        if (auto f = prepare(effective, s, derive_seed(r.input_seed, job.index, round)))
          return failed(o, *f);
        const std::string when = " in correctness round " + std::to_string(round);
        CUresult cr = reset_outputs(effective, s);
        if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "resetting outputs", "CRASH"));
        if (auto f = run_candidate(effective, bound, s)) {
          Failure ff = *f;
          ff.error += when;
          return failed(o, ff);
        }
        cr = cu().cuStreamSynchronize(stream_->get());
        if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "the candidate failed" + when, "CRASH"));
        if (std::string w = inputs_changed(effective, s, &failure); !w.empty() || failure) {
          if (failure) return failed(o, *failure);
          o.status = "WRONG_RESULT";
          o.error = w + when;
          return o;
        }
        if (auto f = run_reference(effective, s, *ref_fns)) return failed(o, *f);
        Compared c = compare_set(effective, r, s, &failure);
        if (failure) return failed(o, *failure);
        o.max_abs_error = std::max(o.max_abs_error, c.max_abs_error);
        o.matched_ratio = std::min(o.matched_ratio, c.matched_ratio);
        if (!c.pass) {
          o.status = "WRONG_RESULT";
          o.error = "correctness round " + std::to_string(round) + ": " + c.error;
          return o;
        }
        o.rounds = round + 1;
      }
    }

    // Timing: K sets, W warm-ups, N repetitions, events around exactly the candidate's launches;
    // with CUPTI, the same launches inside an external-correlation region per repetition.
    progress(position, job.name, "timing");
    std::string cupti_reason;  // why CUPTI does not time this workload ("" while it may)
    cuda::ActivityTracer* tracer = nullptr;
    if (r.timing == "cuda_events") {
      cupti_reason = "[evaluation] timing = \"cuda_events\"";
    } else if (tracer_ == nullptr) {
      cupti_reason = cupti_unavailable_;
    } else if (!tracer_->enabled()) {
      cupti_reason = cupti_enable_error_;
    } else {
      tracer = tracer_;
    }
    auto cupti_required = [](const std::string& why) {
      return Failure{
          "CRASH",
          "[evaluation] timing = \"cupti\" but CUPTI cannot time this workload: " + why, false};
    };
    if (r.timing == "cupti" && tracer == nullptr) return failed(o, cupti_required(cupti_reason));
    std::vector<BufferSet> sets(r.buffer_sets);
    for (uint32_t k = 0; k < r.buffer_sets; ++k) {
      if (auto f = allocate(effective, &sets[k])) return failed(o, *f);
      if (auto f = prepare(effective, sets[k], derive_seed(r.input_seed, job.index, 0x10000 + k)))
        return failed(o, *f);
    }
    auto prep = [&](BufferSet& s) -> CUresult {
      CUresult cr = reset_outputs(effective, s);
      if (cr == CUDA_SUCCESS && r.flush_cache) cr = flush();
      return cr;
    };
    for (uint32_t i = 0; i < r.warmup; ++i) {
      BufferSet& s = sets[i % sets.size()];
      CUresult cr = prep(s);
      if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "preparing a warm-up run", "CRASH"));
      if (auto f = run_candidate(effective, bound, s)) return failed(o, *f);
    }
    CUresult cr = cu().cuStreamSynchronize(stream_->get());
    if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "the candidate failed in a warm-up run", "CRASH"));
    std::vector<std::unique_ptr<cuda::Event>> starts, stops;
    for (uint32_t i = 0; i < r.repetitions; ++i) {
      auto a = cuda::Event::create();
      auto b = cuda::Event::create();
      if (!a || !b) {
        o.status = "CRASH";
        o.error = (!a ? a.status() : b.status()).message();
        return o;
      }
      starts.push_back(std::move(*a));
      stops.push_back(std::move(*b));
    }
    // Every timed run gets fresh inputs (drawn on the stream, outside the timed region): a
    // cache keyed by the inputs' address or contents serves stale outputs, which the re-check
    // below catches.
    auto timed_seed = [&](uint32_t i) { return derive_seed(r.input_seed, job.index, 0x20000 + i); };
    // External ids are never reused, so records of earlier timings that CUPTI delivers late
    // can never be taken for this one's.
    const uint64_t first_external = next_external_id_;
    next_external_id_ += r.repetitions;
    for (uint32_t i = 0; i < r.repetitions; ++i) {
      BufferSet& s = sets[i % sets.size()];
      if (auto f = draw_inputs(effective, s, timed_seed(i))) return failed(o, *f);
      cr = prep(s);
      if (cr == CUDA_SUCCESS) cr = cu().cuEventRecord(starts[i]->get(), stream_->get());
      if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "preparing timed run " + std::to_string(i), "CRASH"));
      bool pushed = false;
      if (tracer != nullptr) {
        if (Status st = tracer->push(first_external + i); st) {
          pushed = true;
        } else {
          cupti_reason = st.message();
          tracer = nullptr;
        }
      }
      std::optional<Failure> launched = run_candidate(effective, bound, s);
      if (pushed) {
        if (Status st = tracer->pop(first_external + i); !st) {
          cupti_reason = st.message();
          tracer = nullptr;
        }
      }
      if (launched) return failed(o, *launched);
      cr = cu().cuEventRecord(stops[i]->get(), stream_->get());
      if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "cuEventRecord", "CRASH"));
    }
    cr = cu().cuStreamSynchronize(stream_->get());
    if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "the candidate failed in a timed run", "CRASH"));
    for (const auto& [k, v] : cuda::read_clocks(ctx_->info().pci_bus_id)) o.details.push_back({k, v});
    std::vector<double> event_samples;
    for (uint32_t i = 0; i < r.repetitions; ++i) {
      float ms = 0;
      cr = cu().cuEventElapsedTime(&ms, starts[i]->get(), stops[i]->get());
      if (cr != CUDA_SUCCESS) return failed(o, fail(cr, "cuEventElapsedTime", "CRASH"));
      event_samples.push_back(static_cast<double>(ms) * 1e6);
    }
    o.samples = event_samples;
    if (tracer != nullptr) {
      // Everything CUPTI delivered since the last timing: this timing's repetitions, and the
      // correctness rounds, warm-ups and the worker's own kernels, which attribution ignores.
      auto records = tracer->collect();
      if (!records) {
        cupti_reason = records.status().message();
      } else {
        cuda::RepetitionSpans spans =
            cuda::repetition_spans(*records, first_external, r.repetitions);
        if (spans.usable) {
          o.samples = std::move(spans.spans_ns);
          o.method = "cupti_activity";
          o.details.push_back(
              {"cuda_events_median_ns", fmt_g(summarize_samples(event_samples).median, 6)});
          o.details.push_back({"timed_kernels", cuda::describe_activities(spans.names)});
        } else {
          cupti_reason = "CUPTI activity records unusable: " + spans.reason;
        }
      }
    }
    if (o.method != "cupti_activity") {
      if (r.timing == "cupti") return failed(o, cupti_required(cupti_reason));
      o.details.push_back({"timing_method_reason", cupti_reason});
    }
    // Re-check: each set holds the output of the last timed run that used it.
    for (uint32_t k = 0; k < sets.size() && k < r.repetitions; ++k) {
      const uint32_t n_sets = static_cast<uint32_t>(sets.size());
      const uint32_t last = k + n_sets * ((r.repetitions - 1 - k) / n_sets);
      // The inputs as the candidate left them, then drawn again from the last run's seed:
      // any difference is a write to an input.
      std::vector<uint64_t> left;
      if (auto f = digest_inputs(effective, sets[k], &left)) return failed(o, *f);
      if (auto f = prepare(effective, sets[k], timed_seed(last))) return failed(o, *f);
      for (size_t i = 0; i < left.size(); ++i) {
        if (left[i] != sets[k].digests[i]) {
          o.status = "WRONG_RESULT";
          o.error = "the candidate wrote to its input " + effective.inputs[i].name +
                    " (inputs are read-only; only an output with alias may update one) during "
                    "timing (buffer set " + std::to_string(k) + ")";
          return o;
        }
      }
      if (auto f = run_reference(effective, sets[k], *ref_fns)) return failed(o, *f);
      Compared c = compare_set(effective, r, sets[k], &failure);
      if (failure) return failed(o, *failure);
      if (!c.pass) {
        o.status = "STALE_OUTPUT";
        o.error = "timed run " + std::to_string(last) + " (buffer set " + std::to_string(k) +
                  ") does not match the reference for its inputs: " + c.error;
        return o;
      }
    }
    o.stats = summarize_samples(o.samples);

    // SOL.
    double sol_s = 0;
    std::string why;
    if (r.peak_flops > 0 && job.flops > 0 && job.flops / r.peak_flops > sol_s) {
      sol_s = job.flops / r.peak_flops;
      why = fmt_g(job.flops) + " flops at the measured peak " + fmt_g(r.peak_flops) + " flop/s";
    }
    if (r.peak_bandwidth > 0 && job.bytes > 0 && job.bytes / r.peak_bandwidth > sol_s) {
      sol_s = job.bytes / r.peak_bandwidth;
      why = fmt_g(job.bytes) + " bytes at the measured copy bandwidth " + fmt_g(r.peak_bandwidth) + " B/s";
    }
    o.sol_ns = sol_s * 1e9;
    if (!o.samples.empty() && o.stats.median < o.sol_ns * r.sol_margin) {
      o.status = "IMPOSSIBLE";
      o.error = "median " + fmt_g(o.stats.median) + " ns is below " + fmt_g(r.sol_margin) +
                " x the speed-of-light bound " + fmt_g(o.sol_ns) + " ns (" + why + ")";
    }
    return o;
  }

  json outcome_json(const std::string& workload, const Outcome& o) {
    json details = json::array();
    for (const auto& [k, v] : o.details) details.push_back({{"key", k}, {"value", v}});
    return {{"workload", workload},
            {"status", o.status},
            {"error", o.error},
            {"samples_ns", o.samples},
            {"median_ns", json_number(o.stats.median)},
            {"p25_ns", json_number(o.stats.p25)},
            {"p75_ns", json_number(o.stats.p75)},
            {"min_ns", json_number(o.stats.min)},
            {"spread", json_number(o.stats.spread)},
            {"sol_ns", json_number(o.sol_ns)},
            {"sol_floor_ns", json_number(o.sol_ns * sol_margin_)},
            {"method", o.method},
            {"max_abs_error", json_number(o.max_abs_error)},
            {"matched_ratio", json_number(o.matched_ratio)},
            {"rounds", o.rounds},
            {"details", details}};
  }

  json evaluate(const Request& req) {
    sol_margin_ = req.sol_margin;
    if (tracer_ != nullptr) {
      // timing = "cuda_events" keeps CUPTI's kernel instrumentation out of the measurement.
      Status st = tracer_->set_enabled(req.timing != "cuda_events");
      cupti_enable_error_ = st ? "" : st.message();
      // Drop what earlier requests left (peaks, candidates that failed before timing), so the
      // records held never exceed one request's.
      (void)tracer_->collect();
    }
    json results = json::array();
    bool failed_any = false;
    std::string failed_name;
    for (size_t i = 0; i < req.workloads.size(); ++i) {
      const WorkloadJob& job = req.workloads[i];
      Outcome o;
      if (failed_any || tainted_) {
        o.status = "NOT_RUN";
        o.error = "not run: workload " + failed_name + " failed";
      } else {
        progress(i, job.name, "correctness");
        o = evaluate_workload(req, i, job);
        if (o.status != "OK") {
          failed_any = true;
          failed_name = job.name;
        }
      }
      json entry = outcome_json(job.name, o);
      if (o.status != "NOT_RUN") {
        (void)write_message(out_fd_, json{{"op", "workload"}, {"index", i}, {"result", entry}});
      }
      results.push_back(std::move(entry));
    }
    return {{"op", "result"}, {"workloads", std::move(results)}, {"exiting", tainted_}};
  }

  // ----------------------------------------------------------------------------------------
  // Peaks: copy bandwidth and a cuBLASLt GEMM per dtype, best of several trials.
  json peaks() {
    json details = json::array();
    auto detail = [&](const std::string& k, const std::string& v) { details.push_back({{"key", k}, {"value", v}}); };
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
        cu().cuLaunchKernel(copy_, 4 * static_cast<unsigned>(ctx_->info().sm_count), 1, 1, 512, 1,
                            1, 0, stream_->get(), params, nullptr);
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
          const unsigned grid = per_sm * static_cast<unsigned>(ctx_->info().sm_count);
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
                copy_cfg = std::to_string(per_sm) + " blocks/SM x " + std::to_string(threads) + " threads";
              }
            }
          }
        }
      }
    }
    detail("copy_bytes_per_s", fmt_g(copy_bw, 6));
    detail("copy_config", copy_cfg);
    json flops = json::object();
    Status lt = ensure_lt();
    if (lt) {
      detail("library", lt_->version());
      for (const char* dtype : {"bf16", "f16", "f32"}) {
        const bool f32 = std::string(dtype) == "f32";
        double best = 0;
        std::string best_plan;
        // Several sizes: short GEMMs run at the boost clock, long ones settle under the power
        // cap; the peak is the best either reaches.
        for (int64_t size : f32 ? std::vector<int64_t>{2048, 4096} : std::vector<int64_t>{4096, 6144, 8192}) {
          cuda::GemmProblem g{size, size, size, dtype, false};
          auto plan = lt_->plan(g, cuda::LtConfig{}, size_t{64} << 20);
          if (!plan) {
            detail(std::string("gemm_") + dtype + "_error", plan.status().message());
            continue;
          }
          const size_t bytes = static_cast<size_t>(size * size) * (f32 ? 4 : 2);
          auto a = Buffer::allocate(bytes), b = Buffer::allocate(bytes), d = Buffer::allocate(bytes);
          auto ws = Buffer::allocate(std::max<size_t>((*plan)->workspace_bytes(), 256));
          if (!a || !b || !d || !ws) continue;
          TensorDesc t;
          t.dtype = dtype_code(dtype);
          t.elements = size * size;
          fill(a->get(), t, 1);
          fill(b->get(), t, 2);
          auto e0 = cuda::Event::create();
          auto e1 = cuda::Event::create();
          if (!e0 || !e1) continue;
          for (int i = 0; i < 20; ++i) {  // warm-up: clocks up, plan and code paths loaded
            if (!lt_->run(**plan, a->ptr(), b->ptr(), nullptr, d->ptr(), ws->ptr(), stream_->get())) break;
          }
          cu().cuStreamSynchronize(stream_->get());
          for (int trial = 0; trial < 20; ++trial) {
            (*e0)->record(stream_->get());
            Status st = lt_->run(**plan, a->ptr(), b->ptr(), nullptr, d->ptr(), ws->ptr(), stream_->get());
            (*e1)->record(stream_->get());
            if (!st || cu().cuStreamSynchronize(stream_->get()) != CUDA_SUCCESS) break;
            auto ms = (*e1)->since(**e0);
            const double rate = ms && *ms > 0 ? 2.0 * size * size * static_cast<double>(size) / (*ms * 1e-3) : 0;
            if (rate > best) {
              best = rate;
              best_plan = (*plan)->description() + ", " + std::to_string(size) + "^3";
            }
          }
        }
        flops[dtype] = best;
        detail(std::string("gemm_") + dtype + "_flops_per_s", fmt_g(best, 6));
        detail(std::string("gemm_") + dtype + "_plan", best_plan);
      }
    } else {
      detail("library_error", lt.message());
    }
    for (const auto& [k, v] : cuda::read_clocks(ctx_->info().pci_bus_id)) detail(k, v);
    return {{"op", "peaks"},
            {"bandwidth_bytes_per_s", copy_bw},
            {"flops", flops},
            {"device", ctx_->info().describe()},
            {"method",
             "measured on the device after a warm-up at full clocks: copy bandwidth = the best "
             "timed run (CUDA events) of cuMemcpyDtoDAsync and of a 16-byte copy kernel (2-16 "
             "blocks per SM, 256-1024 threads) over 1 GiB, bytes read + written; GEMM = the best "
             "of 20 timed cuBLASLt matmuls (after 20 untimed) with the default heuristic at each "
             "of 4096^3, 6144^3 and 8192^3 (bf16, f16) or 2048^3 and 4096^3 (f32), fp32 "
             "accumulation, 2 m n k flops"},
            {"details", details}};
  }

  int in_fd_, out_fd_;
  std::filesystem::path cache_dir_;
  const cuda::Driver* driver_ = nullptr;
  std::unique_ptr<cuda::Context> ctx_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::Module> runtime_;
  CUfunction fill_ = nullptr, compare_ = nullptr, digest_ = nullptr, copy_ = nullptr,
             flush_fn_ = nullptr;
  Buffer counters_;
  Buffer flush_;
  std::map<std::string, std::unique_ptr<cuda::Module>> modules_;
  std::unique_ptr<cuda::Lt> lt_;
  cuda::ActivityTracer* tracer_ = nullptr;  // null: CUPTI unusable in this process
  std::string cupti_unavailable_;           // why tracer_ is null
  std::string cupti_enable_error_;          // why tracer_'s activity kinds are off
  uint64_t next_external_id_ = 1;           // CUPTI external ids, one per timed repetition
  std::map<std::string, std::unique_ptr<cuda::LtPlan>> plans_;
  bool tainted_ = false;
  double sol_margin_ = 0.5;
};

}  // namespace

int serve_cuda_worker(int in_fd, int out_fd, const std::filesystem::path& cache_dir) {
  CudaWorker w(in_fd, out_fd, cache_dir);
  return w.serve();
}

}  // namespace arc::eval
