#pragma once
// Real `arc-eval --serve` processes for the remote worker tests: started on 127.0.0.1 with a
// secret file, the port read from the line they print, stderr kept in a file.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <signal.h>

#include "eval/remote_protocol.h"
#include "eval/serve_process.h"
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

// A worker for a test: eval::ServeProcess with the tests' arguments.
class WorkerProcess {
 public:
  // Starts `arc-eval --serve 127.0.0.1:PORT <backend> --secret-file F --sandbox off --cache DIR`
  // and waits for its "serving on" line; null (with `why`) when it never came.
  static std::unique_ptr<WorkerProcess> start(const std::filesystem::path& secret_file,
                                              const std::filesystem::path& cache_dir, uint16_t port,
                                              std::string* why,
                                              const std::vector<std::string>& backend = {
                                                  "--backend", "host"}) {
    const std::filesystem::path log = scratch_path(
        "remote", "worker-" + std::to_string(port) + "-" + std::to_string(counter()++) + ".stderr");
    std::vector<std::string> args = backend;
    args.insert(args.end(), {"--secret-file", secret_file.string(), "--sandbox", "off", "--cache",
                             cache_dir.string()});
    auto p = eval::ServeProcess::start(kArcEval, "127.0.0.1:" + std::to_string(port), args, log);
    if (!p) {
      *why = p.status().to_string();
      return nullptr;
    }
    std::unique_ptr<WorkerProcess> w(new WorkerProcess());
    w->process_ = std::move(p.value());
    return w;
  }

  const eval::RemoteEndpoint& endpoint() const { return process_->endpoint(); }
  const std::string& line() const { return process_->line(); }
  pid_t pid() const { return process_->pid(); }
  std::string stderr_text() const { return process_->stderr_text(); }
  // SIGKILL to it and everything it started; reaped.
  void kill_hard() { process_->kill_hard(); }
  // SIGTERM, then its exit status (as waitpid gives it).
  int stop() { return process_->stop(SIGTERM); }

 private:
  WorkerProcess() = default;
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::unique_ptr<eval::ServeProcess> process_;  // terminated when this goes
};

}  // namespace arc::testing
