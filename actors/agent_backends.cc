#include "actors/agent_backends.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <semaphore>
#include <thread>

#include <httplib.h>

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
    ExchangeReply r;
    r.attempts = 1;
    const auto t0 = Clock::now();
    eval::SubprocessOptions o;
    o.timeout_s = c_.timeout_s;
    o.output_cap = 4u << 20;
    o.input = request.context;
    o.separate_stderr = true;
    o.error_cap = 16u << 10;
    auto run = eval::run_subprocess(c_.command, o);
    r.latency_ms = ms_since(t0);
    if (!run) {
      r.error = run.status().message();
      return r;
    }
    if (run->ok()) {
      r.delivered = true;
      r.body = std::move(run->output);
      return r;
    }
    const std::string& err = run->error_output;
    const std::string tail =
        err.empty() ? "" : ": " + head(err.substr(err.size() > 2000 ? err.size() - 2000 : 0), 2000);
    r.error = "'" + c_.command[0] + "' " +
              (run->timed_out ? "timed out after " + std::to_string(c_.timeout_s) + " s"
                              : run->describe()) +
              tail;
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
