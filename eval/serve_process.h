#pragma once
// A remote worker started on this machine: `arc-eval --serve ADDR:PORT ...` (eval/remote_worker.h)
// as a child process, its endpoint read from the one line it prints once it listens. For
// benchmarks (arc-bench --workers) and tests that need real workers on loopback. Nothing here
// throws.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/status.h"
#include "eval/remote_protocol.h"

namespace arc::eval {

class ServeProcess {
 public:
  // Starts `arc_eval --serve <address> <args...>` with stderr to `stderr_file` and waits up to
  // `timeout_s` for "arc-eval: serving on HOST:PORT ..."; fails naming what it printed.
  static Result<std::unique_ptr<ServeProcess>> start(const std::filesystem::path& arc_eval,
                                                     const std::string& address,
                                                     const std::vector<std::string>& args,
                                                     const std::filesystem::path& stderr_file,
                                                     double timeout_s = 60);
  ~ServeProcess();  // terminate(10) if it still runs
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  const RemoteEndpoint& endpoint() const { return endpoint_; }
  const std::string& line() const { return line_; }  // the "serving on" line
  pid_t pid() const { return pid_; }                 // -1 once stopped
  // Sends `signal` and reaps the worker; its wait status (-1 when it was not running).
  int stop(int signal);
  // SIGTERM (it removes its private folders), then SIGKILL to its process group after
  // `grace_s`; reaped.
  void terminate(double grace_s);
  // SIGKILL to it and everything it started; reaped.
  void kill_hard();
  // What it wrote to stderr so far.
  std::string stderr_text() const;

 private:
  ServeProcess() = default;
  pid_t pid_ = -1;
  RemoteEndpoint endpoint_;
  std::string line_;
  std::filesystem::path stderr_file_;
};

}  // namespace arc::eval
