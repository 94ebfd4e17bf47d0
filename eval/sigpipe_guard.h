#ifndef ARC_EVAL_SIGPIPE_GUARD_H_
#define ARC_EVAL_SIGPIPE_GUARD_H_

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace arc::eval {

// Blocks SIGPIPE on this thread for its lifetime and swallows one raised meanwhile, so that a
// write to a pipe whose reader is gone (a worker or an exec agent that exited) returns EPIPE
// instead of killing the process.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        sigtimedwait(&set_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t set_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace arc::eval

#endif  // ARC_EVAL_SIGPIPE_GUARD_H_
