#pragma once
// Runs arcd or arc-replay as a real child process and collects its exit code and output, with
// an optional limit on the size of any file it writes (RLIMIT_FSIZE, SIGXFSZ ignored, so a
// write past it fails with EFBIG: a full disk that needs no mount).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/scratch.h"

namespace arc::testing {

inline const std::filesystem::path kArcd = std::filesystem::path(ARC_BINARY_DIR) / "tools" / "arcd";
inline const std::filesystem::path kArcReplay =
    std::filesystem::path(ARC_BINARY_DIR) / "tools" / "arc-replay";

struct ProcessResult {
  int code = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
};

// `file_size_limit` 0: no limit.
inline ProcessResult run_process(const std::vector<std::string>& args, rlim_t file_size_limit = 0) {
  namespace fs = std::filesystem;
  const fs::path base =
      fs::temp_directory_path() / ("arc-proc-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(reinterpret_cast<uintptr_t>(&args)));
  const std::string out_path = base.string() + ".out";
  const std::string err_path = base.string() + ".err";
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) ::_exit(126);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (file_size_limit != 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit r{file_size_limit, file_size_limit};
      if (::setrlimit(RLIMIT_FSIZE, &r) != 0) ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ProcessResult r;
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid) {
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::error_code ec;
  fs::remove(out_path, ec);
  fs::remove(err_path, ec);
  return r;
}

}  // namespace arc::testing
