#include "actors/agent_backends.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <semaphore>
#include <thread>

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/sigpipe_guard.h"
#include "eval/subprocess.h"

namespace arc::actors {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string head(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

class LlmBackend : public AgentBackend {
 public:
  LlmBackend(LlmConfig c, std::string origin, std::string path, std::string key)
      : c_(std::move(c)),
        origin_(std::move(origin)),
        path_(std::move(path)),
        key_(std::move(key)),
        slots_(static_cast<std::ptrdiff_t>(c_.concurrency)) {}

  ExchangeReply exchange(const ExchangeRequest& request) override {
    slots_.acquire();
    struct Release {
      std::counting_semaphore<>* s;
      ~Release() { s->release(); }
    } release{&slots_};
    ExchangeReply r;
    const auto t0 = Clock::now();
    const time_t secs = static_cast<time_t>(c_.timeout_s);
    const time_t usecs = static_cast<time_t>((c_.timeout_s - static_cast<double>(secs)) * 1e6);
    for (uint32_t attempt = 0; attempt <= c_.retries; ++attempt) {
      r.attempts = attempt + 1;
      double retry_after = -1;
      bool retryable = false;
      try {
        httplib::Client cli(origin_);
        cli.set_connection_timeout(secs, usecs);
        cli.set_read_timeout(secs, usecs);
        cli.set_write_timeout(secs, usecs);
        httplib::Headers headers;
        if (!key_.empty()) headers.emplace("Authorization", "Bearer " + key_);
        auto res = cli.Post(path_.c_str(), headers, request.prompt, "application/json");
        if (!res) {
          r.error = "POST " + origin_ + path_ + " failed: " + httplib::to_string(res.error());
          retryable = true;
        } else if (res->status >= 200 && res->status < 300) {
          r.delivered = true;
          r.body = res->body;
          r.error.clear();
          break;
        } else {
          r.error = "POST " + origin_ + path_ + ": HTTP " + std::to_string(res->status) + ": " +
                    head(res->body, 300);
          retryable = res->status == 429 || res->status >= 500;
          if (res->has_header("Retry-After")) {
            char* end = nullptr;
            const std::string v = res->get_header_value("Retry-After");
            double s = std::strtod(v.c_str(), &end);
            if (end != v.c_str() && s >= 0 && s <= 60) retry_after = s;
          }
        }
      } catch (const std::exception& e) {
        r.error = std::string("POST failed: ") + e.what();
        retryable = true;
      }
      if (!retryable || attempt == c_.retries) break;
      const double wait = retry_after >= 0 ? retry_after : c_.backoff_s * std::ldexp(1.0, attempt);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    if (!r.delivered && r.attempts > 1) {
      r.error += " (after " + std::to_string(r.attempts) + " attempts)";
    }
    r.latency_ms = ms_since(t0);
    return r;
  }

 private:
  LlmConfig c_;
  std::string origin_, path_, key_;
  std::counting_semaphore<> slots_;
};

// Runs the command once per exchange: the context on stdin, stdout and stderr read to EOF,
// all under one deadline.
class ExecBackend : public AgentBackend {
 public:
  explicit ExecBackend(ExecConfig c) : c_(std::move(c)) {}

  ExchangeReply exchange(const ExchangeRequest& request) override {
    eval::SigpipeGuard no_sigpipe;
    ExchangeReply r;
    r.attempts = 1;
    const auto t0 = Clock::now();
    eval::UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
    const std::pair<eval::UniqueFd*, eval::UniqueFd*> pipes[] = {
        {&in_r, &in_w}, {&out_r, &out_w}, {&err_r, &err_w}};
    for (const auto& [a, b] : pipes) {
      if (Status s = eval::make_pipe(a, b); !s) {
        r.error = s.message();
        return r;
      }
    }
    eval::SpawnOptions so;
    so.fds = {{0, in_r.get()}, {1, out_w.get()}, {2, err_w.get()}};
    auto pid = eval::spawn_process(c_.command, so);
    if (!pid) {
      r.error = pid.status().message();
      r.latency_ms = ms_since(t0);
      return r;
    }
    in_r.reset();
    out_w.reset();
    err_w.reset();
    ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
    const std::string& data = request.context;
    size_t written = 0;
    std::string out, err;
    constexpr size_t kOutCap = 4u << 20, kErrCap = 16u << 10;
    bool timed_out = false;
    const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(c_.timeout_s));
    if (data.empty()) in_w.reset();
    while (out_r.valid() || err_r.valid()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      pollfd fds[3];
      int n = 0;
      int idx_in = -1, idx_out = -1, idx_err = -1;
      if (in_w.valid()) {
        idx_in = n;
        fds[n++] = {in_w.get(), POLLOUT, 0};
      }
      if (out_r.valid()) {
        idx_out = n;
        fds[n++] = {out_r.get(), POLLIN, 0};
      }
      if (err_r.valid()) {
        idx_err = n;
        fds[n++] = {err_r.get(), POLLIN, 0};
      }
      int rc = ::poll(fds, static_cast<nfds_t>(n),
                      static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (rc < 0 && errno != EINTR) break;
      if (rc <= 0) continue;
      if (idx_in >= 0 && fds[idx_in].revents != 0) {
        ssize_t w = ::write(in_w.get(), data.data() + written, data.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == data.size()) in_w.reset();
      }
      char buf[65536];
      for (auto [idx, fd, dst, cap] : {std::tuple{idx_out, &out_r, &out, kOutCap},
                                       std::tuple{idx_err, &err_r, &err, kErrCap}}) {
        if (idx < 0 || fds[idx].revents == 0) continue;
        ssize_t got = ::read(fd->get(), buf, sizeof buf);
        if (got > 0) {
          if (dst->size() < cap)
            dst->append(buf, std::min(static_cast<size_t>(got), cap - dst->size()));
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
          fd->reset();
        }
      }
    }
    in_w.reset();
    int status = 0;
    if (timed_out) {
      eval::kill_and_reap(*pid);
    } else {
      // stdout and stderr are closed: the command is ending; wait for it within the deadline.
      while (true) {
        pid_t w = ::waitpid(*pid, &status, WNOHANG);
        if (w == *pid) break;
        if (w < 0 && errno != EINTR) break;
        if (Clock::now() > deadline) {
          timed_out = true;
          status = eval::kill_and_reap(*pid);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    r.latency_ms = ms_since(t0);
    auto tail = [&err]() {
      return err.empty() ? ""
                         : ": " + head(err.substr(err.size() > 2000 ? err.size() - 2000 : 0), 2000);
    };
    if (timed_out) {
      r.error =
          "'" + c_.command[0] + "' timed out after " + std::to_string(c_.timeout_s) + " s" + tail();
    } else if (WIFSIGNALED(status)) {
      r.error = "'" + c_.command[0] + "' killed by signal " +
                eval::describe_signal(WTERMSIG(status)) + tail();
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      r.error = "'" + c_.command[0] + "' exited with status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + tail();
    } else {
      r.delivered = true;
      r.body = std::move(out);
    }
    return r;
  }

 private:
  ExecConfig c_;
};

}  // namespace

Result<std::unique_ptr<AgentBackend>> make_llm_backend(const LlmConfig& config) {
  const std::string& url = config.base_url;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return Status::invalid_argument("llm.base_url: expected an http:// or https:// URL, got \"" +
                                    url + "\"");
  }
  const size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  path += "/chat/completions";
  std::string key = config.api_key;
  if (key.empty() && !config.api_key_env.empty()) {
    if (const char* k = std::getenv(config.api_key_env.c_str()); k != nullptr) key = k;
  }
  return std::unique_ptr<AgentBackend>(
      new LlmBackend(config, std::move(origin), std::move(path), std::move(key)));
}

Result<std::unique_ptr<AgentBackend>> make_exec_backend(const ExecConfig& config) {
  if (config.command.empty()) {
    return Status::invalid_argument(
        "exec.command: expected the program and its arguments, got "
        "nothing");
  }
  return std::unique_ptr<AgentBackend>(new ExecBackend(config));
}

}  // namespace arc::actors
