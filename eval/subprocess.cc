#include "eval/subprocess.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/sigpipe_guard.h"

namespace arc::eval {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) { return std::strerror(err); }

// Closes [first, last] in the child; close_range needs Linux 5.9, the loop is the fallback.
void close_fds_between(int first, int last) {
  if (first > last) return;
  if (::close_range(static_cast<unsigned>(first), static_cast<unsigned>(last), 0) == 0) return;
  long open_max = ::sysconf(_SC_OPEN_MAX);
  int limit = static_cast<int>(std::min<long>(open_max > 0 ? open_max : 4096, 65536));
  for (int fd = first; fd <= std::min(last, limit); ++fd) ::close(fd);
}

// Runs in the forked child: only async-signal-safe calls until exec. Any failure is written as
// errno to `err_fd` and the child exits 127.
[[noreturn]] void child_exec(char* const* argv, const SpawnOptions& options, pid_t parent,
                             int err_fd) {
  const std::vector<std::pair<int, int>>& fds = options.fds;
  auto fail = [&err_fd](int err) {  // by reference: err_fd moves below
    ssize_t unused = ::write(err_fd, &err, sizeof err);
    (void)unused;
    ::_exit(127);
  };
  if (options.new_process_group) ::setpgid(0, 0);
  if (options.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail(errno);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
  }
  for (const ResourceLimit& l : options.limits) {
    rlimit cur{};
    if (::getrlimit(l.resource, &cur) != 0) fail(errno);
    rlim_t want = static_cast<rlim_t>(l.value);
    if (cur.rlim_max != RLIM_INFINITY && want > cur.rlim_max) want = cur.rlim_max;
    rlimit lim{want, want};
    if (::setrlimit(l.resource, &lim) != 0) fail(errno);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);

  int max_target = 2;
  for (const auto& [child_fd, parent_fd] : fds) max_target = std::max(max_target, child_fd);
  // Move everything above the targets first, so that dup2 never overwrites a source it still
  // needs (a parent fd may happen to carry a target's number).
  int err_hi = ::fcntl(err_fd, F_DUPFD_CLOEXEC, max_target + 1);
  if (err_hi < 0) fail(errno);
  err_fd = err_hi;
  int moved[16];
  size_t n = std::min<size_t>(fds.size(), 16);
  for (size_t i = 0; i < n; ++i) {
    moved[i] = ::fcntl(fds[i].second, F_DUPFD, max_target + 1);
    if (moved[i] < 0) fail(errno);
  }
  bool mapped[3] = {false, false, false};
  for (size_t i = 0; i < n; ++i) {
    if (::dup2(moved[i], fds[i].first) < 0) fail(errno);
    if (fds[i].first <= 2) mapped[fds[i].first] = true;
  }
  if (!mapped[0] || !mapped[1] || !mapped[2]) {
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd < 0) fail(errno);
    for (int fd = 0; fd <= 2; ++fd) {
      if (!mapped[fd] && ::dup2(null_fd, fd) < 0) fail(errno);
    }
    if (null_fd > 2) ::close(null_fd);
  }
  close_fds_between(max_target + 1, err_fd - 1);
  close_fds_between(err_fd + 1, INT_MAX);
  ::execvp(argv[0], argv);
  fail(errno);
  ::_exit(127);  // unreachable; keeps [[noreturn]] honest for the compiler
}

}  // namespace

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Status make_pipe(UniqueFd* read_end, UniqueFd* write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Status::io_error("pipe2: " + errno_text(errno));
  read_end->reset(p[0]);
  write_end->reset(p[1]);
  return Status::ok();
}

Result<pid_t> spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return Status::invalid_argument("spawn: empty command");
  if (options.fds.size() > 16) return Status::invalid_argument("spawn: more than 16 fds");
  // Everything the child touches is prepared before fork: after fork only the calling thread
  // exists, and another thread may have held the allocator's lock.
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  UniqueFd err_read, err_write;
  if (Status s = make_pipe(&err_read, &err_write); !s) return s;
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Status::io_error("fork: " + errno_text(errno));
  if (pid == 0) child_exec(cargv.data(), options, parent, err_write.get());
  if (options.new_process_group) ::setpgid(pid, pid);  // also here: no race with kill(-pid)
  err_write.reset();
  int child_errno = 0;
  ssize_t got;
  do {
    got = ::read(err_read.get(), &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return Status::unavailable("cannot execute '" + argv[0] + "': " + errno_text(child_errno));
  }
  return pid;
}

int kill_and_reap(pid_t pid) {
  if (pid <= 0) return 0;
  // Only signal the group when the child really leads one; kill(-our group) would be suicide.
  if (::getpgid(pid) == pid) {
    ::kill(-pid, SIGKILL);
  } else {
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string SubprocessResult::describe() const {
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "timed out after %.3g s", seconds);
    return buf;
  }
  if (signal != 0) return "killed by signal " + describe_signal(signal);
  return "exited with status " + std::to_string(exit_code);
}

Result<SubprocessResult> run_subprocess(const std::vector<std::string>& argv,
                                        const SubprocessOptions& options) {
  UniqueFd in_read, in_write, out_read, out_write, err_read, err_write;
  if (Status s = make_pipe(&out_read, &out_write); !s) return s;
  if (!options.input.empty()) {
    if (Status s = make_pipe(&in_read, &in_write); !s) return s;
  }
  if (options.separate_stderr) {
    if (Status s = make_pipe(&err_read, &err_write); !s) return s;
  }
  SpawnOptions spawn;
  spawn.fds = {{1, out_write.get()},
               {2, options.separate_stderr ? err_write.get() : out_write.get()}};
  if (in_read.valid()) spawn.fds.push_back({0, in_read.get()});
  spawn.limits = options.limits;
  // A child that exits without reading its input must not kill us with SIGPIPE.
  SigpipeGuard no_sigpipe;
  auto start = Clock::now();
  auto pid = spawn_process(argv, spawn);
  if (!pid) return pid.status();
  in_read.reset();
  out_write.reset();
  err_write.reset();
  if (in_write.valid())
    ::fcntl(in_write.get(), F_SETFL, ::fcntl(in_write.get(), F_GETFL) | O_NONBLOCK);

  SubprocessResult result;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options.timeout_s));
  size_t written = 0;
  char buf[16384];
  // Until stdout and stderr are both closed: the child (and whatever it forked) is done writing.
  while (out_read.valid() || err_read.valid()) {
    auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd p[3];
    nfds_t n = 0;
    UniqueFd* fd_of[3];
    for (UniqueFd* fd : {&in_write, &out_read, &err_read}) {
      if (!fd->valid()) continue;
      p[n] = {fd->get(), static_cast<short>(fd == &in_write ? POLLOUT : POLLIN), 0};
      fd_of[n++] = fd;
    }
    int r = ::poll(p, n, static_cast<int>(std::clamp<long long>(left + 1, 1, 1000)));
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t k = 0; k < n; ++k) {
      if (p[k].revents == 0) continue;
      UniqueFd* fd = fd_of[k];
      if (fd == &in_write) {
        ssize_t w =
            ::write(fd->get(), options.input.data() + written, options.input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == options.input.size()) {
          fd->reset();
        }
        continue;
      }
      ssize_t got = ::read(fd->get(), buf, sizeof buf);
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        fd->reset();
        continue;
      }
      if (got == 0) {
        fd->reset();
        continue;
      }
      const bool is_err = fd == &err_read;
      std::string& dst = is_err ? result.error_output : result.output;
      const size_t cap = is_err ? options.error_cap : options.output_cap;
      size_t room = cap - std::min(cap, dst.size());
      dst.append(buf, std::min(room, static_cast<size_t>(got)));
      if (!is_err && static_cast<size_t>(got) > room) result.truncated = true;
    }
  }
  in_write.reset();

  int status = 0;
  bool reaped = false;
  // Output closed does not mean exited: wait for it, still under the deadline.
  while (!result.timed_out) {
    pid_t w = ::waitpid(*pid, &status, WNOHANG);
    if (w == *pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!reaped) status = kill_and_reap(*pid);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  if (abbrev == nullptr) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev;
}

std::string describe_signal(int sig) { return std::to_string(sig) + " (" + signal_name(sig) + ")"; }

}  // namespace arc::eval
