#pragma once
// The runner: the only process in which a host candidate's code runs (eval/worker.h, the host
// backend). The host worker forks one per bound workload, before any candidate object is loaded;
// the runner confines itself (eval/candidate_confinement.h), loads the object and then runs
// arc_kernel on command. The worker keeps everything the candidate must not reach in its own
// memory: the reference, its outputs, the copies of the inputs the checks compare against, the
// comparison and the clock. Only the tensors a call works on are shared (an arena mapped
// MAP_SHARED before the fork, at the same address in both processes).
//
// Control: a shared page with sequence numbers. A call is ARM (the runner wakes from its futex
// and spins; outside the timed region, so its wake-up latency is too), then GO (the timed part:
// the worker's steady_clock from the GO to the runner's DONE), then the worker proves that the
// runner is blocked again on the command word (/proc/PID/syscall), that it runs no other thread
// (/proc/PID/status), and checks that it used no CPU time between runs (clock_getcpuclockid),
// when it should have been blocked. Nothing the runner writes is trusted beyond the candidate's
// own verdict: a DONE reported before arc_kernel returned moves the end of the sample to when
// the runner was seen blocked (beyond a 10 us grace), and work between runs (a signal handler
// the candidate arranged) fails it. What remains: a candidate that takes over its runner's own
// code could work in the microseconds between ARM and GO.
//
// The runner: PR_SET_PDEATHSIG SIGKILL (and getppid() checked), RLIMIT_CPU as a backstop, no
// core files, the worker's RLIMIT_AS (inherited), every descriptor closed but a pipe for its
// fatal-signal report, dumpable (so its parent may read /proc/PID/syscall; the worker itself is
// not dumpable: the runner cannot open /proc/<worker>/mem), then confined. Its death is the
// candidate's doing: CRASH naming the signal, TIMEOUT when it used up its CPU limit,
// OUT_OF_MEMORY when SIGKILLed (the kernel's OOM killer) or crashed with its address space at
// the memory limit. The worker survives it and forks a fresh runner for the next workload.
#include <cstdint>
#include <memory>
#include <string>

#include <sys/types.h>

#include "base/status.h"
#include "eval/device.h"
#include "eval/host_abi.h"

namespace arc::eval {

struct RunnerSetup {
  std::string object;      // the candidate's shared object (dlopen'ed by the runner)
  size_t arena_bytes = 0;  // shared memory for the buffer sets
  size_t max_inputs = 0, max_outputs = 0, max_axes = 0;  // sizes of one call's arguments
  uint64_t memory_limit_mb = 0;  // the RLIMIT_AS in force (0: none), for messages and the
                                 // out-of-memory classification
  uint64_t cpu_limit_s = 0;      // RLIMIT_CPU of the runner (soft; the hard limit is 5 s more);
                                 // 0: none
};

struct RunnerControl;  // the shared control page (eval/host_runner.cc)

class Runner {
 public:
  // Maps the shared memory, forks the runner and waits until it has confined itself and loaded
  // the object. nullptr with *failure set when it could not (LOAD_ERROR with dlerror()'s text,
  // or how it died while loading). Throws std::bad_alloc when the shared memory cannot be mapped.
  static std::unique_ptr<Runner> start(const RunnerSetup& setup, Failure* failure);
  ~Runner();  // SIGKILL and reap
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // The shared tensors: arena_bytes from here, 64-byte aligned.
  unsigned char* arena() const { return arena_; }
  // One call of arc_kernel(args), complete when this returns; `args` points into the arena.
  // *ns (when not null): the worker's steady_clock from the command to the completion. A failed
  // call (a non-zero return, an exception, a thread left running, CPU time between runs, the
  // runner's death) is the Step; `when` ("in timed run 3") ends its message. After a failure
  // the runner is discarded: later calls fail at once.
  Step call(const arc_host_args& args, const std::string& when, double* ns);
  pid_t pid() const { return pid_; }

 private:
  Runner() = default;
  // Waits until the reply word holds `want`; false when the runner died first (then *failure).
  bool await_reply(uint32_t want, int64_t spin_ns, const std::string& when, Failure* failure);
  // Polls until the runner is blocked waiting for a command; false when it died (*failure).
  bool await_idle(const std::string& when, Failure* failure);
  bool blocked_on_command() const;
  int threads() const;
  int64_t cpu_ns() const;
  // The runner has ended (reaped, or reaped here): what it means for the candidate.
  Failure death(const std::string& when);
  bool reap_if_dead();  // true when the runner is gone (status kept)
  void discard();

  RunnerControl* control_ = nullptr;
  size_t control_bytes_ = 0;
  unsigned char* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  RunnerSetup setup_;
  pid_t pid_ = -1;
  pid_t worker_parent_ = -1;  // arcd (or the sandbox): gone means nobody waits for the answer
  int report_fd_ = -1;        // the runner's fatal-signal report (worker.h's "fatal" frame)
  int syscall_fd_ = -1;       // /proc/PID/syscall (-1: unreadable; /proc/PID/stat is used)
  int stat_fd_ = -1, status_fd_ = -1;
  clockid_t cpu_clock_{};
  bool have_cpu_clock_ = false;
  bool reaped_ = false;
  int wait_status_ = 0;
  double reaped_cpu_s_ = 0;
  bool usable_ = false;
  uint32_t seq_ = 0;
  int64_t cpu_idle_ns_ = 0;  // the runner's CPU time when last seen blocked
  int64_t last_run_ns_ = 0;  // the last call's duration (how long to spin for the next)
};

// Whether a process forked from this one can confine itself (eval/candidate_confinement.h); run
// once when the worker starts, so that a worker that could not is "unavailable".
Status probe_candidate_confinement();

}  // namespace arc::eval
