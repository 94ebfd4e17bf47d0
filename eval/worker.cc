#include "eval/worker.h"

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
#include <thread>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "eval/cuda_worker.h"
#include "eval/host_abi.h"
#include "eval/protocol.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Fatal-signal report. The handler may only make async-signal-safe calls: it formats into
// static buffers and writes one frame (< PIPE_BUF, so atomic) to the reply pipe, then lets the
// signal kill the process as it would have, so the parent still sees the signal in waitpid.

int g_out_fd = -1;
alignas(64) char g_alt_stack[1 << 16];  // a stack overflow needs a stack to report on
char g_status_buf[8192];

size_t put_text(char* buf, size_t pos, size_t cap, const char* s) {
  while (*s != '\0' && pos < cap) buf[pos++] = *s++;
  return pos;
}

size_t put_u64(char* buf, size_t pos, size_t cap, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0 && pos < cap) buf[pos++] = digits[--n];
  return pos;
}

// "VmSize:   123456 kB" -> 123456, read from /proc/self/status; 0 when unreadable.
uint64_t proc_status_kb(const char* key) {
  int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t len = 0;
  for (;;) {
    ssize_t n = ::read(fd, g_status_buf + len, sizeof g_status_buf - 1 - len);
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  g_status_buf[len] = '\0';
  size_t key_len = 0;
  while (key[key_len] != '\0') ++key_len;
  for (size_t i = 0; i + key_len < len; ++i) {
    if ((i == 0 || g_status_buf[i - 1] == '\n') &&
        std::memcmp(g_status_buf + i, key, key_len) == 0) {
      uint64_t v = 0;
      for (size_t j = i + key_len; j < len && g_status_buf[j] != '\n'; ++j) {
        if (g_status_buf[j] >= '0' && g_status_buf[j] <= '9') {
          v = v * 10 + static_cast<uint64_t>(g_status_buf[j] - '0');
        }
      }
      return v;
    }
  }
  return 0;
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  char frame[320];
  const size_t cap = sizeof frame;
  size_t pos = 4;
  pos = put_text(frame, pos, cap, "{\"op\":\"fatal\",\"signal\":");
  pos = put_u64(frame, pos, cap, static_cast<uint64_t>(sig));
  pos = put_text(frame, pos, cap, ",\"address\":");
  pos = put_u64(frame, pos, cap,
                reinterpret_cast<uintptr_t>(info != nullptr ? info->si_addr : nullptr));
  pos = put_text(frame, pos, cap, ",\"vm_size_kb\":");
  pos = put_u64(frame, pos, cap, proc_status_kb("VmSize:"));
  pos = put_text(frame, pos, cap, ",\"vm_peak_kb\":");
  pos = put_u64(frame, pos, cap, proc_status_kb("VmPeak:"));
  pos = put_text(frame, pos, cap, "}");
  auto n = static_cast<uint32_t>(pos - 4);
  frame[0] = static_cast<char>(n & 0xff);
  frame[1] = static_cast<char>((n >> 8) & 0xff);
  frame[2] = frame[3] = 0;
  if (g_out_fd >= 0) {
    ssize_t unused = ::write(g_out_fd, frame, pos);
    (void)unused;
  }
  // SA_RESETHAND restored the default action; the raised signal is delivered on return.
  ::raise(sig);
}

void install_fatal_handlers() {
  stack_t ss{};
  ss.ss_sp = g_alt_stack;
  ss.ss_size = sizeof g_alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

// ---------------------------------------------------------------------------------------------
// Deterministic inputs: splitmix64 to derive seeds, xoshiro256** to draw. Pure integer and
// IEEE double arithmetic, so every machine draws the same values.

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (auto& s : s_) s = splitmix64(&seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// ---------------------------------------------------------------------------------------------
// Buffers: 64-byte aligned, separately allocated (so buffer sets have distinct addresses).

// Set once a candidate has left a thread running: that thread may still touch any tensor, so
// from then on no buffer is freed or unmapped (the worker exits right after its reply).
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

struct Comparison {
  bool pass = true;
  std::string error;
  double max_abs_error = 0;
  double matched_ratio = 1;
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
  ~Library() {
    if (h_ != nullptr) ::dlclose(h_);
  }
  void* get() const { return h_; }

 private:
  void* h_ = nullptr;
};

struct Outcome {
  std::string status = "OK";
  std::string error;
  std::vector<double> samples;
  SampleStats stats;
  double sol_ns = 0;
  double max_abs_error = 0;
  double matched_ratio = 1;
  uint32_t rounds = 0;
};

json outcome_json(const std::string& workload, const Outcome& o) {
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
          {"method", "steady_clock"},
          {"max_abs_error", json_number(o.max_abs_error)},
          {"matched_ratio", json_number(o.matched_ratio)},
          {"rounds", o.rounds}};
}

size_t flush_bytes() {
  long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  size_t size = llc > 0 ? static_cast<size_t>(llc) : (size_t{32} << 20);
  return std::min(2 * size, size_t{64} << 20);
}

class Worker {
 public:
  Worker(int in_fd, int out_fd, uint64_t memory_limit_mb)
      : in_fd_(in_fd), out_fd_(out_fd), memory_limit_mb_(memory_limit_mb) {}

  int serve() {
    json ready = {{"op", "ready"}, {"pid", ::getpid()}, {"memory_limit_mb", memory_limit_mb_}};
    if (!write_message(out_fd_, ready)) return 3;
    for (;;) {
      auto msg = read_message(in_fd_);
      if (!msg) return msg.status().code() == Status::Code::kUnavailable ? 0 : 2;
      json reply;
      bool exit_after = false;
      try {
        const std::string op = msg->value("op", "");
        if (op == "shutdown") return 0;
        if (op == "peaks") {
          Peaks p = measure_peaks();
          reply = {{"op", "peaks"},
                   {"bandwidth_bytes_per_s", p.bandwidth_bytes_per_s},
                   {"flops_per_s", p.flops_per_s},
                   {"method", p.method}};
        } else if (op == "evaluate") {
          reply = evaluate(parse_request(*msg));
          exit_after = tainted_;
        } else {
          reply = {{"op", "error"}, {"error", "unknown op '" + op + "'"}};
        }
      } catch (const json::exception& e) {
        reply = {{"op", "error"}, {"error", std::string("malformed request: ") + e.what()}};
      } catch (const std::bad_alloc&) {
        reply = {{"op", "error"}, {"error", "the worker ran out of memory handling a request"}};
        exit_after = true;
      }
      if (!write_message(out_fd_, reply)) return 3;
      // _exit: a tainted process must not run candidate-registered atexit handlers.
      if (exit_after) ::_exit(0);
    }
  }

 private:
  void progress(size_t i, const std::string& name, const char* phase) {
    json p = {{"op", "progress"}, {"workload", i}, {"name", name}, {"phase", phase}};
    (void)write_message(out_fd_, p);
  }

  json evaluate(const Request& req) {
    json results = json::array();
    std::map<std::string, Library> objects;  // a gated candidate shares objects across workloads
    bool failed = false;
    std::string failed_name;
    for (size_t i = 0; i < req.workloads.size(); ++i) {
      const WorkloadJob& job = req.workloads[i];
      Outcome o;
      if (failed) {
        o.status = "NOT_RUN";
        o.error = "not run: workload " + failed_name + " failed";
      } else {
        progress(i, job.name, "correctness");
        const int threads_before = count_threads();
        try {
          o = evaluate_workload(req, i, job, objects);
        } catch (const std::bad_alloc&) {
          o = Outcome{};
          o.status = "OUT_OF_MEMORY";
          o.error = "the worker could not allocate the buffers of workload " + job.name +
                    " within the memory limit of " + std::to_string(memory_limit_mb_) + " MiB";
        }
        // A thread the candidate started may still write into freed buffers: this process
        // is done for.
        if (threads_before > 0 && count_threads() > threads_before) {
          tainted_ = true;
          g_buffers_pinned = true;
        }
        if (o.status != "OK") {
          failed = true;
          failed_name = job.name;
        }
      }
      json entry = outcome_json(job.name, o);
      if (o.status != "NOT_RUN") {
        // Streamed too, so the results of earlier workloads survive a later crash.
        (void)write_message(out_fd_, json{{"op", "workload"}, {"index", i}, {"result", entry}});
      }
      results.push_back(std::move(entry));
    }
    return {{"op", "result"}, {"workloads", std::move(results)}, {"exiting", tainted_}};
  }

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

  // Maps a failed call to an outcome; returns false when the call failed.
  bool check_call(const CallResult& r, const std::string& when, Outcome* o) {
    if (r.kind == CallResult::kBadAlloc) {
      o->status = "OUT_OF_MEMORY";
      o->error = "arc_kernel threw std::bad_alloc " + when + " (memory limit " +
                 std::to_string(memory_limit_mb_) + " MiB)";
      tainted_ = true;  // what it allocated before failing is still held
      return false;
    }
    if (r.kind == CallResult::kThrew) {
      o->status = "CRASH";
      o->error = "arc_kernel threw an exception " + when + ": " + r.what;
      return false;
    }
    if (r.rc != 0) {
      o->status = "WRONG_RESULT";
      o->error = "arc_kernel returned " + std::to_string(r.rc) + " " + when +
                 " (a non-zero return means failure)";
      return false;
    }
    return true;
  }

  bool run_reference(arc_reference_fn ref, BufferSet& s, Outcome* o) {
    s.poison_reference();
    int rc = ref(&s.ref_args);
    if (rc != 0) {
      o->status = "WRONG_RESULT";
      o->error = "the reference (not the candidate) returned " + std::to_string(rc);
      return false;
    }
    return true;
  }

  void flush_cache() {
    if (!flush_) flush_ = std::make_unique<Buffer<unsigned char>>(flush_bytes());
    unsigned char* p = flush_->data();
    const size_t n = flush_->size();
    const auto v = static_cast<unsigned char>(++flush_round_);
    for (size_t i = 0; i < n; i += 64) p[i] = v;  // one store per line: allocates every line
    asm volatile("" : : "r"(p) : "memory");
  }

  // `position` is the workload's place in this request (for progress); job.index its place in
  // the problem (for seeds, so inputs do not depend on which workloads a request carries).
  Outcome evaluate_workload(const Request& req, size_t position, const WorkloadJob& job,
                            std::map<std::string, Library>& objects) {
    Outcome o;
    std::string error;
    void* ref_handle = load(req.reference, references_, &error);
    if (ref_handle == nullptr) {
      o.status = "LOAD_ERROR";
      o.error = "reference " + req.reference + ": " + error;
      return o;
    }
    auto ref = reinterpret_cast<arc_reference_fn>(::dlsym(ref_handle, "arc_reference"));
    if (ref == nullptr) {
      o.status = "LOAD_ERROR";
      o.error = "reference " + req.reference + " has no arc_reference";
      return o;
    }
    void* handle = load(job.object, objects, &error);
    if (handle == nullptr) {
      o.status = "LOAD_ERROR";
      o.error = error;
      return o;
    }
    auto fn = reinterpret_cast<arc_kernel_fn>(::dlsym(handle, "arc_kernel"));
    if (fn == nullptr) {
      o.status = "LOAD_ERROR";
      o.error = job.object +
                " has no symbol arc_kernel (declare it extern \"C\" int arc_kernel(const "
                "arc_host_args*))";
      return o;
    }
    const Tolerance tol{req.atol, req.rtol, req.matched_ratio};
    const int threads_before = count_threads();
    // Checked right after every call, before its output is looked at: a thread still running
    // when the kernel returned finishes its work after the clock stopped.
    auto check_threads = [&](const std::string& when) {
      int now = count_threads();
      if (threads_before > 0 && now > threads_before) {
        tainted_ = true;  // the thread lives on in this process: replace it
        g_buffers_pinned = true;
        o.status = "WRONG_RESULT";
        o.error = "arc_kernel left " + std::to_string(now - threads_before) +
                  " thread(s) running after it returned " + when +
                  " (work done in the background escapes the timing)";
        return false;
      }
      return true;
    };
    // The reference's outputs are unreadable while candidate code runs.
    auto call = [&fn](BufferSet* const* sealed, size_t n_sealed, const arc_host_args* args) {
      for (size_t k = 0; k < n_sealed; ++k) sealed[k]->seal_reference(true);
      CallResult r = call_kernel(fn, args);
      for (size_t k = 0; k < n_sealed; ++k) sealed[k]->seal_reference(false);
      return r;
    };

    // Correctness. The set stays allocated through timing, so timing's buffers never reuse
    // its addresses.
    BufferSet s(job);
    {
      BufferSet* const sealed[] = {&s};
      o.matched_ratio = 1;
      for (uint32_t r = 0; r < req.rounds; ++r) {
        s.fill(job, derive_seed(req.input_seed, job.index, r));
        if (!run_reference(ref, s, &o)) return o;
        s.poison_outputs();
        const std::string when = "in correctness round " + std::to_string(r);
        if (!check_call(call(sealed, 1, &s.args), when, &o)) return o;
        if (!check_threads(when)) return o;
        if (std::string w = s.inputs_changed(job); !w.empty()) {
          o.status = "WRONG_RESULT";
          o.error = w + " " + when;
          return o;
        }
        Comparison c = compare(job, s, tol);
        o.max_abs_error = std::max(o.max_abs_error, c.max_abs_error);
        o.matched_ratio = std::min(o.matched_ratio, c.matched_ratio);
        if (!c.pass) {
          o.status = "WRONG_RESULT";
          o.error = "correctness round " + std::to_string(r) + ": " + c.error;
          return o;
        }
        o.rounds = r + 1;
      }
    }

    // Timing, with every timed output re-checked against its own set's reference. Every use
    // of a set places its tensors at a new address.
    progress(position, job.name, "timing");
    std::vector<BufferSet> sets;
    sets.reserve(req.buffer_sets);
    const size_t uses = (static_cast<size_t>(req.warmup) + req.repetitions) /
                            std::max<uint32_t>(req.buffer_sets, 1) +
                        1;
    for (uint32_t k = 0; k < req.buffer_sets; ++k) {
      sets.emplace_back(job, uses);
      sets.back().fill(job, derive_seed(req.input_seed, job.index, 0x10000 + k));
      if (!run_reference(ref, sets.back(), &o)) return o;
      sets.back().poison_outputs();
    }
    std::vector<BufferSet*> all;
    for (auto& set : sets) all.push_back(&set);
    std::vector<size_t> used(sets.size(), 0);
    auto place = [&](size_t k) -> BufferSet& {
      sets[k].move(used[k]++);
      return sets[k];
    };
    for (uint32_t i = 0; i < req.warmup; ++i) {
      const std::string when = "in warm-up run " + std::to_string(i);
      BufferSet& w = place(i % sets.size());
      if (!check_call(call(all.data(), all.size(), &w.args), when, &o)) return o;
      if (!check_threads(when)) return o;
    }
    o.samples.reserve(req.repetitions);
    for (uint32_t i = 0; i < req.repetitions; ++i) {
      BufferSet& t = place(i % sets.size());
      t.poison_outputs();
      if (req.flush_cache) flush_cache();
      for (BufferSet* k : all) k->seal_reference(true);
      const auto t0 = Clock::now();
      const CallResult r = call_kernel(fn, &t.args);
      const auto t1 = Clock::now();
      for (BufferSet* k : all) k->seal_reference(false);
      const std::string when = "in timed run " + std::to_string(i);
      if (!check_call(r, when, &o)) return o;
      if (!check_threads(when)) return o;
      o.samples.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      if (std::string w = t.inputs_changed(job); !w.empty()) {
        o.status = "WRONG_RESULT";
        o.error = w + " " + when;
        return o;
      }
      Comparison c = compare(job, t, tol);
      if (!c.pass) {
        o.status = "STALE_OUTPUT";
        o.error = "timed run " + std::to_string(i) + " (buffer set " +
                  std::to_string(i % sets.size()) +
                  ") does not match the reference for its inputs: " + c.error;
        return o;
      }
    }
    o.stats = summarize_samples(o.samples);

    double sol_s = 0;
    std::string bound;
    if (req.peak_flops > 0 && job.flops > 0 && job.flops / req.peak_flops > sol_s) {
      sol_s = job.flops / req.peak_flops;
      bound = fmt_short(job.flops) + " flops at the measured peak " + fmt_short(req.peak_flops) +
              " flop/s";
    }
    if (req.peak_bandwidth > 0 && job.bytes > 0 && job.bytes / req.peak_bandwidth > sol_s) {
      sol_s = job.bytes / req.peak_bandwidth;
      bound = fmt_short(job.bytes) + " bytes at the measured peak " +
              fmt_short(req.peak_bandwidth) + " B/s";
    }
    o.sol_ns = sol_s * 1e9;
    if (!o.samples.empty() && o.stats.median < o.sol_ns) {
      o.status = "IMPOSSIBLE";
      o.error = "median " + fmt_short(o.stats.median) + " ns is below the speed-of-light bound " +
                fmt_short(o.sol_ns) + " ns (" + bound + ")";
    }
    return o;
  }

  int in_fd_, out_fd_;
  uint64_t memory_limit_mb_;
  bool tainted_ = false;
  std::map<std::string, Library> references_;  // trusted: kept loaded across requests
  std::unique_ptr<Buffer<unsigned char>> flush_;
  unsigned flush_round_ = 0;
};

// Moves fd to a number >= 3 (close-on-exec, so exec'd grandchildren do not inherit it).
int move_high(int fd) {
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return -1;
  if (moved != fd) ::close(fd);
  return moved;
}

// ---------------------------------------------------------------------------------------------
// Peaks.

using V16 = float __attribute__((vector_size(64)));
using V8 = float __attribute__((vector_size(32)));
using V4 = float __attribute__((vector_size(16)));

// Independent multiply-add chains: enough of them to cover the FMA latency on every port.
// Returns the sum so the compiler cannot drop the work.
#define ARC_MULADD_LOOP(NAME, TARGET, VEC, CHAINS)                                       \
  __attribute__((target(TARGET), noinline)) double NAME(long iters) {                    \
    VEC acc[CHAINS];                                                                     \
    _Pragma("GCC unroll 32") for (int k = 0; k < CHAINS; ++k) acc[k] =                   \
        VEC{} + static_cast<float>(k + 1) * 1e-3f;                                       \
    const VEC m = VEC{} + 0.999999f;                                                     \
    const VEC a = VEC{} + 1e-7f;                                                         \
    for (long i = 0; i < iters; ++i) {                                                   \
      _Pragma("GCC unroll 32") for (int k = 0; k < CHAINS; ++k) acc[k] = acc[k] * m + a; \
    }                                                                                    \
    VEC s = acc[0];                                                                      \
    _Pragma("GCC unroll 32") for (int k = 1; k < CHAINS; ++k) s += acc[k];               \
    double r = 0;                                                                        \
    for (size_t l = 0; l < sizeof(VEC) / sizeof(float); ++l) r += s[l];                  \
    return r;                                                                            \
  }

ARC_MULADD_LOOP(muladd_avx512, "avx512f", V16, 16)
ARC_MULADD_LOOP(muladd_avx2, "avx2,fma", V8, 12)
ARC_MULADD_LOOP(muladd_sse, "sse2", V4, 12)

struct ComputeKernel {
  const char* name;
  double (*fn)(long);
  int lanes, chains;
  bool available;
};

struct ThreadPeaks {
  double bandwidth = 0, flops = 0;
  const char* isa = "";
};

constexpr int kTrials = 20;
volatile double g_sink;

ThreadPeaks measure_thread_peaks() {
  ThreadPeaks best;
  for (size_t bytes : {size_t{16} << 10, size_t{128} << 10}) {
    void* src = std::aligned_alloc(64, bytes);
    void* dst = std::aligned_alloc(64, bytes);
    if (src != nullptr && dst != nullptr) {
      std::memset(src, 1, bytes);
      std::memset(dst, 2, bytes);
      const int reps = static_cast<int>((size_t{128} << 20) / bytes);
      for (int t = 0; t < kTrials; ++t) {
        auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) {
          std::memcpy(dst, src, bytes);
          asm volatile("" : : "r"(dst), "r"(src) : "memory");
        }
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (s > 0) best.bandwidth = std::max(best.bandwidth, 2.0 * bytes * reps / s);
      }
    }
    std::free(src);
    std::free(dst);
  }
  __builtin_cpu_init();
  const ComputeKernel kernels[] = {
      {"avx512f", muladd_avx512, 16, 16, __builtin_cpu_supports("avx512f") != 0},
      {"avx2+fma", muladd_avx2, 8, 12,
       __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0},
      {"sse2", muladd_sse, 4, 12, true},
  };
  constexpr long kIters = 300000;
  for (const auto& k : kernels) {
    if (!k.available) continue;
    for (int t = 0; t < kTrials; ++t) {
      auto t0 = Clock::now();
      g_sink = k.fn(kIters);
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      double rate = 2.0 * k.lanes * k.chains * static_cast<double>(kIters) / s;
      if (s > 0 && rate > best.flops) {
        best.flops = rate;
        best.isa = k.name;
      }
    }
  }
  return best;
}

}  // namespace

uint64_t derive_seed(uint64_t input_seed, uint64_t workload_index, uint64_t stream) {
  uint64_t x = input_seed;
  uint64_t h = splitmix64(&x);
  x = h ^ workload_index;
  h = splitmix64(&x);
  x = h ^ stream;
  return splitmix64(&x);
}

SampleStats summarize_samples(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto quantile = [&samples](double q) {
    const double pos = q * static_cast<double>(samples.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, samples.size() - 1);
    return samples[lo] + (samples[hi] - samples[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = quantile(0.5);
  s.p25 = quantile(0.25);
  s.p75 = quantile(0.75);
  s.min = samples.front();
  s.spread = s.median > 0 ? (s.p75 - s.p25) / s.median : 0;
  return s;
}

Peaks measure_peaks() {
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<ThreadPeaks> per(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  try {
    for (unsigned i = 1; i < n; ++i) {
      threads.emplace_back([&per, i] { per[i] = measure_thread_peaks(); });
    }
  } catch (const std::exception&) {
    // Fewer threads than cores: the sum covers only those measured, and says so below.
  }
  per[0] = measure_thread_peaks();
  for (auto& t : threads) t.join();
  per.resize(threads.size() + 1);
  Peaks p;
  const char* isa = per[0].isa;
  for (const auto& t : per) {
    p.bandwidth_bytes_per_s += t.bandwidth;
    p.flops_per_s += t.flops;
  }
  p.method = "host upper bounds, best of " + std::to_string(kTrials) + " trials on each of " +
             std::to_string(per.size()) +
             " threads at once, summed; bandwidth: memcpy between in-cache buffers of 16 KiB "
             "and 128 KiB, bytes read + written; compute: independent float multiply-add "
             "chains (GCC vector extensions, best ISA " +
             std::string(isa) + "), a multiply-add counting 2 flops";
  return p;
}

int run_worker(const WorkerOptions& options) {
  // The protocol fds must survive the redirection of 0/1/2 below even if given as 0/1/2.
  int in_fd = move_high(options.in_fd);
  int out_fd = move_high(options.out_fd);
  if (in_fd < 0 || out_fd < 0) return 2;
  // Candidates may print gigabytes; none of it may reach the protocol or a terminal.
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::close(null_fd);
  }
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);  // a crashing candidate must not write core files
  uint64_t memory_limit_mb = options.memory_limit_mb;
  // AddressSanitizer reserves terabytes of shadow address space at start: under an
  // address-space limit every later allocation would fail, so a sanitizer build runs its
  // workers without one (and its out-of-memory tests skip, saying so).
  if (kAddressSanitizer) memory_limit_mb = 0;
  if (memory_limit_mb > 0) {
    rlimit cur{};
    ::getrlimit(RLIMIT_AS, &cur);
    rlim_t want = static_cast<rlim_t>(memory_limit_mb) << 20;
    // Hard limit too: a candidate must not be able to raise its own ceiling.
    if (cur.rlim_max != RLIM_INFINITY) want = std::min(want, cur.rlim_max);
    rlimit lim{want, want};
    ::setrlimit(RLIMIT_AS, &lim);
  }
  g_out_fd = out_fd;
  install_fatal_handlers();
  if (options.backend == "cuda") {
    try {
      return serve_cuda_worker(in_fd, out_fd, options.cache_dir);
    } catch (...) {
      return 4;
    }
  }
  Worker worker(in_fd, out_fd, memory_limit_mb);
  try {
    return worker.serve();
  } catch (...) {
    return 4;
  }
}

}  // namespace arc::eval
