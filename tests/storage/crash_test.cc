// A writer process is SIGKILLed in the middle of appending; every seq it acknowledged must be
// in the log afterwards. The writer is this test binary re-executed (fork + exec), so it starts
// with fresh RocksDB state instead of a fork of a process with background threads.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/journal.h"
#include "tests/events/sample_events.h"
#include "tests/storage/test_dir.h"

namespace arc::storage {
namespace {

constexpr char kDirEnv[] = "ARC_CRASH_WRITER_DIR";
constexpr char kModeEnv[] = "ARC_CRASH_WRITER_MODE";
constexpr char kFdEnv[] = "ARC_CRASH_WRITER_FD";
constexpr char kCampaign[] = "crash-campaign";

events::Event writer_event(uint64_t i) {
  fb::CandidateProposedT p;
  p.candidate_hash = std::to_string(i);
  p.agent = "agent-0";
  p.move = "knob:TILE=" + std::to_string(i % 128);
  p.view_seq = i;
  return events::make_event("agent-0", std::move(p));
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The child's body: appends until killed, reporting each acknowledged seq on the pipe.
// Skipped unless the parent test set the environment.
TEST(JournalCrashChild, DISABLED_Writer) {
  const char* dir = std::getenv(kDirEnv);
  const char* mode = std::getenv(kModeEnv);
  const char* fd_text = std::getenv(kFdEnv);
  if (dir == nullptr || mode == nullptr || fd_text == nullptr) GTEST_SKIP();
  const int fd = std::atoi(fd_text);
  JournalOptions o;
  o.durability = std::string(mode) == "sync" ? Durability::kSync : Durability::kBatch;
  auto j = Journal::open(dir, o);
  if (!j.ok() || !j.value()->set_campaign(kCampaign).is_ok()) std::_Exit(3);
  for (uint64_t i = 1;; ++i) {
    events::Event e = writer_event(i);
    auto seq = j.value()->append(e);
    if (!seq.ok()) std::_Exit(4);
    const uint64_t acked = *seq;
    if (!write_all(fd, &acked, sizeof acked)) std::_Exit(5);
  }
}

struct CrashOutcome {
  uint64_t max_acked = 0;
  size_t acks = 0;
  bool killed = false;
};

// Starts the writer, reads `kill_after` acknowledgements, SIGKILLs it, drains the pipe.
CrashOutcome run_and_kill(const std::string& dir, const std::string& mode, size_t kill_after) {
  CrashOutcome out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return out;
  // The write end must survive exec in the child.
  const int child_fd = ::fcntl(fds[1], F_DUPFD, 10);
  const std::string fd_text = std::to_string(child_fd);

  // Everything the child needs is built before fork: after fork only exec-safe calls.
  std::vector<std::string> env_store = {std::string(kDirEnv) + "=" + dir,
                                        std::string(kModeEnv) + "=" + mode,
                                        std::string(kFdEnv) + "=" + fd_text};
  for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string filter = "--gtest_filter=JournalCrashChild.DISABLED_Writer";
  std::string disabled = "--gtest_also_run_disabled_tests";
  char* argv[] = {exe.data(), filter.data(), disabled.data(), nullptr};

  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(127);
  }
  ::close(child_fd);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return out;
  }

  std::vector<char> buf;
  auto take = [&out, &buf] {
    size_t used = 0;
    while (buf.size() - used >= sizeof(uint64_t)) {
      uint64_t seq;
      std::memcpy(&seq, buf.data() + used, sizeof seq);
      used += sizeof seq;
      EXPECT_EQ(seq, out.max_acked + 1) << "acks out of order";
      out.max_acked = seq;
      ++out.acks;
    }
    buf.erase(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(used));
  };
  char chunk[4096];
  bool sent_kill = false;
  for (;;) {
    if (!sent_kill && out.acks >= kill_after) {
      ::kill(pid, SIGKILL);
      sent_kill = true;
    }
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is gone
    buf.insert(buf.end(), chunk, chunk + n);
    take();
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  out.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!out.killed) ADD_FAILURE() << "writer ended without SIGKILL, wait status " << status;
  return out;
}

void expect_nothing_acknowledged_lost(const std::string& mode, size_t kill_after) {
  testing::TempDir dir;
  const CrashOutcome c = run_and_kill(dir.path(), mode, kill_after);
  ASSERT_TRUE(c.killed);
  ASSERT_GE(c.acks, kill_after);

  {
    // What arc-replay sees of a crashed run: a read-only open replays the WAL too.
    JournalOptions ro;
    ro.read_only = true;
    ro.create_if_missing = false;
    auto r = Journal::open(dir.path(), ro);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_GE(r.value()->last_seq(), c.max_acked);
    auto all = r.value()->read_all();
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    EXPECT_GE(all->size(), c.max_acked);
  }
  auto j = Journal::open(dir.path(), JournalOptions{});
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  Journal& journal = *j.value();
  EXPECT_EQ(journal.campaign(), kCampaign);
  EXPECT_GE(journal.last_seq(), c.max_acked);
  uint64_t expected = 1;
  Status s = journal.read(1, 0, [&expected](uint64_t seq, const events::Event& e) {
    EXPECT_EQ(seq, expected);
    EXPECT_EQ(e.payload.AsCandidateProposed()->view_seq, seq) << "content of seq " << seq;
    ++expected;
    return true;
  });
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_EQ(expected - 1, journal.last_seq());
  EXPECT_GE(expected - 1, c.max_acked) << "acknowledged events lost";
  // The recovered journal keeps appending densely.
  events::Event e = writer_event(journal.last_seq() + 1);
  auto next = journal.append(e);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, expected);
}

TEST(JournalCrashTest, KilledBatchWriterLosesNothingAcknowledged) {
  expect_nothing_acknowledged_lost("batch", 20000);
}

TEST(JournalCrashTest, KilledSyncWriterLosesNothingAcknowledged) {
  expect_nothing_acknowledged_lost("sync", 200);
}

}  // namespace
}  // namespace arc::storage
