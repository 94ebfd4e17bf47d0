#include "eval/serve_process.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/subprocess.h"

namespace arc::eval {

Result<std::unique_ptr<ServeProcess>> ServeProcess::start(const std::filesystem::path& arc_eval,
                                                          const std::string& address,
                                                          const std::vector<std::string>& args,
                                                          const std::filesystem::path& stderr_file,
                                                          double timeout_s) {
  std::unique_ptr<ServeProcess> w(new ServeProcess());
  w->stderr_file_ = stderr_file;
  UniqueFd err(::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!err.valid()) return Status::io_error("cannot write " + stderr_file.string());
  UniqueFd out_read, out_write;
  if (auto s = make_pipe(&out_read, &out_write); !s) return s;
  std::vector<std::string> argv = {arc_eval.string(), "--serve", address};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions spawn;
  spawn.fds = {{1, out_write.get()}, {2, err.get()}};
  auto pid = spawn_process(argv, spawn);
  if (!pid) return pid.status();
  w->pid_ = pid.value();
  out_write.reset();
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out_read.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    const ssize_t n = ::read(out_read.get(), buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  const std::string prefix = "arc-eval: serving on ";
  const size_t space = line.find(' ', prefix.size());
  if (line.rfind(prefix, 0) != 0 || space == std::string::npos) {
    return Status::unavailable("arc-eval --serve " + address + " did not start (stdout: \"" + line +
                               "\", stderr: \"" + w->stderr_text() + "\")");
  }
  auto endpoint = parse_worker_endpoint(line.substr(prefix.size(), space - prefix.size()));
  if (!endpoint) return endpoint.status();
  w->endpoint_ = endpoint.value();
  w->line_ = line.substr(0, line.find('\n'));
  return w;
}

ServeProcess::~ServeProcess() { terminate(10); }

int ServeProcess::stop(int signal) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

void ServeProcess::terminate(double grace_s) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      break;
    }
    ::usleep(10000);
  }
  kill_hard();
}

void ServeProcess::kill_hard() {
  if (pid_ > 0) kill_and_reap(pid_);
  pid_ = -1;
}

std::string ServeProcess::stderr_text() const {
  std::ifstream in(stderr_file_);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace arc::eval
