#pragma once
// One arcd per run directory. The process that runs or resumes a campaign holds
// <run dir>/arcd.lock with flock() and writes its pid into it; a second one is refused with
// "another arcd (pid N) holds this run" instead of meeting RocksDB's own LOCK error halfway
// through. The kernel drops a flock() when its holder dies, however it dies, so the lock of a
// killed arcd never blocks (the pid left in the file is only read for the message). The file
// is opened close-on-exec, so worker processes never inherit the lock, and the holder removes
// it as it lets go.
#include <filesystem>
#include <memory>

#include "base/status.h"

namespace arc::storage {

class RunLock {
 public:
  static constexpr char kFileName[] = "arcd.lock";

  // Takes the lock of `run_dir`, which must exist. Held by another process: an io_error naming
  // that process's pid and the run directory. Other failures name the file and the OS error.
  static Result<std::unique_ptr<RunLock>> acquire(const std::filesystem::path& run_dir);

  ~RunLock();  // removes the file, then lets go
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  RunLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace arc::storage
