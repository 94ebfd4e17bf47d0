#pragma once
// Real `arc-eval --serve` processes for the remote worker tests: started on 127.0.0.1 with a
// secret file, the port read from the line they print, stderr kept in a file.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/remote_protocol.h"
#include "eval/subprocess.h"
#include "eval/worker_secret.h"
#include "tests/scratch.h"

namespace arc::testing {

inline const std::filesystem::path kArcEval =
    std::filesystem::path(ARC_BINARY_DIR) / "tools" / "arc-eval";

// A new secret file under the test's scratch space.
inline std::filesystem::path new_secret_file(const std::string& name) {
  const std::filesystem::path p = scratch_path("remote", name);
  if (auto s = eval::write_new_worker_secret(p); !s) return {};
  return p;
}

class WorkerProcess {
 public:
  // Starts `arc-eval --serve 127.0.0.1:PORT --backend host --secret-file F --sandbox off
  // --cache DIR` and waits for its "serving on" line; null (with `why`) when it never came.
  static std::unique_ptr<WorkerProcess> start(const std::filesystem::path& secret_file,
                                              const std::filesystem::path& cache_dir, uint16_t port,
                                              std::string* why) {
    std::unique_ptr<WorkerProcess> w(new WorkerProcess());
    w->log_ = scratch_path(
        "remote", "worker-" + std::to_string(port) + "-" + std::to_string(counter()++) + ".stderr");
    const int err = ::open(w->log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    eval::UniqueFd err_fd(err);
    eval::UniqueFd out_read, out_write;
    if (!eval::make_pipe(&out_read, &out_write)) return nullptr;
    eval::SpawnOptions spawn;
    spawn.fds = {{1, out_write.get()}, {2, err_fd.get()}};
    auto pid = eval::spawn_process(
        {kArcEval.string(), "--serve", "127.0.0.1:" + std::to_string(port), "--backend", "host",
         "--secret-file", secret_file.string(), "--sandbox", "off", "--cache", cache_dir.string()},
        spawn);
    if (!pid) {
      *why = pid.status().to_string();
      return nullptr;
    }
    w->pid_ = pid.value();
    out_write.reset();
    w->stdout_ = std::move(out_read);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{w->stdout_.get(), POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(w->stdout_.get(), buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    const std::string prefix = "arc-eval: serving on ";
    const size_t at = line.find(prefix);
    const size_t space = line.find(' ', at == std::string::npos ? 0 : at + prefix.size());
    if (at != 0 || space == std::string::npos) {
      *why = "no serving line; stdout: " + line + "; stderr: " + w->stderr_text();
      return nullptr;
    }
    auto endpoint = eval::parse_worker_endpoint(line.substr(prefix.size(), space - prefix.size()));
    if (!endpoint) {
      *why = endpoint.status().to_string();
      return nullptr;
    }
    w->endpoint_ = endpoint.value();
    w->line_ = line.substr(0, line.find('\n'));
    return w;
  }

  // SIGTERM (it removes its private folders), then SIGKILL to what is left after 10 s.
  ~WorkerProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid_) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    eval::kill_and_reap(pid_);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  const eval::RemoteEndpoint& endpoint() const { return endpoint_; }
  const std::string& line() const { return line_; }
  pid_t pid() const { return pid_; }
  std::string stderr_text() const { return slurp(log_); }

  // SIGKILL to it and everything it started; reaped.
  void kill_hard() {
    if (pid_ > 0) eval::kill_and_reap(pid_);
    pid_ = -1;
  }
  // SIGTERM, then its exit status (as waitpid gives it).
  int stop() {
    int status = 0;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  WorkerProcess() = default;
  static int& counter() {
    static int n = 0;
    return n;
  }
  pid_t pid_ = -1;
  eval::UniqueFd stdout_;
  eval::RemoteEndpoint endpoint_;
  std::string line_;
  std::filesystem::path log_;
};

}  // namespace arc::testing
