#pragma once
// Child processes without a shell. spawn_process() starts a program with an explicit map of
// file descriptors (everything else closed, so a child never holds another child's pipe open);
// run_subprocess() runs one to completion under a timeout, feeds it its input and keeps a capped
// copy of what it printed. The host compiler runs g++ and the exec agent backend its command
// through run_subprocess(); the host evaluator starts its worker through spawn_process().
// Nothing here throws.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/status.h"

namespace arc::eval {

// Owns one file descriptor and closes it when destroyed.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A pipe with both ends close-on-exec: a child spawned by another thread at the same moment
// cannot inherit it (which would keep its write end open and hide EOF).
Status make_pipe(UniqueFd* read_end, UniqueFd* write_end);

// A resource limit set in the child before exec (soft = hard: the child cannot raise it).
struct ResourceLimit {
  int resource = 0;    // RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC, ...
  uint64_t value = 0;  // seconds, bytes or a count; lowered to the parent's hard limit
};

struct SpawnOptions {
  // {child fd, parent fd}: the parent's descriptor appears in the child under that number.
  // Child descriptors 0, 1 and 2 not named here are /dev/null; every other one is closed.
  std::vector<std::pair<int, int>> fds;
  // Put the child in a process group of its own, so killing -pid also kills what it forked.
  bool new_process_group = true;
  // The child gets SIGKILL when its parent dies (PR_SET_PDEATHSIG), so it never outlives a
  // killed engine; a parent that died before the child set it is noticed too. The kernel ties
  // this to the spawning THREAD: spawn from a thread that outlives the child.
  bool die_with_parent = true;
  std::vector<ResourceLimit> limits;
};

// Starts argv[0] (searched in PATH when it has no '/'). Fails, naming the program and errno,
// when it cannot be executed; the error is reported by the child before exec, not guessed.
Result<pid_t> spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options);

struct SubprocessOptions {
  double timeout_s = 120.0;  // past it the child's process group gets SIGKILL
  // Bytes of stdout (+stderr) kept; the rest is read and dropped.
  size_t output_cap = size_t{64} * 1024;
  // Written to the child's stdin, which is then closed; a child that stops reading does not
  // block the parent (the rest is dropped when it closes its end). Empty: stdin is /dev/null.
  std::string input;
  // stderr apart, in SubprocessResult::error_output (at most error_cap bytes); else stdout and
  // stderr are one stream, interleaved as the child wrote them.
  bool separate_stderr = false;
  size_t error_cap = size_t{16} * 1024;
  std::vector<ResourceLimit> limits;  // set in the child before exec (SpawnOptions::limits)
};

struct SubprocessResult {
  int exit_code = -1;        // the exit status when the child exited normally
  int signal = 0;            // the signal that ended it, 0 if none
  bool timed_out = false;    // the timeout fired (signal is then SIGKILL)
  std::string output;        // stdout (and stderr unless separate), at most output_cap bytes
  bool truncated = false;    // more output than output_cap was produced
  std::string error_output;  // stderr when separate_stderr, at most error_cap bytes
  double seconds = 0;        // wall time from spawn to reap

  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exited with status 1", "killed by signal 9 (SIGKILL)", "timed out after 120 s".
  std::string describe() const;
};

// Runs argv to completion under the timeout, feeding it `input` and reading what it prints.
// Fails only when the program cannot be started; how it ended (status, signal, timeout) is in
// the result.
Result<SubprocessResult> run_subprocess(const std::vector<std::string>& argv,
                                        const SubprocessOptions& options = {});

// Sends SIGKILL to the process group of `pid` (or to `pid` alone when it leads no group of its
// own) and reaps it. Returns the wait status.
int kill_and_reap(pid_t pid);

// "SIGSEGV"; "signal 64" for a number without a name.
std::string signal_name(int sig);
// "11 (SIGSEGV)".
std::string describe_signal(int sig);

}  // namespace arc::eval
