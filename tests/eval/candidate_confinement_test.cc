// confine_candidate() in a real child process: each case forks, confines the child, tries one
// thing a hostile candidate would and reports through its exit status what happened.
#include "eval/candidate_confinement.h"

#include <cerrno>
#include <csignal>
#include <functional>
#include <string>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace arc::eval {
namespace {

constexpr int kNotConfined = 101;

// Runs `attempt` in a confined child; returns its exit status (or 200 + signal).
int in_confined_child(const std::function<int()>& attempt) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!confine_candidate()) ::_exit(kNotConfined);
    ::_exit(attempt());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

// 0 when the call failed with `expected`, 1 when it succeeded, 2 when it failed otherwise.
int failed_with(long rc, int expected) {
  if (rc >= 0) return 1;
  return errno == expected ? 0 : 2;
}

TEST(CandidateConfinement, ThreadsStillRun) {
  EXPECT_EQ(in_confined_child([] {
              int value = 0;
              std::thread t([&] { value = 7; });
              t.join();
              return value == 7 ? 0 : 1;
            }),
            0);
}

TEST(CandidateConfinement, ForkIsRefused) {
  EXPECT_EQ(in_confined_child([] {
              pid_t p = ::fork();
              if (p == 0) ::_exit(0);  // a child that exists at all fails the test
              return failed_with(p, EPERM);
            }),
            0);
}

TEST(CandidateConfinement, RawCloneOfAProcessIsRefused) {
  EXPECT_EQ(in_confined_child([] {
              long p = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
              if (p == 0) ::_exit(0);
              return failed_with(p, EPERM);
            }),
            0);
}

TEST(CandidateConfinement, ExecIsRefused) {
  EXPECT_EQ(in_confined_child([] {
              char arg0[] = "/bin/true";
              char* argv[] = {arg0, nullptr};
              return failed_with(::execv("/bin/true", argv), EPERM);
            }),
            0);
}

TEST(CandidateConfinement, SignallingItsParentIsRefused) {
  // The test process itself is the parent: were the signal delivered, this test would die.
  EXPECT_EQ(in_confined_child([] { return failed_with(::kill(::getppid(), SIGKILL), EPERM); }), 0);
  EXPECT_EQ(in_confined_child([] { return failed_with(::kill(-1, SIGKILL), EPERM); }), 0);
  EXPECT_EQ(in_confined_child([] { return failed_with(::kill(0, SIGTERM), EPERM); }), 0);
}

TEST(CandidateConfinement, SignalsToItselfStillWork) {
  EXPECT_EQ(in_confined_child([] {
              ::signal(SIGUSR1, SIG_IGN);
              return ::raise(SIGUSR1) == 0 && ::kill(::getpid(), SIGUSR1) == 0 ? 0 : 1;
            }),
            0);
}

TEST(CandidateConfinement, NoSocketsOfAnyFamily) {
  EXPECT_EQ(
      in_confined_child([] { return failed_with(::socket(AF_INET, SOCK_STREAM, 0), EACCES); }), 0);
  EXPECT_EQ(
      in_confined_child([] { return failed_with(::socket(AF_UNIX, SOCK_STREAM, 0), EACCES); }), 0);
}

TEST(CandidateConfinement, CannotReadItsParentsMemory) {
  EXPECT_EQ(in_confined_child([] {
              char buf[8];
              iovec local{buf, sizeof buf};
              iovec remote{buf, sizeof buf};
              return failed_with(
                  ::syscall(SYS_process_vm_readv, ::getppid(), &local, 1, &remote, 1, 0), EPERM);
            }),
            0);
  // Without capabilities, /proc/<parent>/mem of a non-dumpable parent cannot be opened.
  ASSERT_EQ(::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
  int status = in_confined_child([] {
    std::string path = "/proc/" + std::to_string(::getppid()) + "/mem";
    int fd = ::open(path.c_str(), O_RDWR);
    return fd < 0 ? 0 : 1;
  });
  ASSERT_EQ(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace arc::eval
