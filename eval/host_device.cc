// The host backend (eval/worker.h): candidates are shared objects called in the worker's own
// process, on float buffers, against a double reference. The protocol is eval/measure.h's.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>

#include <dirent.h>
#include <dlfcn.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include "base/rng.h"
#include "eval/candidate_confinement.h"
#include "eval/device.h"
#include "eval/host_abi.h"
#include "eval/protocol.h"
#include "eval/worker.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Buffers: 64-byte aligned, separately allocated (so buffer sets have distinct addresses).

// Set once a candidate has left a thread running: that thread may still touch any tensor, so
// from then on no buffer is freed or unmapped and no candidate library closed (the worker exits
// right after its reply).
std::atomic<bool> g_buffers_pinned{false};

struct FreeDeleter {
  void operator()(void* p) const {
    if (!g_buffers_pinned.load()) std::free(p);
  }
};

template <class T>
class Buffer {
 public:
  // n elements, and room for `slack` more, so that the tensor can move (set_offset).
  explicit Buffer(size_t n, size_t slack = 0) : n_(n), capacity_(n + slack) {
    if (n > (std::numeric_limits<size_t>::max() - 128) / sizeof(T) - slack) {
      throw std::bad_alloc();
    }
    n = capacity_;
    size_t bytes = std::max<size_t>(n * sizeof(T), 64);
    bytes = (bytes + 63) / 64 * 64;
    p_.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
    if (!p_) throw std::bad_alloc();
  }
  T* data() const { return p_.get() + offset_; }
  size_t size() const { return n_; }
  // Moves where data() points, keeping the contents when `keep`; offset + size <= capacity.
  void set_offset(size_t offset, bool keep) {
    if (keep) std::memmove(p_.get() + offset, p_.get() + offset_, n_ * sizeof(T));
    offset_ = offset;
  }
  size_t slack() const { return capacity_ - n_; }

 private:
  std::unique_ptr<T, FreeDeleter> p_;
  size_t n_, capacity_;
  size_t offset_ = 0;
};

// The reference's outputs live in pages of their own, mapped PROT_NONE (sealed) while candidate
// code runs: a candidate that hunts through its address space for the answer finds no readable
// copy of it (a read is SIGSEGV).
class SealableBuffer {
 public:
  explicit SealableBuffer(size_t n) : n_(n) {
    if (n > (std::numeric_limits<size_t>::max() - 8192) / sizeof(double)) throw std::bad_alloc();
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    bytes_ = (std::max<size_t>(n * sizeof(double), 1) + page - 1) / page * page;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    p_ = static_cast<double*>(p);
  }
  SealableBuffer(SealableBuffer&& o) noexcept : p_(o.p_), n_(o.n_), bytes_(o.bytes_) {
    o.p_ = nullptr;
  }
  SealableBuffer& operator=(SealableBuffer&&) = delete;
  SealableBuffer(const SealableBuffer&) = delete;
  SealableBuffer& operator=(const SealableBuffer&) = delete;
  ~SealableBuffer() {
    if (p_ != nullptr && !g_buffers_pinned.load()) ::munmap(p_, bytes_);
  }
  double* data() const { return p_; }
  size_t size() const { return n_; }
  void seal(bool sealed) const {
    if (p_ != nullptr) ::mprotect(p_, bytes_, sealed ? PROT_NONE : PROT_READ | PROT_WRITE);
  }

 private:
  double* p_ = nullptr;
  size_t n_ = 0, bytes_ = 0;
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
  std::vector<WorkloadJob> workloads;
};

Request parse_request(const json& j) {  // throws json::exception on a malformed request
  Request r;
  static_cast<EvaluateSettings&>(r) = parse_evaluate_settings(j);
  r.reference = j.at("reference").get<std::string>();
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

// One complete set of arguments: float tensors for the kernel, double copies of the same values
// for the reference, and the reference's outputs.
struct BufferSet {
  std::vector<Buffer<float>> in, out;
  std::vector<Buffer<double>> ref_in;
  std::vector<SealableBuffer> ref_out;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  std::vector<const double*> ref_in_ptrs;
  std::vector<double*> ref_out_ptrs;
  arc_host_args args{};
  arc_host_ref_args ref_args{};

  // `moves`: how many times move() may place the tensors at a new address.
  explicit BufferSet(const WorkloadJob& job, size_t moves = 0) {
    const size_t slack = kMoveStep * moves;
    for (const auto& t : job.inputs) {
      in.emplace_back(elements_of(t), slack);
      ref_in.emplace_back(elements_of(t));
    }
    for (const auto& t : job.outputs) {
      out.emplace_back(elements_of(t), slack);
      ref_out.emplace_back(elements_of(t));
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
  BufferSet(BufferSet&&) = default;
  ~BufferSet() { seal_reference(false); }

  // The `use`-th placement (use <= moves): inputs moved (values kept) and outputs placed
  // kMoveStep * use elements into their allocations, so no two uses of a set share an address
  // (a cache keyed by where the inputs are never hits).
  void move(size_t use) {
    for (size_t t = 0; t < in.size(); ++t) {
      in[t].set_offset(kMoveStep * use, true);
      in_ptrs[t] = in[t].data();
    }
    for (size_t t = 0; t < out.size(); ++t) {
      out[t].set_offset(kMoveStep * use, false);
      out_ptrs[t] = out[t].data();
    }
  }
  void seal_reference(bool sealed) const {
    for (const auto& b : ref_out) b.seal(sealed);
  }

  static constexpr size_t kMoveStep = 16;  // floats: 64 bytes, keeps the alignment

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
// Calling candidate code.

struct CallResult {
  enum Kind { kReturned, kBadAlloc, kThrew } kind = kReturned;
  int rc = 0;
  std::string what;
};

__attribute__((noinline)) CallResult call_kernel(arc_kernel_fn fn, const arc_host_args* args) {
  CallResult r;
  try {
    r.rc = fn(args);
  } catch (const std::bad_alloc&) {
    r.kind = CallResult::kBadAlloc;
  } catch (const std::exception& e) {
    r.kind = CallResult::kThrew;
    r.what = e.what();
  } catch (...) {
    r.kind = CallResult::kThrew;
    r.what = "a non-std exception";
  }
  return r;
}

int count_threads() {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

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
  // Kept mapped once a candidate left a thread running: that thread may still execute the
  // library's code, and unmapping it would turn the verdict into a crash.
  ~Library() {
    if (h_ != nullptr && !g_buffers_pinned.load()) ::dlclose(h_);
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

// Maps a failed call to a failure (nothing when the call succeeded).
Step check_call(const CallResult& r, const std::string& when, uint64_t memory_limit_mb,
                bool* tainted) {
  if (r.kind == CallResult::kBadAlloc) {
    *tainted = true;  // what it allocated before failing is still held
    return Failure{"OUT_OF_MEMORY", "arc_kernel threw std::bad_alloc " + when + " (memory limit " +
                                        std::to_string(memory_limit_mb) + " MiB)"};
  }
  if (r.kind == CallResult::kThrew) {
    return Failure{"CRASH", "arc_kernel threw an exception " + when + ": " + r.what};
  }
  if (r.rc != 0) {
    return Failure{"WRONG_RESULT", "arc_kernel returned " + std::to_string(r.rc) + " " + when +
                                       " (a non-zero return means failure)"};
  }
  return std::nullopt;
}

// What a host device keeps across workloads and requests.
struct HostState {
  uint64_t memory_limit_mb = 0;
  bool tainted = false;
  std::map<std::string, Library> references;  // trusted: kept loaded across requests
  std::map<std::string, Library> objects;     // a gated candidate shares objects across
                                              // the workloads of one request
  std::unique_ptr<Buffer<unsigned char>> flush;
  unsigned flush_round = 0;

  void flush_cache() {
    if (!flush) flush = std::make_unique<Buffer<unsigned char>>(flush_bytes());
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

class HostWorkload : public BoundWorkload {
 public:
  HostWorkload(HostState* state, const Request& req, const WorkloadJob& job, arc_kernel_fn fn,
               arc_reference_fn ref)
      : st_(state), req_(req), job_(job), fn_(fn), ref_(ref), threads_before_(count_threads()) {}

  Step allocate(size_t set, size_t uses) override {
    if (sets_.size() <= set) sets_.resize(set + 1);
    // The correctness set never moves; a timing set moves at every use.
    sets_[set] = std::make_unique<BufferSet>(job_, set == kCorrectnessSet ? 0 : uses);
    if (set != kCorrectnessSet) used_.resize(sets_.size(), 0);
    return std::nullopt;
  }
  // The correctness set stays allocated through timing, so timing's buffers never reuse its
  // addresses.
  void release(size_t) override {}

  // The reference is not computed here: while candidate code runs, no answer for the inputs it
  // is given exists anywhere (reference() computes it after the run).
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
    return call(&s, when, nullptr);
  }

  Step check_inputs(size_t set, const std::string& when) override {
    if (std::string w = sets_[set]->inputs_changed(job_); !w.empty()) {
      return Failure{"WRONG_RESULT", w + " " + when};
    }
    return std::nullopt;
  }

  // After the candidate ran on these inputs (and check_inputs found them intact); sealed while
  // candidate code runs.
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
    return call(&place(set), "in warm-up run " + std::to_string(i), nullptr);
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
    if (auto f = call(&t, "in timed run " + std::to_string(i), &ns)) return f;
    samples_.push_back(ns);
    return std::nullopt;
  }
  Step end_timing(Timing* timing) override {
    timing->samples_ns = std::move(samples_);
    timing->method = "steady_clock";
    return std::nullopt;
  }
  Recheck recheck() const override { return Recheck::kLastUseOfSet; }
  // The set still holds the last timed run's inputs as drawn (the reference's copy): any change
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

  // One call of the candidate, with the reference's outputs of every set unreadable; *ns: the
  // call's duration by steady_clock. Threads are counted right after the call, before its
  // output is looked at: a thread still running when the kernel returned finishes its work
  // after the clock stopped.
  Step call(BufferSet* s, const std::string& when, double* ns) {
    for (auto& k : sets_)
      if (k) k->seal_reference(true);
    const auto t0 = Clock::now();
    const CallResult r = call_kernel(fn_, &s->args);
    const auto t1 = Clock::now();
    for (auto& k : sets_)
      if (k) k->seal_reference(false);
    if (ns != nullptr) *ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    if (auto f = check_call(r, when, st_->memory_limit_mb, &st_->tainted)) return f;
    const int now = count_threads();
    if (threads_before_ > 0 && now > threads_before_) {
      st_->tainted = true;  // the thread lives on in this process: replace it
      g_buffers_pinned = true;
      return Failure{"WRONG_RESULT", "arc_kernel left " + std::to_string(now - threads_before_) +
                                         " thread(s) running after it returned " + when +
                                         " (work done in the background escapes the timing)"};
    }
    return std::nullopt;
  }

  HostState* st_;
  const Request& req_;
  const WorkloadJob& job_;
  arc_kernel_fn fn_;
  arc_reference_fn ref_;
  int threads_before_;
  std::vector<std::unique_ptr<BufferSet>> sets_;
  std::vector<size_t> used_;
  std::vector<double> samples_;
};

class HostDevice : public Device {
 public:
  explicit HostDevice(uint64_t memory_limit_mb) { st_.memory_limit_mb = memory_limit_mb; }

  // Before any candidate object is loaded, the worker gives up for good what candidate code
  // must not have (eval/candidate_confinement.h: new processes, exec, ptrace, sockets, signals
  // to other processes). A worker that cannot is unavailable rather than unconfined.
  Status start() override { return confine_candidate(); }

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
  void end_request() override { st_.objects.clear(); }

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
    void* handle = load(job.object, st_.objects, &error);
    if (handle == nullptr) {
      *failure = {"LOAD_ERROR", error};
      return nullptr;
    }
    auto fn = reinterpret_cast<arc_kernel_fn>(::dlsym(handle, "arc_kernel"));
    if (fn == nullptr) {
      *failure = {"LOAD_ERROR", job.object +
                                    " has no symbol arc_kernel (declare it extern \"C\" int "
                                    "arc_kernel(const arc_host_args*))"};
      return nullptr;
    }
    return std::make_unique<HostWorkload>(&st_, req_, job, fn, ref);
  }

  // A thread the candidate started may still write into freed buffers: this process is done
  // for.
  void begin_workload() override { threads_before_ = count_threads(); }
  void end_workload() override {
    if (threads_before_ > 0 && count_threads() > threads_before_) {
      st_.tainted = true;
      g_buffers_pinned = true;
    }
  }
  std::string memory_limit_note() const override {
    return " within the memory limit of " + std::to_string(st_.memory_limit_mb) + " MiB";
  }
  bool tainted() const override { return st_.tainted; }
  std::string method() const override { return "steady_clock"; }

 private:
  HostState st_;
  Request req_;
  int threads_before_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_host_device(uint64_t memory_limit_mb) {
  return std::make_unique<HostDevice>(memory_limit_mb);
}

}  // namespace arc::eval
