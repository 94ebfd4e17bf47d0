#include "storage/run_lock.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace arc::storage {
namespace {

// A holder that has just taken the lock may not have written its pid yet.
constexpr int kPidReadTries = 50;
constexpr auto kPidReadPause = std::chrono::milliseconds(10);
// Each retry follows a holder that removed the file between our open and our flock.
constexpr int kAcquireTries = 16;

std::string os_error(const std::filesystem::path& path, const std::string& what) {
  return path.string() + ": " + what + ": " + std::strerror(errno);
}

// The pid the holder wrote, or "unknown".
std::string holder_pid(int fd) {
  for (int i = 0; i < kPidReadTries; ++i) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return text;
    std::this_thread::sleep_for(kPidReadPause);
  }
  return "unknown";
}

}  // namespace

Result<std::unique_ptr<RunLock>> RunLock::acquire(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / kFileName;
  for (int attempt = 0; attempt < kAcquireTries; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::io_error(os_error(path, "cannot open the run's lock file"));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        const Status s = Status::io_error(os_error(path, "cannot lock"));
        ::close(fd);
        return s;
      }
      const std::string pid = holder_pid(fd);
      ::close(fd);
      return Status::io_error("another arcd (pid " + pid + ") holds this run: " + run_dir.string() +
                              " (" + path.string() + "); wait for it to end or stop it first");
    }
    // The file we locked must still be the one at `path`: a holder removes it as it lets go,
    // and a lock on a removed file guards nothing.
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0 ||
        held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const Status s = Status::io_error(os_error(path, "cannot write the pid"));
      ::unlink(path.c_str());
      ::close(fd);
      return s;
    }
    return std::unique_ptr<RunLock>(new RunLock(fd, path));
  }
  return Status::io_error(path.string() + ": the lock file kept being replaced; try again");
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace arc::storage
