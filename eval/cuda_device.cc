// The CUDA backend (eval/cuda_worker.h): a Device whose workloads run on the GPU of a
// CudaSession (eval/cuda_session.h). The protocol is eval/measure.h's; this file says how a
// buffer set is allocated, drawn, poisoned, run, timed (CUDA events, CUPTI spans) and compared.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "base/throttle.h"
#include "cuda/cupti_spans.h"
#include "cuda/include/arc_cuda.h"
#include "cuda/nvml.h"
#include "cuda/runtime_kernels.h"
#include "eval/cuda_request.h"
#include "eval/cuda_session.h"
#include "eval/cuda_tensor_maps.h"
#include "eval/cuda_worker.h"
#include "eval/device.h"
#include "eval/measure.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;
using cuda::Buffer;
using cuda_worker::CudaSession;
using cuda_worker::GemmDesc;
using cuda_worker::LaunchDesc;
using cuda_worker::padded;
using cuda_worker::Request;
using cuda_worker::TensorDesc;
using cuda_worker::WorkloadJob;

// Everything a workload needs on the device, for one set of inputs.
struct BufferSet {
  std::vector<Buffer> in;        // what the candidate reads (an aliased input: restored copy)
  std::vector<Buffer> pristine;  // aliased inputs only: the values drawn, restored before runs
  std::vector<Buffer> out;       // non-aliased outputs
  std::vector<Buffer> ref_out;   // double
  Buffer ws;
  arc_args args{};
  arc_args ref_args{};
  arc_tensor_maps maps{};         // the family's tensor maps over this set's buffers
  std::vector<uint64_t> digests;  // of the non-aliased inputs after filling
};

struct Bound {
  std::vector<CUfunction> fns;
  const cuda::LtPlan* plan = nullptr;
};

class CudaWorkload : public BoundWorkload {
 public:
  CudaWorkload(CudaSession* session, const Request& req, WorkloadJob job, Bound bound,
               std::vector<CUfunction> ref_fns)
      : sess_(session),
        req_(req),
        job_(std::move(job)),
        bound_(std::move(bound)),
        ref_fns_(std::move(ref_fns)) {}

  Step allocate(size_t set, size_t) override {
    if (sets_.size() <= set) sets_.resize(set + 1);
    sets_[set] = std::make_unique<BufferSet>();
    return allocate(job_, sets_[set].get());
  }
  void release(size_t set) override { sets_[set].reset(); }

  Step prepare(size_t set, uint64_t seed) override { return prepare(job_, *sets_[set], seed); }

  Step run(size_t set, const std::string& when) override {
    BufferSet& s = *sets_[set];
    CUresult cr = reset_outputs(job_, s);
    if (cr != CUDA_SUCCESS) return fail(cr, "resetting outputs", "CRASH");
    if (auto f = run_candidate(job_, s)) {
      f->error += " " + when;
      return f;
    }
    cr = cu().cuStreamSynchronize(stream());
    if (cr != CUDA_SUCCESS) return fail(cr, "the candidate failed " + when, "CRASH");
    return std::nullopt;
  }

  Step check_inputs(size_t set, const std::string& when) override {
    std::optional<Failure> failure;
    if (std::string w = inputs_changed(job_, *sets_[set], &failure); !w.empty() || failure) {
      if (failure) return failure;
      return Failure{"WRONG_RESULT", w + " " + when};
    }
    return std::nullopt;
  }

  Step reference(size_t set) override { return run_reference(job_, *sets_[set]); }

  Step compare(size_t set, Comparison* result) override {
    std::optional<Failure> failure;
    *result = compare_set(job_, *sets_[set], &failure);
    return failure;
  }

  Step begin_timing() override;
  Step warmup(size_t set, uint32_t i) override;
  Step end_warmup() override;
  Step timed(size_t set, uint32_t i, uint64_t fresh_seed) override;
  Step end_timing(Timing* timing) override;
  Recheck recheck() const override { return Recheck::kLastUseOfSet; }
  Step recheck_inputs(size_t set, uint64_t seed, uint32_t set_number) override;

 private:
  const cuda::Driver& cu() const { return sess_->cu(); }
  CUstream stream() const { return sess_->stream(); }
  Failure fail(CUresult r, const std::string& what, const char* status) {
    return sess_->fail(r, what, status);
  }
  CUresult poison(CUdeviceptr p, int dtype, size_t elements) {
    return sess_->poison(p, dtype, elements);
  }
  Failure cupti_required(const std::string& why) const {
    return Failure{"CRASH",
                   "[evaluation] timing = \"cupti\" but CUPTI cannot time this workload: " + why};
  }

  // Compares every output of a set with its reference (synchronizes). A CUDA failure is
  // returned through *failure.
  Comparison compare_set(const WorkloadJob& job, BufferSet& s, std::optional<Failure>* failure);

  CUdeviceptr output_ptr(const WorkloadJob& job, const BufferSet& s, size_t t) const {
    const int alias = job.outputs[t].alias;
    return alias >= 0 ? s.in[static_cast<size_t>(alias)].get() : s.out[t].get();
  }

  // Allocates a set; OUT_OF_MEMORY names the tensor.
  std::optional<Failure> allocate(const WorkloadJob& job, BufferSet* s) {
    auto alloc = [&](size_t bytes, const std::string& what,
                     Buffer* into) -> std::optional<Failure> {
      auto b = Buffer::allocate(padded(bytes));
      if (!b) {
        return Failure{"OUT_OF_MEMORY", "cannot allocate " + what + " of workload " + job.name +
                                            " (" + std::to_string(bytes) +
                                            " bytes): " + b.status().message()};
      }
      *into = std::move(*b);
      // Padding and tails are zero, so digests of whole words are stable.
      cu().cuMemsetD8Async(into->get(), 0, into->bytes(), stream());
      return std::nullopt;
    };
    std::vector<bool> aliased(job.inputs.size(), false);
    for (const auto& o : job.outputs)
      if (o.alias >= 0) aliased[static_cast<size_t>(o.alias)] = true;
    s->in.resize(job.inputs.size());
    s->pristine.resize(job.inputs.size());
    s->out.resize(job.outputs.size());
    s->ref_out.resize(job.outputs.size());
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (auto f = alloc(job.inputs[i].bytes(), "input " + job.inputs[i].name, &s->in[i])) return f;
      if (aliased[i]) {
        if (auto f = alloc(job.inputs[i].bytes(), "a pristine copy of " + job.inputs[i].name,
                           &s->pristine[i]))
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
      // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address, never dereferenced here
      s->args.out[t] = reinterpret_cast<void*>(output_ptr(job, *s, t));
      s->ref_args.out[t] = s->ref_out[t].ptr();
    }
    for (size_t a = 0; a < job.axes.size(); ++a)
      s->args.axes[a] = s->ref_args.axes[a] = job.axes[a];
    s->args.ws = s->ws.bytes() > 0 ? s->ws.ptr() : nullptr;
    return cuda_worker::encode_tensor_maps(cu(), job, s->args, &s->maps);
  }

  // Draws the set's inputs from `seed` (an aliased input into its pristine copy), on the
  // stream, without synchronizing.
  std::optional<Failure> draw_inputs(const WorkloadJob& job, BufferSet& s, uint64_t seed) {
    uint64_t state = seed;
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const bool aliased = s.pristine[i].bytes() > 0;
      CUresult r =
          sess_->fill(aliased ? s.pristine[i].get() : s.in[i].get(), job.inputs[i], state ^ seed);
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
      CUresult r = sess_->digest(s.in[i].get(), job.inputs[i].bytes(), &(*digests)[i]);
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
  std::optional<Failure> run_reference(const WorkloadJob& job, BufferSet& s) {
    const std::vector<CUfunction>& ref_fns = ref_fns_;
    for (size_t l = 0; l < ref_fns.size(); ++l) {
      const LaunchDesc& d = job.reference_launches[l];
      void* params[] = {&s.ref_args};
      CUresult r = cu().cuLaunchKernel(ref_fns[l], d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                       d.block[1], d.block[2], d.shared, stream(), params, nullptr);
      if (r != CUDA_SUCCESS) {
        Failure f = fail(r, "launching the reference kernel " + d.kernel, "LOAD_ERROR");
        f.error = "the reference (not the candidate) failed: " + f.error;
        return f;
      }
    }
    CUresult r = cu().cuStreamSynchronize(stream());
    if (r != CUDA_SUCCESS) {
      Failure f = fail(r, "running the reference", "CRASH");
      f.error = "the reference (not the candidate) failed: " + f.error;
      return f;
    }
    return std::nullopt;
  }

  // "" while every non-aliased input is as drawn, else which changed.
  std::string inputs_changed(const WorkloadJob& job, BufferSet& s,
                             std::optional<Failure>* failure) {
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      if (s.pristine[i].bytes() > 0) continue;
      uint64_t d = 0;
      CUresult r = sess_->digest(s.in[i].get(), job.inputs[i].bytes(), &d);
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
      CUresult r =
          cu().cuMemcpyDtoDAsync(s.in[i].get(), s.pristine[i].get(), s.in[i].bytes(), stream());
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

  // The candidate's launches for a set, on the stream (no synchronization).
  std::optional<Failure> run_candidate(const WorkloadJob& job, BufferSet& s) {
    const Bound& b = bound_;
    if (job.library) {
      const GemmDesc& g = job.gemm;
      const void* c = g.c >= 0 ? s.in[static_cast<size_t>(g.c)].ptr() : nullptr;
      // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address, never dereferenced here
      void* d = reinterpret_cast<void*>(output_ptr(job, s, static_cast<size_t>(g.d)));
      auto scale = [&s](int i) {
        return i >= 0 ? static_cast<const float*>(s.in[static_cast<size_t>(i)].ptr()) : nullptr;
      };
      Status st = sess_->lt()->run(
          *b.plan, s.in[static_cast<size_t>(g.a)].ptr(), s.in[static_cast<size_t>(g.b)].ptr(), c, d,
          s.ws.bytes() ? s.ws.ptr() : nullptr, stream(), scale(g.a_scale), scale(g.b_scale));
      if (!st) return Failure{"LOAD_ERROR", st.message()};
      return std::nullopt;
    }
    for (size_t l = 0; l < b.fns.size(); ++l) {
      const LaunchDesc& d = job.launches[l];
      // Kernels of a family with tensor maps take them as a second parameter.
      void* params[] = {&s.args, &s.maps};
      CUresult r = cu().cuLaunchKernel(b.fns[l], d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                       d.block[1], d.block[2], d.shared, stream(), params, nullptr);
      if (r != CUDA_SUCCESS) {
        return fail(r,
                    "cuLaunchKernel(" + d.kernel + ", grid " + std::to_string(d.grid[0]) + "x" +
                        std::to_string(d.grid[1]) + "x" + std::to_string(d.grid[2]) + ", block " +
                        std::to_string(d.block[0]) + "x" + std::to_string(d.block[1]) + "x" +
                        std::to_string(d.block[2]) + ", " + std::to_string(d.shared) +
                        " bytes of shared memory) was refused",
                    "LOAD_ERROR");
      }
    }
    return std::nullopt;
  }

  // Before every timed run: aliased inputs restored, outputs poisoned, the L2 flushed.
  CUresult prep(BufferSet& s) {
    CUresult cr = reset_outputs(job_, s);
    if (cr == CUDA_SUCCESS && req_.flush_cache) cr = sess_->flush();
    return cr;
  }

  CudaSession* sess_;
  const Request& req_;
  WorkloadJob job_;  // with the plan's workspace
  Bound bound_;
  std::vector<CUfunction> ref_fns_;
  std::vector<std::unique_ptr<BufferSet>> sets_;
  // Timing.
  std::string cupti_reason_;  // why CUPTI does not time this workload ("" while it may)
  cuda::ActivityTracer* tracer_ = nullptr;
  std::vector<std::unique_ptr<cuda::Event>> starts_, stops_;
  uint64_t first_external_ = 0;
  // NVML's readings right before the first timed repetition (base/throttle.h).
  Details clocks_before_;
};

Comparison CudaWorkload::compare_set(const WorkloadJob& job, BufferSet& s,
                                     std::optional<Failure>* failure) {
  Comparison c;
  uint64_t total = 0, matched = 0;
  for (size_t t = 0; t < job.outputs.size(); ++t) {
    const TensorDesc& o = job.outputs[t];
    const size_t n = o.elements_or_0();
    if (n == 0) continue;
    CUdeviceptr out = output_ptr(job, s, t);
    CUdeviceptr ref = s.ref_out[t].get();
    uint64_t k[cuda::kCompareCounters] = {};
    CUresult r = sess_->compare(out, o.dtype, ref, n, req_.atol, req_.rtol, k);
    if (r != CUDA_SUCCESS) {
      *failure = fail(r, "comparing output " + o.name, "CRASH");
      c.pass = false;
      return c;
    }
    double worst;
    std::memcpy(&worst, &k[cuda::kMaxErrorBits], sizeof worst);
    c.max_abs_error = std::max(c.max_abs_error, worst);
    if (k[cuda::kRefNonfinite] > 0) {
      c.pass = false;
      c.error = "the reference (not the candidate) produced " +
                std::to_string(k[cuda::kRefNonfinite]) + " non-finite values in " + o.name;
      return c;
    }
    if (k[cuda::kNaN] + k[cuda::kInf] > 0) {
      const uint64_t i = k[cuda::kFirstNaN];
      c.pass = false;
      c.error = o.name + "[" + std::to_string(i) + "] is " +
                format_number(sess_->element(out, o.dtype, i)) + " (" +
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
                format_number(sess_->element(out, o.dtype, i), 9) + ", expected " +
                format_number(sess_->element(ref, cuda::kF64, i), 9);
    }
  }
  c.matched_ratio = total == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(total);
  if (c.matched_ratio < req_.matched_ratio) {
    c.pass = false;
    c.error = std::to_string(matched) + " of " + std::to_string(total) + " elements (" +
              format_number(100.0 * c.matched_ratio) + "%) within atol " +
              format_number(req_.atol) + " + rtol " + format_number(req_.rtol) +
              " * |ref| (required " + format_number(100.0 * req_.matched_ratio) +
              "%); largest error " + format_number(c.max_abs_error) + "; " + c.error;
  } else {
    c.error.clear();
  }
  return c;
}

// Timing: events around exactly the candidate's launches; with CUPTI, the same launches inside
// an external-correlation region per repetition.
Step CudaWorkload::begin_timing() {
  if (req_.timing == "cuda_events") {
    cupti_reason_ = "[evaluation] timing = \"cuda_events\"";
  } else if (sess_->tracer() == nullptr) {
    cupti_reason_ = sess_->cupti_unavailable();
  } else if (!sess_->tracer()->enabled()) {
    cupti_reason_ = sess_->cupti_enable_error;
  } else {
    tracer_ = sess_->tracer();
  }
  if (req_.timing == "cupti" && tracer_ == nullptr) return cupti_required(cupti_reason_);
  return std::nullopt;
}

Step CudaWorkload::warmup(size_t set, uint32_t) {
  BufferSet& s = *sets_[set];
  CUresult cr = prep(s);
  if (cr != CUDA_SUCCESS) return fail(cr, "preparing a warm-up run", "CRASH");
  return run_candidate(job_, s);
}

Step CudaWorkload::end_warmup() {
  CUresult cr = cu().cuStreamSynchronize(stream());
  if (cr != CUDA_SUCCESS) return fail(cr, "the candidate failed in a warm-up run", "CRASH");
  // After the warm-ups, with the stream idle: the state the timed runs start from.
  clocks_before_ = cuda::read_clocks(sess_->info().pci_bus_id);
  for (uint32_t i = 0; i < req_.repetitions; ++i) {
    auto a = cuda::Event::create();
    auto b = cuda::Event::create();
    if (!a || !b) return Failure{"CRASH", (!a ? a.status() : b.status()).message()};
    starts_.push_back(std::move(*a));
    stops_.push_back(std::move(*b));
  }
  // External ids are never reused, so records of earlier timings that CUPTI delivers late can
  // never be taken for this one's.
  first_external_ = sess_->reserve_external_ids(req_.repetitions);
  return std::nullopt;
}

// Every timed run gets fresh inputs (drawn on the stream, outside the timed region): a cache
// keyed by the inputs' address or contents serves stale outputs, which the re-check catches.
Step CudaWorkload::timed(size_t set, uint32_t i, uint64_t fresh_seed) {
  BufferSet& s = *sets_[set];
  if (auto f = draw_inputs(job_, s, fresh_seed)) return f;
  CUresult cr = prep(s);
  if (cr == CUDA_SUCCESS) cr = cu().cuEventRecord(starts_[i]->get(), stream());
  if (cr != CUDA_SUCCESS) return fail(cr, "preparing timed run " + std::to_string(i), "CRASH");
  bool pushed = false;
  if (tracer_ != nullptr) {
    if (Status st = tracer_->push(first_external_ + i); st) {
      pushed = true;
    } else {
      cupti_reason_ = st.message();
      tracer_ = nullptr;
    }
  }
  std::optional<Failure> launched = run_candidate(job_, s);
  if (pushed) {
    if (Status st = tracer_->pop(first_external_ + i); !st) {
      cupti_reason_ = st.message();
      tracer_ = nullptr;
    }
  }
  if (launched) return launched;
  cr = cu().cuEventRecord(stops_[i]->get(), stream());
  if (cr != CUDA_SUCCESS) return fail(cr, "cuEventRecord", "CRASH");
  return std::nullopt;
}

Step CudaWorkload::end_timing(Timing* t) {
  t->method = "cuda_events";
  CUresult cr = cu().cuStreamSynchronize(stream());
  if (cr != CUDA_SUCCESS) return fail(cr, "the candidate failed in a timed run", "CRASH");
  // Clocks, temperature, power and throttling before and after the timed runs, and whether
  // the GPU throttled in between (base/throttle.h).
  const Details after = cuda::read_clocks(sess_->info().pci_bus_id);
  for (const auto& [k, v] : clocks_before_) t->details.emplace_back(throttle::kBeforePrefix + k, v);
  for (const auto& [k, v] : after) t->details.emplace_back(throttle::kAfterPrefix + k, v);
  t->details.emplace_back(throttle::kDetailKey, throttle::verdict(clocks_before_, after));
  std::vector<double> event_samples;
  for (uint32_t i = 0; i < req_.repetitions; ++i) {
    float ms = 0;
    cr = cu().cuEventElapsedTime(&ms, starts_[i]->get(), stops_[i]->get());
    if (cr != CUDA_SUCCESS) return fail(cr, "cuEventElapsedTime", "CRASH");
    event_samples.push_back(static_cast<double>(ms) * 1e6);
  }
  t->samples_ns = event_samples;
  if (tracer_ != nullptr) {
    // Everything CUPTI delivered since the last timing: this timing's repetitions, and the
    // correctness rounds, warm-ups and the worker's own kernels, which attribution ignores.
    auto records = tracer_->collect();
    if (!records) {
      cupti_reason_ = records.status().message();
    } else {
      cuda::RepetitionSpans spans =
          cuda::repetition_spans(*records, first_external_, req_.repetitions);
      if (spans.usable) {
        t->samples_ns = std::move(spans.spans_ns);
        t->method = "cupti_activity";
        t->details.emplace_back("cuda_events_median_ns",
                                format_number(arc::median(event_samples), 6));
        t->details.emplace_back("timed_kernels", cuda::describe_activities(spans.names));
      } else {
        cupti_reason_ = "CUPTI activity records unusable: " + spans.reason;
      }
    }
  }
  if (t->method != "cupti_activity") {
    if (req_.timing == "cupti") return cupti_required(cupti_reason_);
    t->details.emplace_back("timing_method_reason", cupti_reason_);
  }
  return std::nullopt;
}

// The inputs as the candidate left them, then drawn again from the last run's seed: any
// difference is a write to an input.
Step CudaWorkload::recheck_inputs(size_t set, uint64_t seed, uint32_t set_number) {
  std::vector<uint64_t> left;
  if (auto f = digest_inputs(job_, *sets_[set], &left)) return f;
  if (auto f = prepare(job_, *sets_[set], seed)) return f;
  for (size_t i = 0; i < left.size(); ++i) {
    if (left[i] != sets_[set]->digests[i]) {
      return Failure{"WRONG_RESULT",
                     "the candidate wrote to its input " + job_.inputs[i].name +
                         " (inputs are read-only; only an output with alias may update one) "
                         "during timing (buffer set " +
                         std::to_string(set_number) + ")"};
    }
  }
  return std::nullopt;
}

class CudaDevice : public Device {
 public:
  CudaDevice(const std::string& cache_dir, int ordinal) : sess_(cache_dir, ordinal) {}

  Status start() override { return sess_.start(); }
  void describe(json* ready) const override { sess_.describe(ready); }
  json peaks() override { return sess_.peaks(); }

  void load_request(const json& request, const EvaluateSettings& settings) override {
    req_ = cuda_worker::parse_request(request, settings);
    // Long campaigns: keep the loaded cubins bounded, before this request binds any of them.
    sess_.release_modules(256);
    if (cuda::ActivityTracer* tracer = sess_.tracer()) {
      // timing = "cuda_events" keeps CUPTI's kernel instrumentation out of the measurement.
      Status st = tracer->set_enabled(req_.timing != "cuda_events");
      sess_.cupti_enable_error = st ? "" : st.message();
      // Drop what earlier requests left (peaks, candidates that failed before timing), so the
      // records held never exceed one request's.
      (void)tracer->collect();
    }
  }

  // Binds the reference and the candidate: kernels looked up in their cubins (kept loaded), or
  // the cuBLASLt plan of a library family.
  std::unique_ptr<BoundWorkload> bind(size_t position, Failure* failure,
                                      Details* details) override {
    const WorkloadJob& job = req_.workloads[position];
    auto ref_fns = sess_.functions(job.reference_module, "the reference", job.reference_launches);
    if (!ref_fns) {
      *failure = {"LOAD_ERROR", "the reference (not the candidate): " + ref_fns.status().message()};
      return nullptr;
    }
    Bound bound;
    WorkloadJob effective = job;
    if (job.library) {
      if (Status lt = sess_.ensure_lt(); !lt) {
        *failure = {"LOAD_ERROR", lt.message()};
        return nullptr;
      }
      auto plan = sess_.plan(job.gemm);
      if (!plan) {
        *failure = {"LOAD_ERROR", "cuBLASLt refused " + job.gemm.variant + " for " + job.name +
                                      ": " + plan.status().message()};
        return nullptr;
      }
      bound.plan = *plan;
      effective.workspace = bound.plan->workspace_bytes();
      details->emplace_back("library", sess_.lt()->version());
      details->emplace_back("plan", bound.plan->description());
    } else {
      auto fns = sess_.functions(job.module, "the candidate's cubin " + job.module, job.launches);
      if (!fns) {
        *failure = {"LOAD_ERROR", fns.status().message()};
        return nullptr;
      }
      bound.fns = std::move(*fns);
      std::string launches;
      for (const auto& l : job.launches) {
        if (!launches.empty()) launches += "; ";
        launches += l.kernel + " <<<" + std::to_string(l.grid[0]) + "x" +
                    std::to_string(l.grid[1]) + "x" + std::to_string(l.grid[2]) + ", " +
                    std::to_string(l.block[0]) + "x" + std::to_string(l.block[1]) + "x" +
                    std::to_string(l.block[2]) + ", " + std::to_string(l.shared) + ">>>";
      }
      details->emplace_back("launches", launches);
    }
    return std::make_unique<CudaWorkload>(&sess_, req_, std::move(effective), std::move(bound),
                                          std::move(*ref_fns));
  }

  bool tainted() const override { return sess_.tainted(); }
  std::string method() const override { return "cuda_events"; }

 private:
  CudaSession sess_;
  Request req_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const std::string& cache_dir, int ordinal) {
  return std::make_unique<CudaDevice>(cache_dir, ordinal);
}

}  // namespace arc::eval
