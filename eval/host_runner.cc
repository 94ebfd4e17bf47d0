// The runner process of the host backend (eval/host_runner.h): both sides of its control page.
#include "eval/host_runner.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <new>
#include <optional>
#include <thread>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/candidate_confinement.h"
#include "eval/protocol.h"
#include "eval/subprocess.h"
#include "eval/worker.h"

namespace arc::eval {

using Clock = std::chrono::steady_clock;

// Commands (the low two bits of `command`; the rest is the call's sequence number) and replies
// (the low two bits of `reply`).
enum : uint32_t { kArm = 1, kGo = 2, kExit = 3 };
enum : uint32_t { kReady = 1, kArmed = 2, kDone = 3, kStartFailed = 4 };
enum : int32_t { kReturned = 0, kBadAlloc = 1, kThrew = 2 };

struct RunnerControl {
  alignas(64) std::atomic<uint32_t> command{0};  // written by the worker
  std::atomic<uint32_t> runner_sleeping{0};      // the runner waits in a futex on `command`
  alignas(64) std::atomic<uint32_t> reply{0};    // written by the runner
  std::atomic<uint32_t> worker_sleeping{0};      // the worker waits in a futex on `reply`
  alignas(64) int32_t outcome = kReturned;       // the last call, as the runner tells it
  int32_t rc = 0;
  char what[256] = {};    // an exception's text
  char error[1024] = {};  // why the runner could not start
  int32_t n_inputs = 0, n_outputs = 0, n_axes = 0;
  // Then: max_inputs + max_outputs pointers and max_axes int64 (the next call's arguments).
};

namespace {

static_assert(std::atomic<uint32_t>::is_always_lock_free);

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>* word) { futex(word, FUTEX_WAKE, 1, nullptr); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spinning on a core another runnable task wants (the other side of the control page, where
// the machine has fewer free cores than spinners) would delay the very event it waits for: after
// kPureSpinNs, a yield now and then gives the core away when someone waits for it. Before, the
// spin is pure: a yield in progress when the event comes delays seeing it.
constexpr int64_t kPureSpinNs = 20'000;
inline void yield_core() { ::sched_yield(); }

int64_t since_ns(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

void** pointer_slots(RunnerControl* c) {
  return reinterpret_cast<void**>(reinterpret_cast<unsigned char*>(c) + sizeof(RunnerControl));
}
int64_t* axis_slots(RunnerControl* c, size_t pointers) {
  return reinterpret_cast<int64_t*>(pointer_slots(c) + pointers);
}

void* map_shared(size_t bytes) {
  void* p = ::mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void copy_text(char* dst, size_t cap, const std::string& text) {
  const size_t n = std::min(text.size(), cap - 1);
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

// A bounded, printable copy of text the runner wrote (it is the candidate's to forge).
std::string read_text(const char* src, size_t cap) {
  std::string s(src, strnlen(src, cap));
  for (char& ch : s) {
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// The runner's side. Everything here runs in the forked child; it never returns.

struct CallResult {
  int32_t outcome = kReturned;
  int rc = 0;
  std::string what;
};

__attribute__((noinline)) CallResult call_kernel(arc_kernel_fn fn, const arc_host_args* args) {
  CallResult r;
  try {
    r.rc = fn(args);
  } catch (const std::bad_alloc&) {
    r.outcome = kBadAlloc;
  } catch (const std::exception& e) {
    r.outcome = kThrew;
    r.what = e.what();
  } catch (...) {
    r.outcome = kThrew;
    r.what = "a non-std exception";
  }
  return r;
}

void reply(RunnerControl* c, uint32_t value) {
  c->reply.store(value);
  if (c->worker_sleeping.load() != 0) futex_wake(&c->reply);
}

[[noreturn]] void fail_start(RunnerControl* c, const std::string& why) {
  copy_text(c->error, sizeof c->error, why);
  reply(c, kStartFailed);
  ::_exit(0);
}

// Blocks (no CPU) until `command` differs from `seen`: the state the worker proves between runs.
uint32_t wait_blocked(RunnerControl* c, uint32_t seen) {
  uint32_t v;
  while ((v = c->command.load()) == seen) futex(&c->command, FUTEX_WAIT, seen, nullptr);
  return v;
}

// Spins until `command` differs from `seen` (the worker sends GO right after ARMED), falling
// back to a futex after a while in case it does not.
uint32_t wait_spinning(RunnerControl* c, uint32_t seen) {
  const auto t0 = Clock::now();
  for (uint32_t i = 0;; ++i) {
    const uint32_t v = c->command.load(std::memory_order_acquire);
    if (v != seen) return v;
    cpu_relax();
    if ((i & 63) == 63) {
      const int64_t spun = since_ns(t0);
      if (spun > 200'000'000) break;
      if (spun > kPureSpinNs) yield_core();
    }
  }
  c->runner_sleeping.store(1);
  uint32_t v = wait_blocked(c, seen);
  c->runner_sleeping.store(0);
  return v;
}

void close_other_descriptors(int keep) {
  // close_range (Linux 5.9) where the kernel has it, else one by one.
  if (::syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u) == 0 &&
      ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) == 0) {
    return;
  }
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  const int last = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 65536));
  for (int fd = 3; fd < last; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

[[noreturn]] void runner_main(RunnerControl* c, const RunnerSetup& setup, pid_t worker,
                              int report_fd) {
  // Dies with the worker; a worker that is already gone has no one to answer.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != worker) ::_exit(0);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  if (setup.cpu_limit_s > 0) {
    rlimit cpu{static_cast<rlim_t>(setup.cpu_limit_s), static_cast<rlim_t>(setup.cpu_limit_s + 5)};
    ::setrlimit(RLIMIT_CPU, &cpu);
  }
  // Nothing of the worker's: not its protocol pipes, not arcd's. Its own fatal signals are
  // reported on the pipe its parent reads.
  close_other_descriptors(report_fd);
  report_fatal_signals_to(report_fd);
  // Its parent reads /proc/PID/syscall (ptrace access); the worker itself stays undumpable.
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (Status s = confine_candidate(); !s) fail_start(c, s.message());
  void* h = ::dlopen(setup.object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    fail_start(c, std::string("dlopen failed: ") + (e != nullptr ? e : setup.object.c_str()));
  }
  auto fn = reinterpret_cast<arc_kernel_fn>(::dlsym(h, "arc_kernel"));
  if (fn == nullptr) {
    fail_start(c, setup.object +
                      " has no symbol arc_kernel (declare it extern \"C\" int "
                      "arc_kernel(const arc_host_args*))");
  }
  const size_t pointers = setup.max_inputs + setup.max_outputs;
  void** slots = pointer_slots(c);
  const int64_t* axes = axis_slots(c, pointers);
  uint32_t seen = c->command.load();
  reply(c, kReady);
  for (;;) {
    uint32_t cmd = wait_blocked(c, seen);
    seen = cmd;
    if ((cmd & 3) == kArm) {
      reply(c, (cmd & ~3u) | kArmed);
      cmd = wait_spinning(c, seen);
      seen = cmd;
    }
    if ((cmd & 3) == kExit) ::_exit(0);
    if ((cmd & 3) != kGo) continue;
    const arc_host_args args{reinterpret_cast<const float* const*>(slots),
                             c->n_inputs,
                             reinterpret_cast<float* const*>(slots + setup.max_inputs),
                             c->n_outputs,
                             axes,
                             c->n_axes};
    CallResult r = call_kernel(fn, &args);
    c->outcome = r.outcome;
    c->rc = r.rc;
    copy_text(c->what, sizeof c->what, r.what);
    reply(c, (cmd & ~3u) | kDone);
  }
}

// ---------------------------------------------------------------------------------------------
// The worker's side.

// CPU time the runner may use while it should be blocked (between runs): generous for an honest
// runner, which uses none. (After ARM it spins until GO, so its CPU time there says nothing.)
constexpr int64_t kIdleCpuAllowanceNs = 200'000;
// From DONE until blocked in the futex again: a store, a load and a syscall's entry.
constexpr int64_t kReturnGraceNs = 10'000;

std::string fmt_us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(ns) / 1e3);
  return buf;
}

int open_proc(pid_t pid, const char* what) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + what;
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

// The text of a /proc file read again from its start; "" when unreadable.
std::string reread(int fd) {
  if (fd < 0) return "";
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

Status probe_candidate_confinement() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Status::io_error("pipe: " + std::string(strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::unavailable("cannot fork a candidate process: " + std::string(strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    const Status s = confine_candidate();
    const std::string why = s ? "" : s.message();
    ssize_t unused = ::write(fds[1], why.data(), std::min<size_t>(why.size(), 512));
    (void)unused;
    ::_exit(s ? 0 : 1);
  }
  ::close(fds[1]);
  char buf[600];
  ssize_t n;
  do {
    n = ::read(fds[0], buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::ok();
  return Status::unavailable(n > 0 ? std::string(buf, static_cast<size_t>(n))
                                   : "cannot confine the candidate process");
}

std::unique_ptr<Runner> Runner::start(const RunnerSetup& setup, Failure* failure) {
  std::unique_ptr<Runner> r(new Runner());
  r->setup_ = setup;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t pointers = setup.max_inputs + setup.max_outputs;
  r->control_bytes_ =
      (sizeof(RunnerControl) + (pointers + setup.max_axes) * 8 + page - 1) / page * page;
  r->control_ = new (map_shared(r->control_bytes_)) RunnerControl();
  r->arena_bytes_ = std::max<size_t>(setup.arena_bytes, 64);
  r->arena_ = static_cast<unsigned char*>(map_shared(r->arena_bytes_));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *failure = {"LOAD_ERROR",
                "cannot start the candidate's process: pipe: " + std::string(strerror(errno))};
    return nullptr;
  }
  r->worker_parent_ = ::getppid();
  const pid_t worker = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    *failure = {"LOAD_ERROR",
                "cannot start the candidate's process: fork: " + std::string(strerror(errno))};
    return nullptr;
  }
  if (pid == 0) {
    ::close(fds[0]);
    runner_main(r->control_, setup, worker, fds[1]);
  }
  ::close(fds[1]);
  r->pid_ = pid;
  r->report_fd_ = fds[0];
  r->stat_fd_ = open_proc(pid, "stat");
  r->status_fd_ = open_proc(pid, "status");
  r->have_cpu_clock_ = ::clock_getcpuclockid(pid, &r->cpu_clock_) == 0;
  const std::string when = "while loading the candidate object";
  if (!r->await_reply(kReady, 0, when, failure)) return nullptr;
  if (r->control_->reply.load() == kStartFailed) {
    *failure = {"LOAD_ERROR", read_text(r->control_->error, sizeof r->control_->error)};
    return nullptr;
  }
  // Readable where the worker may trace its child; else stat's state is the proof of idleness.
  r->syscall_fd_ = open_proc(pid, "syscall");
  if (reread(r->syscall_fd_).empty()) {
    ::close(r->syscall_fd_);
    r->syscall_fd_ = -1;
  }
  if (!r->await_idle(when, failure)) return nullptr;
  r->usable_ = true;
  return r;
}

Runner::~Runner() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  for (int fd : {report_fd_, syscall_fd_, stat_fd_, status_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  if (arena_ != nullptr) ::munmap(arena_, arena_bytes_);
  if (control_ != nullptr) {
    control_->~RunnerControl();
    ::munmap(control_, control_bytes_);
  }
}

void Runner::discard() {
  usable_ = false;
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    reap_if_dead();
  }
}

bool Runner::reap_if_dead() {
  if (reaped_) return true;
  int status = 0;
  rusage usage{};
  const pid_t got = ::wait4(pid_, &status, WNOHANG, &usage);
  if (got != pid_) return false;
  reaped_ = true;
  wait_status_ = status;
  reaped_cpu_s_ = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return true;
}

bool Runner::await_reply(uint32_t want, int64_t spin_ns, const std::string& when,
                         Failure* failure) {
  RunnerControl* c = control_;
  const auto t0 = Clock::now();
  // Spinning: the precise way to see the completion of short calls. sched_yield now and then
  // gives the core back where the candidate's own threads want it.
  for (uint32_t i = 0; spin_ns > 0; ++i) {
    const uint32_t v = c->reply.load(std::memory_order_acquire);
    if (v == want || (want == kReady && v == kStartFailed)) return true;
    cpu_relax();
    if ((i & 63) == 63) {
      const int64_t spun = since_ns(t0);
      if (spun > spin_ns) break;
      if (spun > kPureSpinNs) yield_core();
    }
  }
  auto last_parent_check = Clock::now();
  for (;;) {
    c->worker_sleeping.store(1);
    const uint32_t v = c->reply.load();
    if (v == want || (want == kReady && v == kStartFailed)) {
      c->worker_sleeping.store(0);
      return true;
    }
    const timespec ms{0, 1'000'000};
    futex(&c->reply, FUTEX_WAIT, v, &ms);
    c->worker_sleeping.store(0);
    const uint32_t now = c->reply.load();
    if (now == want || (want == kReady && now == kStartFailed)) return true;
    if (reap_if_dead()) {
      *failure = death(when);
      return false;
    }
    // Nobody waits for this answer any more (arcd is gone): stop rather than wait for ever.
    if (std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_parent_check)
            .count() > 100) {
      last_parent_check = Clock::now();
      if (::getppid() != worker_parent_) {
        ::kill(pid_, SIGKILL);
        ::_exit(0);
      }
    }
  }
}

bool Runner::blocked_on_command() const {
  if (syscall_fd_ >= 0) {
    // "202 0xADDR 0x0 ..." : futex (this architecture's number) on the command word.
    const std::string s = reread(syscall_fd_);
    char* end = nullptr;
    const long nr = std::strtol(s.c_str(), &end, 10);
    if (end == s.c_str() || nr != SYS_futex) return false;
    const unsigned long long addr = std::strtoull(end, nullptr, 16);
    return addr == reinterpret_cast<uintptr_t>(&control_->command);
  }
  // No ptrace access to the runner: its state in /proc/PID/stat ("S", sleeping) instead.
  const std::string s = reread(stat_fd_);
  const size_t close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'S';
}

bool Runner::await_idle(const std::string& when, Failure* failure) {
  for (uint32_t polls = 0;; ++polls) {
    if (blocked_on_command()) {
      cpu_idle_ns_ = cpu_ns();
      return true;
    }
    if (reap_if_dead()) {
      *failure = death(when);
      return false;
    }
    // The runner may need this core to get back to its wait.
    if (polls < 64) {
      ::sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

int Runner::threads() const {
  const std::string s = reread(status_fd_);
  const size_t at = s.find("\nThreads:");
  if (at == std::string::npos) return -1;
  return std::atoi(s.c_str() + at + 9);
}

int64_t Runner::cpu_ns() const {
  timespec ts{};
  if (!have_cpu_clock_ || ::clock_gettime(cpu_clock_, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Failure Runner::death(const std::string& when) {
  usable_ = false;
  // The runner's own report of a fatal signal (eval/worker.h "fatal"); it wrote it before it
  // died, so it is in the pipe now or never.
  std::optional<nlohmann::json> fatal;
  if (auto msg = read_message(report_fd_, deadline_after(0.01)); msg && msg->is_object()) {
    fatal = std::move(*msg);
  }
  const int status = wait_status_;
  if (WIFEXITED(status)) {
    return {"CRASH", "the candidate's process exited with status " +
                         std::to_string(WEXITSTATUS(status)) + " " + when +
                         " (did the candidate call exit()?)"};
  }
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const bool reported = fatal && fatal->value("signal", 0) == sig;
  std::string error =
      "the candidate's process was killed by signal " + describe_signal(sig) + " " + when;
  if (reported && (sig == SIGSEGV || sig == SIGBUS)) {
    // Only the address's class: a candidate must not spell out data through its crashes.
    const uint64_t address = fatal->value("address", uint64_t{0});
    error += address == 0        ? " at address 0x0"
             : address < 0x10000 ? " at an address near 0x0"
                                 : " at a non-null address";
  }
  const uint64_t limit_mb = setup_.memory_limit_mb;
  const uint64_t vm_kb = reported ? fatal->value("vm_size_kb", uint64_t{0}) : 0;
  if (sig == SIGXCPU || (sig == SIGKILL && setup_.cpu_limit_s > 0 &&
                         reaped_cpu_s_ >= static_cast<double>(setup_.cpu_limit_s))) {
    return {"TIMEOUT", error + " after " + format_number(reaped_cpu_s_) +
                           " s of CPU time (its limit: " + std::to_string(setup_.cpu_limit_s) +
                           " s, the timeout times the hardware threads)"};
  }
  if (sig == SIGKILL) {
    return {"OUT_OF_MEMORY",
            error +
                " (no one else signals it: most likely the kernel's out-of-memory killer; "
                "classified as out of memory)"};
  }
  if (limit_mb > 0 && vm_kb * 10 >= limit_mb * 1024 * 9) {
    return {"OUT_OF_MEMORY", error + "; its address space was " + std::to_string(vm_kb / 1024) +
                                 " of " + std::to_string(limit_mb) +
                                 " MiB (the memory limit), so this is classified as out of memory "
                                 "(an allocation failed and its failure was not handled)"};
  }
  return {"CRASH", error};
}

Step Runner::call(const arc_host_args& args, const std::string& when, double* ns) {
  if (!usable_) {
    return Failure{"CRASH", "the candidate's process is gone " + when};
  }
  RunnerControl* c = control_;
  // The arguments, while the runner is blocked.
  void** slots = pointer_slots(c);
  const size_t n_in =
      std::min<size_t>(static_cast<size_t>(std::max(args.n_inputs, 0)), setup_.max_inputs);
  const size_t n_out =
      std::min<size_t>(static_cast<size_t>(std::max(args.n_outputs, 0)), setup_.max_outputs);
  const size_t n_axes =
      std::min<size_t>(static_cast<size_t>(std::max(args.n_axes, 0)), setup_.max_axes);
  for (size_t i = 0; i < n_in; ++i) slots[i] = const_cast<float*>(args.inputs[i]);
  for (size_t i = 0; i < n_out; ++i) slots[setup_.max_inputs + i] = args.outputs[i];
  std::copy_n(args.axes, n_axes, axis_slots(c, setup_.max_inputs + setup_.max_outputs));
  c->n_inputs = static_cast<int32_t>(n_in);
  c->n_outputs = static_cast<int32_t>(n_out);
  c->n_axes = static_cast<int32_t>(n_axes);
  c->outcome = -1;

  Failure failure;
  const int64_t cpu_before = cpu_ns();
  if (cpu_before - cpu_idle_ns_ > kIdleCpuAllowanceNs) {
    discard();
    return Failure{"WRONG_RESULT", "the candidate's process used " +
                                       fmt_us(cpu_before - cpu_idle_ns_) +
                                       " us of CPU time between runs, while it should have "
                                       "been idle (work outside the timed runs), before the run " +
                                       when};
  }
  // ARM: the runner wakes (outside the timed region) and spins for GO.
  const uint32_t seq = ++seq_ & 0x3fffffff;
  c->command.store(seq << 2 | kArm);
  futex_wake(&c->command);
  if (!await_reply(seq << 2 | kArmed, 100'000, when, &failure)) return failure;
  // GO: timed from here to the runner's DONE.
  const auto t0 = Clock::now();
  c->command.store(seq << 2 | kGo);
  if (c->runner_sleeping.load() != 0) futex_wake(&c->command);
  const int64_t spin = std::clamp<int64_t>(2 * last_run_ns_ + 50'000, 50'000, 5'000'000);
  if (!await_reply(seq << 2 | kDone, spin, when, &failure)) return failure;
  const auto t1 = Clock::now();
  // DONE is the runner's word, not a fact: the call is over when the runner is seen blocked on
  // the command word again. One that is not, within what returning to its wait takes, ends its
  // sample when it is first seen blocked (a runner that reported DONE early and kept working
  // gains at most the grace; one preempted on its way back costs an outlier).
  auto end = t1;
  bool back = blocked_on_command();
  while (!back && since_ns(t1) < kReturnGraceNs) back = blocked_on_command();
  if (back) {
    cpu_idle_ns_ = cpu_ns();
  } else {
    if (!await_idle(when, &failure)) return failure;
    end = Clock::now();
  }
  const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(end - t0).count();
  last_run_ns_ = took;
  if (ns != nullptr) *ns = static_cast<double>(took);

  // Threads: the runner serves on one. A thread that ended just before the call returned may
  // still be counted for a moment; one left running stays.
  int extra = threads() - 1;
  for (int tries = 0; extra > 0 && tries < 20; ++tries) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    extra = threads() - 1;
  }
  if (extra > 0) {
    discard();
    return Failure{"WRONG_RESULT", "arc_kernel left " + std::to_string(extra) +
                                       " thread(s) running after it returned " + when +
                                       " (work done in the background escapes the timing)"};
  }
  switch (c->outcome) {
    case kReturned:
      break;
    case kBadAlloc:
      discard();  // what it allocated before failing is still held
      return Failure{"OUT_OF_MEMORY", "arc_kernel threw std::bad_alloc " + when +
                                          " (memory limit " +
                                          std::to_string(setup_.memory_limit_mb) + " MiB)"};
    case kThrew:
      discard();
      return Failure{"CRASH", "arc_kernel threw an exception " + when + ": " +
                                  read_text(c->what, sizeof c->what)};
    default:
      discard();
      return Failure{"CRASH", "the candidate's process reported no result " + when};
  }
  if (c->rc != 0) {
    return Failure{"WRONG_RESULT", "arc_kernel returned " + std::to_string(c->rc) + " " + when +
                                       " (a non-zero return means failure)"};
  }
  return std::nullopt;
}

}  // namespace arc::eval
