// The host backend (eval/worker.h): candidates are shared objects called in a child process of
// the worker (eval/host_runner.h), on float buffers in shared memory, against a double reference
// computed in the worker. The protocol is eval/measure.h's.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <thread>

#include <dlfcn.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/throttle.h"
#include "eval/device.h"
#include "eval/host_abi.h"
#include "eval/host_runner.h"
#include "eval/protocol.h"
#include "eval/worker.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Memory. The tensors the candidate works on live in the runner's shared arena; everything else
// (the reference's inputs and outputs, the flush buffer) is the worker's own, mapped so that no
// runner forked later inherits it (MADV_DONTFORK): a runner's address space holds no answer,
// not even of an earlier workload.

template <class T>
class PrivateBuffer {
 public:
  explicit PrivateBuffer(size_t n) : n_(n) {
    if (n > (std::numeric_limits<size_t>::max() - 8192) / sizeof(T)) throw std::bad_alloc();
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    bytes_ = (std::max<size_t>(n * sizeof(T), 1) + page - 1) / page * page;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes_, MADV_DONTFORK);
    p_ = static_cast<T*>(p);
  }
  PrivateBuffer(PrivateBuffer&& o) noexcept : p_(o.p_), n_(o.n_), bytes_(o.bytes_) {
    o.p_ = nullptr;
  }
  PrivateBuffer& operator=(PrivateBuffer&&) = delete;
  PrivateBuffer(const PrivateBuffer&) = delete;
  PrivateBuffer& operator=(const PrivateBuffer&) = delete;
  ~PrivateBuffer() {
    if (p_ != nullptr) ::munmap(p_, bytes_);
  }
  T* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, bytes_ = 0;
};

// A float tensor in the shared arena, with room to move (set_offset).
class SharedTensor {
 public:
  SharedTensor(float* base, size_t n, size_t capacity) : base_(base), n_(n), capacity_(capacity) {}
  float* data() const { return base_ + offset_; }
  size_t size() const { return n_; }
  // Moves where data() points, keeping the contents when `keep`; offset + size <= capacity.
  void set_offset(size_t offset, bool keep) {
    if (offset + n_ > capacity_) offset = 0;
    if (keep) std::memmove(base_ + offset, base_ + offset_, n_ * sizeof(float));
    offset_ = offset;
  }

 private:
  float* base_;
  size_t n_, capacity_;
  size_t offset_ = 0;
};

struct TensorDesc {
  std::string name;
  int64_t elements = 0;
  std::string init = "uniform";
  double low = -1.0, high = 1.0;
};

struct WorkloadJob {
  std::string name;
  uint64_t index = 0;
  std::string object;
  std::vector<int64_t> axes;
  double flops = 0, bytes = 0;
  std::vector<TensorDesc> inputs, outputs;
};

struct Request : EvaluateSettings {
  std::string reference;
  double timeout_s = 0;  // the evaluation's timeout (0: not given): the runner's CPU limit
  std::vector<WorkloadJob> workloads;
};

Request parse_request(const json& j) {  // throws json::exception on a malformed request
  Request r;
  static_cast<EvaluateSettings&>(r) = parse_evaluate_settings(j);
  r.reference = j.at("reference").get<std::string>();
  r.timeout_s = j.value("timeout_s", 0.0);
  for (const json& w : j.at("workloads")) {
    WorkloadJob job;
    job.name = w.at("name").get<std::string>();
    job.index = w.at("index").get<uint64_t>();
    job.object = w.at("object").get<std::string>();
    job.axes = w.at("axes").get<std::vector<int64_t>>();
    job.flops = w.value("flops", 0.0);
    job.bytes = w.value("bytes", 0.0);
    for (const json& t : w.at("inputs")) {
      TensorDesc d;
      d.name = t.at("name").get<std::string>();
      d.elements = t.at("elements").get<int64_t>();
      d.init = t.value("init", d.init);
      d.low = t.value("low", d.low);
      d.high = t.value("high", d.high);
      job.inputs.push_back(std::move(d));
    }
    for (const json& t : w.at("outputs")) {
      TensorDesc d;
      d.name = t.at("name").get<std::string>();
      d.elements = t.at("elements").get<int64_t>();
      job.outputs.push_back(std::move(d));
    }
    r.workloads.push_back(std::move(job));
  }
  return r;
}

size_t elements_of(const TensorDesc& t) {
  return t.elements > 0 ? static_cast<size_t>(t.elements) : 0;
}

// Where a workload's buffer sets lie in the runner's arena: set after set, each its inputs then
// its outputs, every tensor with room to move kMoveStep floats per use.
struct ArenaLayout {
  static constexpr size_t kMoveStep = 16;  // floats: 64 bytes, keeps the alignment
  size_t sets = 0;                         // the correctness set and the timing sets
  size_t moves = 0;                        // the most uses of one set
  std::vector<size_t> capacity;            // floats, per tensor (inputs, then outputs)
  size_t set_floats = 0;

  ArenaLayout(const WorkloadJob& job, const EvaluateSettings& settings) {
    sets = 1 + std::max<size_t>(settings.buffer_sets, 1);
    // Every warm-up and timed run on one set: more than measure_workload() asks for.
    moves = static_cast<size_t>(settings.warmup) + settings.repetitions + 1;
    const size_t slack = kMoveStep * moves;
    auto add = [this, slack](const TensorDesc& t) {
      const size_t n = elements_of(t);
      if (n > std::numeric_limits<size_t>::max() / 8 - slack - 16) throw std::bad_alloc();
      const size_t c = (n + slack + 15) / 16 * 16;
      capacity.push_back(c);
      if (set_floats > std::numeric_limits<size_t>::max() / 8 - c) throw std::bad_alloc();
      set_floats += c;
    };
    for (const auto& t : job.inputs) add(t);
    for (const auto& t : job.outputs) add(t);
  }
  size_t bytes() const {
    if (set_floats > std::numeric_limits<size_t>::max() / sizeof(float) / sets) {
      throw std::bad_alloc();
    }
    return sets * set_floats * sizeof(float);
  }
  float* set_base(unsigned char* arena, size_t set) const {
    return reinterpret_cast<float*>(arena) + set * set_floats;
  }
};

// One complete set of arguments: float tensors for the kernel (shared with the runner), double
// copies of the same values for the reference, and the reference's outputs (the worker's own).
struct BufferSet {
  std::vector<SharedTensor> in, out;
  std::vector<PrivateBuffer<double>> ref_in, ref_out;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  std::vector<const double*> ref_in_ptrs;
  std::vector<double*> ref_out_ptrs;
  arc_host_args args{};
  arc_host_ref_args ref_args{};

  BufferSet(const WorkloadJob& job, const ArenaLayout& layout, float* base) {
    size_t t = 0;
    for (const auto& d : job.inputs) {
      in.emplace_back(base, elements_of(d), layout.capacity[t]);
      base += layout.capacity[t++];
      ref_in.emplace_back(elements_of(d));
    }
    for (const auto& d : job.outputs) {
      out.emplace_back(base, elements_of(d), layout.capacity[t]);
      base += layout.capacity[t++];
      ref_out.emplace_back(elements_of(d));
    }
    for (auto& b : in) in_ptrs.push_back(b.data());
    for (auto& b : out) out_ptrs.push_back(b.data());
    for (auto& b : ref_in) ref_in_ptrs.push_back(b.data());
    for (auto& b : ref_out) ref_out_ptrs.push_back(b.data());
    args = {in_ptrs.data(),  static_cast<int32_t>(in_ptrs.size()),
            out_ptrs.data(), static_cast<int32_t>(out_ptrs.size()),
            job.axes.data(), static_cast<int32_t>(job.axes.size())};
    ref_args = {ref_in_ptrs.data(),  static_cast<int32_t>(ref_in_ptrs.size()),
                ref_out_ptrs.data(), static_cast<int32_t>(ref_out_ptrs.size()),
                job.axes.data(),     static_cast<int32_t>(job.axes.size())};
  }

  // The `use`-th placement: inputs moved (values kept) and outputs placed kMoveStep * use
  // elements into their room, so no two uses of a set share an address (a cache keyed by where
  // the inputs are never hits).
  void move(size_t use) {
    for (size_t t = 0; t < in.size(); ++t) {
      in[t].set_offset(ArenaLayout::kMoveStep * use, true);
      in_ptrs[t] = in[t].data();
    }
    for (size_t t = 0; t < out.size(); ++t) {
      out[t].set_offset(ArenaLayout::kMoveStep * use, false);
      out_ptrs[t] = out[t].data();
    }
  }

  void fill(const WorkloadJob& job, uint64_t seed) {
    Xoshiro256 rng(seed);
    for (size_t t = 0; t < job.inputs.size(); ++t) {
      const TensorDesc& d = job.inputs[t];
      float* x = in[t].data();
      double* xr = ref_in[t].data();
      const bool normal = d.init == "normal";
      for (size_t i = 0; i < in[t].size(); ++i) {
        double v;
        if (normal) {
          double s = 0;
          for (int k = 0; k < 12; ++k) s += rng.uniform();
          v = (s - 6.0) * d.high;
        } else {
          v = d.low + (d.high - d.low) * rng.uniform();
        }
        x[i] = static_cast<float>(v);
        xr[i] = static_cast<double>(x[i]);  // the reference sees exactly the kernel's inputs
      }
    }
  }

  void poison_outputs() {
    for (auto& b : out) std::fill_n(b.data(), b.size(), std::numeric_limits<float>::quiet_NaN());
  }
  // Inputs are read-only: "" while every input still holds what fill() wrote (the reference's
  // copy, bit for bit), else which element of which input changed.
  std::string inputs_changed(const WorkloadJob& job) const {
    for (size_t t = 0; t < in.size(); ++t) {
      const float* x = in[t].data();
      const double* xr = ref_in[t].data();
      for (size_t i = 0; i < in[t].size(); ++i) {
        const float want = static_cast<float>(xr[i]);
        // Bits, not values: a NaN the candidate wrote over a NaN input is still a write.
        // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
        if (std::memcmp(&x[i], &want, sizeof(float)) != 0) {
          return "arc_kernel wrote to its input " + job.inputs[t].name + " (element " +
                 std::to_string(i) + "); inputs are read-only";
        }
      }
    }
    return "";
  }
  void poison_reference() {
    for (auto& b : ref_out) {
      std::fill_n(b.data(), b.size(), std::numeric_limits<double>::quiet_NaN());
    }
  }
};

struct Tolerance {
  double atol, rtol, matched_ratio;
};

std::string fmt_double(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string fmt_short(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

Comparison compare(const WorkloadJob& job, const BufferSet& s, const Tolerance& tol) {
  Comparison c;
  size_t total = 0, matched = 0;
  double worst = -1;
  std::string worst_where;
  for (size_t t = 0; t < job.outputs.size(); ++t) {
    const std::string& name = job.outputs[t].name;
    const float* y = s.out[t].data();
    const double* r = s.ref_out[t].data();
    const size_t n = s.out[t].size();
    bool y_all_zero = true, r_all_zero = true;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(r[i])) {
        c.pass = false;
        c.error = "the reference (not the candidate) produced " + fmt_double(r[i]) + " at " + name +
                  "[" + std::to_string(i) + "]";
        return c;
      }
      const double yi = y[i];
      if (std::isnan(yi)) {
        c.pass = false;
        c.error = name + "[" + std::to_string(i) +
                  "] is NaN (outputs are poisoned with NaN before every run: an element not "
                  "written, or a NaN computed)";
        c.max_abs_error = std::numeric_limits<double>::infinity();
        c.matched_ratio = 0;
        return c;
      }
      if (std::isinf(yi)) {
        c.pass = false;
        c.error = name + "[" + std::to_string(i) + "] is " + fmt_double(yi);
        c.max_abs_error = std::numeric_limits<double>::infinity();
        c.matched_ratio = 0;
        return c;
      }
      if (yi != 0) y_all_zero = false;
      if (r[i] != 0) r_all_zero = false;
      const double err = std::fabs(yi - r[i]);
      if (err <= tol.atol + tol.rtol * std::fabs(r[i])) ++matched;
      if (err > worst) {
        worst = err;
        worst_where = name + "[" + std::to_string(i) + "]: got " + fmt_double(yi) + ", expected " +
                      fmt_double(r[i]);
      }
    }
    total += n;
    if (n > 0 && y_all_zero && !r_all_zero) {
      c.pass = false;
      c.error = "output " + name + " is all zeros but the reference is not";
      c.max_abs_error = std::max(worst, 0.0);
      c.matched_ratio =
          total == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(total);
      return c;
    }
  }
  c.max_abs_error = std::max(worst, 0.0);
  c.matched_ratio = total == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(total);
  if (c.matched_ratio < tol.matched_ratio) {
    c.pass = false;
    c.error = std::to_string(matched) + " of " + std::to_string(total) + " elements (" +
              fmt_short(100.0 * c.matched_ratio) + "%) within atol " + fmt_short(tol.atol) +
              " + rtol " + fmt_short(tol.rtol) + " * |ref| (required " +
              fmt_short(100.0 * tol.matched_ratio) + "%); worst " + worst_where;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// The reference (trusted, loaded in the worker) and the cache flush.

class Library {
 public:
  Library() = default;
  explicit Library(void* h) : h_(h) {}
  Library(Library&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Library& operator=(Library&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (h_ != nullptr) ::dlclose(h_);
  }
  void* get() const { return h_; }

 private:
  void* h_ = nullptr;
};

size_t flush_bytes() {
  long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  size_t size = llc > 0 ? static_cast<size_t>(llc) : (size_t{32} << 20);
  return std::min(2 * size, size_t{64} << 20);
}

// What a host device keeps across workloads and requests.
struct HostState {
  uint64_t memory_limit_mb = 0;
  std::map<std::string, Library> references;  // trusted: kept loaded across requests
  std::unique_ptr<PrivateBuffer<unsigned char>> flush;
  unsigned flush_round = 0;

  // Written by the worker while the runner is blocked: the lines the runner's core held of the
  // tensors were invalidated when the worker wrote their new values, and the rest leave the
  // last-level cache here.
  void flush_cache() {
    if (!flush) flush = std::make_unique<PrivateBuffer<unsigned char>>(flush_bytes());
    unsigned char* p = flush->data();
    const size_t n = flush->size();
    const auto v = static_cast<unsigned char>(++flush_round);
    for (size_t i = 0; i < n; i += 64) p[i] = v;  // one store per line: allocates every line
    asm volatile("" : : "r"(p) : "memory");
  }
};

void* load(const std::string& path, std::map<std::string, Library>& cache, std::string* error) {
  auto it = cache.find(path);
  if (it != cache.end()) return it->second.get();
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    *error = std::string("dlopen failed: ") + (e != nullptr ? e : path.c_str());
    return nullptr;
  }
  cache.emplace(path, Library(h));
  return h;
}

// One workload: its runner (the candidate loaded in a child process), the buffer sets in the
// runner's arena, and everything else in this process.
class HostWorkload : public BoundWorkload {
 public:
  HostWorkload(HostState* state, const Request& req, const WorkloadJob& job, arc_reference_fn ref,
               std::unique_ptr<Runner> runner, ArenaLayout layout)
      : st_(state),
        req_(req),
        job_(job),
        ref_(ref),
        runner_(std::move(runner)),
        layout_(std::move(layout)) {}

  Step allocate(size_t set, size_t uses) override {
    if (set >= layout_.sets || uses > layout_.moves) {
      return Failure{"CRASH", "the worker laid out " + std::to_string(layout_.sets) +
                                  " buffer sets of " + std::to_string(layout_.moves) +
                                  " uses; asked for set " + std::to_string(set) + " of " +
                                  std::to_string(uses) + " uses"};
    }
    if (sets_.size() <= set) sets_.resize(set + 1);
    sets_[set] =
        std::make_unique<BufferSet>(job_, layout_, layout_.set_base(runner_->arena(), set));
    used_.resize(sets_.size(), 0);
    return std::nullopt;
  }
  // The correctness set stays where it is through timing, so timing's buffers never reuse its
  // addresses.
  void release(size_t) override {}

  // The reference is not computed here: while candidate code runs, no answer for the inputs it
  // is given exists anywhere (reference() computes it after the run, in this process).
  Step prepare(size_t set, uint64_t seed) override {
    BufferSet& s = *sets_[set];
    s.fill(job_, seed);
    s.poison_reference();
    s.poison_outputs();
    return std::nullopt;
  }

  Step run(size_t set, const std::string& when) override {
    BufferSet& s = *sets_[set];
    s.poison_outputs();
    return runner_->call(s.args, when, nullptr);
  }

  Step check_inputs(size_t set, const std::string& when) override {
    if (std::string w = sets_[set]->inputs_changed(job_); !w.empty()) {
      return Failure{"WRONG_RESULT", w + " " + when};
    }
    return std::nullopt;
  }

  // After the candidate ran on these inputs (and check_inputs found them intact), on this
  // process's own copy of them.
  Step reference(size_t set) override {
    BufferSet& s = *sets_[set];
    if (int rc = ref_(&s.ref_args); rc != 0) {
      return Failure{"WRONG_RESULT",
                     "the reference (not the candidate) returned " + std::to_string(rc)};
    }
    return std::nullopt;
  }

  Step compare(size_t set, Comparison* result) override {
    *result = eval::compare(job_, *sets_[set], Tolerance{req_.atol, req_.rtol, req_.matched_ratio});
    return std::nullopt;
  }

  Step begin_timing() override { return std::nullopt; }

  Step warmup(size_t set, uint32_t i) override {
    return runner_->call(place(set).args, "in warm-up run " + std::to_string(i), nullptr);
  }
  Step end_warmup() override { return std::nullopt; }

  // Every timed run gets inputs of its own (drawn outside the timed region), so a cache keyed
  // on input contents, whole or sampled, never hits; its output is re-checked at the set's
  // last use (Recheck::kLastUseOfSet).
  Step timed(size_t set, uint32_t i, uint64_t fresh_seed) override {
    BufferSet& t = place(set);
    t.fill(job_, fresh_seed);
    t.poison_reference();
    t.poison_outputs();
    if (req_.flush_cache) st_->flush_cache();
    double ns = 0;
    if (auto f = runner_->call(t.args, "in timed run " + std::to_string(i), &ns)) return f;
    samples_.push_back(ns);
    return std::nullopt;
  }
  Step end_timing(Timing* timing) override {
    timing->samples_ns = std::move(samples_);
    timing->method = "steady_clock";
    // Said, not left out, so that no reader takes a host measurement for an unthrottled one.
    timing->details.emplace_back(throttle::kDetailKey,
                                 throttle::unknown("the host backend has no NVML"));
    return std::nullopt;
  }
  Recheck recheck() const override { return Recheck::kLastUseOfSet; }
  // The set still holds the last timed run's inputs as drawn (this process's copy): any change
  // is a write to an input during timing. reference() then computes the answer for them.
  Step recheck_inputs(size_t set, uint64_t, uint32_t set_number) override {
    if (std::string w = sets_[set]->inputs_changed(job_); !w.empty()) {
      return Failure{"WRONG_RESULT",
                     w + " during timing (buffer set " + std::to_string(set_number) + ")"};
    }
    return std::nullopt;
  }

 private:
  // Every use of a timing set places its tensors at a new address.
  BufferSet& place(size_t set) {
    sets_[set]->move(used_[set]++);
    return *sets_[set];
  }

  HostState* st_;
  const Request& req_;
  const WorkloadJob& job_;
  arc_reference_fn ref_;
  std::unique_ptr<Runner> runner_;
  ArenaLayout layout_;
  std::vector<std::unique_ptr<BufferSet>> sets_;
  std::vector<size_t> used_;
  std::vector<double> samples_;
};

class HostDevice : public Device {
 public:
  explicit HostDevice(uint64_t memory_limit_mb) { st_.memory_limit_mb = memory_limit_mb; }

  // Candidate code never runs in this process: each workload's runner (eval/host_runner.h),
  // forked before it loads anything, confines itself first. This process is made undumpable
  // (no runner may ptrace it or open its /proc/PID/mem), and a worker whose runners could not
  // confine themselves is unavailable rather than unconfined.
  Status start() override {
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
      return Status::unavailable("cannot make the worker undumpable: " +
                                 std::string(std::strerror(errno)));
    }
    return probe_candidate_confinement();
  }

  void describe(json* ready) const override { (*ready)["memory_limit_mb"] = st_.memory_limit_mb; }

  json peaks() override {
    Peaks p = measure_peaks();
    return {{"op", "peaks"},
            {"bandwidth_bytes_per_s", p.bandwidth_bytes_per_s},
            {"flops_per_s", p.flops_per_s},
            {"method", p.method}};
  }

  void load_request(const json& request, const EvaluateSettings&) override {
    req_ = parse_request(request);
  }

  std::unique_ptr<BoundWorkload> bind(size_t position, Failure* failure, Details*) override {
    const WorkloadJob& job = req_.workloads[position];
    std::string error;
    void* ref_handle = load(req_.reference, st_.references, &error);
    if (ref_handle == nullptr) {
      *failure = {"LOAD_ERROR", "reference " + req_.reference + ": " + error};
      return nullptr;
    }
    auto ref = reinterpret_cast<arc_reference_fn>(::dlsym(ref_handle, "arc_reference"));
    if (ref == nullptr) {
      *failure = {"LOAD_ERROR", "reference " + req_.reference + " has no arc_reference"};
      return nullptr;
    }
    ArenaLayout layout(job, req_);
    RunnerSetup setup;
    setup.object = job.object;
    setup.arena_bytes = layout.bytes();
    setup.max_inputs = job.inputs.size();
    setup.max_outputs = job.outputs.size();
    setup.max_axes = job.axes.size();
    setup.memory_limit_mb = st_.memory_limit_mb;
    setup.cpu_limit_s = cpu_limit_s(req_.timeout_s);
    std::unique_ptr<Runner> runner = Runner::start(setup, failure);  // bad_alloc: OUT_OF_MEMORY
    if (runner == nullptr) return nullptr;
    return std::make_unique<HostWorkload>(&st_, req_, job, ref, std::move(runner),
                                          std::move(layout));
  }

  std::string memory_limit_note() const override {
    return " within the memory limit of " + std::to_string(st_.memory_limit_mb) + " MiB";
  }
  // Nothing a candidate does reaches this process: a runner that misbehaved is discarded, and
  // the worker goes on.
  bool tainted() const override { return false; }
  std::string method() const override { return "steady_clock"; }

 private:
  // The runner's CPU-time backstop (the parent's timeout fires first): the evaluation's timeout
  // on every hardware thread, plus a margin; 10 minutes of it when the request gives none.
  static uint64_t cpu_limit_s(double timeout_s) {
    const double threads = std::max(1u, std::thread::hardware_concurrency());
    const double t = timeout_s > 0 && std::isfinite(timeout_s) ? timeout_s : 600.0;
    return static_cast<uint64_t>(std::min(std::ceil(t * threads) + 10, 1e7));
  }

  HostState st_;
  Request req_;
};

}  // namespace

std::unique_ptr<Device> make_host_device(uint64_t memory_limit_mb) {
  return std::make_unique<HostDevice>(memory_limit_mb);
}

}  // namespace arc::eval
