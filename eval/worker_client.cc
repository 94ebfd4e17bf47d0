#include "eval/worker_client.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/protocol.h"
#include "eval/subprocess.h"

namespace arc::eval {

using problem::Candidate;
using problem::Variant;
using problem::Workload;
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::optional<fb::WorkloadStatus> parse_status(const std::string& name) {
  for (fb::WorkloadStatus s : fb::EnumValuesWorkloadStatus()) {
    if (name == fb::EnumNameWorkloadStatus(s)) return s;
  }
  return std::nullopt;
}

// Waits for `pid` to exit (without reaping it) until the deadline.
bool wait_exit(pid_t pid, Deadline deadline) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The signal that ended the worker, 0 if none. A sandboxed worker's status is bubblewrap's,
// which exits 128 + N when its program died of signal N; the worker's own report of a fatal
// signal ("fatal") names it where it could send one.
int ended_by_signal(int status, const std::optional<json>& fatal, bool sandboxed) {
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  if (!WIFEXITED(status)) return 0;
  if (fatal && fatal->contains("signal")) return fatal->value("signal", 0);
  const int code = WEXITSTATUS(status);
  return sandboxed && code > 128 && code < 128 + 65 ? code - 128 : 0;
}

// Whether `pid` or one of its descendants (through /proc/PID/task/*/children) is stopped.
bool tree_stopped(pid_t pid, int depth) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close != std::string::npos && close + 2 < text.size() &&
      (text[close + 2] == 'T' || text[close + 2] == 't')) {
    return true;
  }
  if (depth >= 4) return false;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream children(task.path() / "children");
    pid_t child = 0;
    while (children >> child) {
      if (tree_stopped(child, depth + 1)) return true;
    }
  }
  return false;
}

}  // namespace

// A running arc-eval --worker with its two pipes. Destruction stops it (politely, then not).
class WorkerProcess {
 public:
  static Result<std::unique_ptr<WorkerProcess>> start(const WorkerClientOptions& options,
                                                      uint64_t memory_limit_mb) {
    const fs::path& path = options.worker_path;
    const std::vector<std::string>& extra = options.extra_args;
    const double start_timeout_s = options.start_timeout_s;
    UniqueFd req_read, req_write, rep_read, rep_write;
    if (Status s = make_pipe(&req_read, &req_write); !s) return s;
    if (Status s = make_pipe(&rep_read, &rep_write); !s) return s;
    SpawnOptions spawn;
    spawn.fds = {{3, req_read.get()}, {4, rep_write.get()}};
    std::vector<std::string> argv = {path.string(), "--worker", "--in", "3", "--out", "4"};
    if (memory_limit_mb > 0) {
      argv.push_back("--memory-mb");
      argv.push_back(std::to_string(memory_limit_mb));
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    SandboxProfile profile = options.profile;
    for (const fs::path& p : program_paths(path)) profile.read_only.push_back(p);
    // A runaway worker whose parent is gone must not write files without bound either.
    spawn.limits = {{RLIMIT_FSIZE, uint64_t{64} << 20}, {RLIMIT_CORE, 0}};
    auto pid = spawn_process(options.sandbox.wrap(profile, argv), spawn);
    if (!pid) return pid.status();
    std::unique_ptr<WorkerProcess> w(
        new WorkerProcess(*pid, std::move(req_write), std::move(rep_read), memory_limit_mb));
    req_read.reset();
    rep_write.reset();  // else EOF from a dead worker would never come
    auto ready = read_message(w->from_worker_.get(), deadline_after(start_timeout_s));
    if (!ready || ready->value("op", "") != "ready") {
      std::string why = !ready ? ready.status().to_string()
                        : ready->value("op", "") == "unavailable"
                            ? ready->value("error", std::string("no device"))
                            : "it sent " + ready->dump();
      int status = w->kill();
      if (WIFEXITED(status))
        why += "; it exited with status " + std::to_string(WEXITSTATUS(status));
      if (WIFSIGNALED(status)) why += "; killed by signal " + describe_signal(WTERMSIG(status));
      return Status::unavailable("the worker " + path.string() + " did not start: " + why);
    }
    w->ready_ = std::move(*ready);
    return w;
  }

  ~WorkerProcess() {
    if (pid_ <= 0) return;
    (void)write_message(to_worker_.get(), json{{"op", "shutdown"}}, deadline_after(0.1));
    to_worker_.reset();
    wait_exit(pid_, deadline_after(0.5));
    kill_and_reap(pid_);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool alive() const { return pid_ > 0 && !wait_exit(pid_, Clock::now()); }
  int to_worker() const { return to_worker_.get(); }
  int from_worker() const { return from_worker_.get(); }
  uint64_t memory_limit_mb() const { return memory_limit_mb_; }
  // The limit the worker says it set ("ready"): 0 where it set none (under ASan).
  uint64_t enforced_memory_limit_mb() const {
    return ready_.value("memory_limit_mb", memory_limit_mb_);
  }
  const json& ready() const { return ready_; }

  // SIGKILL to its process group (what a candidate forked goes too); returns the wait status.
  int kill() {
    if (pid_ <= 0) return 0;
    int status = kill_and_reap(pid_);
    pid_ = -1;
    return status;
  }
  // Whether it, or a process it started (the sandbox's worker under bubblewrap), is stopped
  // (SIGSTOP from outside: state T or t in /proc/PID/stat).
  bool stopped() const { return pid_ > 0 && tree_stopped(pid_, 0); }
  // After EOF: it is exiting; give it `seconds` to finish, then kill. Returns the wait status.
  int reap(double seconds) {
    wait_exit(pid_, deadline_after(seconds));
    return kill();
  }

 private:
  WorkerProcess(pid_t pid, UniqueFd to, UniqueFd from, uint64_t limit)
      : pid_(pid),
        to_worker_(std::move(to)),
        from_worker_(std::move(from)),
        memory_limit_mb_(limit) {}
  pid_t pid_;
  UniqueFd to_worker_, from_worker_;
  uint64_t memory_limit_mb_;
  json ready_;
};

namespace {

// A number, or "inf", "-inf", "nan" (how the worker sends what JSON cannot hold); `fallback`
// when absent. Throws json::exception on anything else.
double number(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return it->get<double>();
}

// Throws json::exception on a reply of the wrong shape (the caller treats it as garbage).
std::unique_ptr<fb::WorkloadEvaluationT> workload_from_json(const json& j) {
  auto w = std::make_unique<fb::WorkloadEvaluationT>();
  w->workload = j.at("workload").get<std::string>();
  auto status = parse_status(j.at("status").get<std::string>());
  if (!status) throw json::other_error::create(501, "unknown status " + j.at("status").dump(), &j);
  w->status = *status;
  w->error = j.value("error", "");
  w->samples_ns = j.value("samples_ns", std::vector<double>{});
  w->median_ns = number(j, "median_ns", 0.0);
  w->p25_ns = number(j, "p25_ns", 0.0);
  w->p75_ns = number(j, "p75_ns", 0.0);
  w->min_ns = number(j, "min_ns", 0.0);
  w->spread = number(j, "spread", 0.0);
  w->sol_ns = number(j, "sol_ns", 0.0);
  w->method = j.value("method", "steady_clock");
  w->max_abs_error = number(j, "max_abs_error", 0.0);
  w->matched_ratio = number(j, "matched_ratio", 0.0);
  w->rounds = j.value("rounds", 0u);
  w->sol_floor_ns = number(j, "sol_floor_ns", 0.0);
  if (auto it = j.find("details"); it != j.end() && it->is_array()) {
    for (const json& kv : *it) {
      auto d = std::make_unique<fb::KeyValueT>();
      d->key = kv.at("key").get<std::string>();
      d->value = kv.at("value").get<std::string>();
      w->details.push_back(std::move(d));
    }
  }
  return w;
}

}  // namespace

std::unique_ptr<fb::WorkloadEvaluationT> make_workload(const std::string& name,
                                                       fb::WorkloadStatus status, std::string error,
                                                       const std::string& method) {
  auto w = std::make_unique<fb::WorkloadEvaluationT>();
  w->workload = name;
  w->status = status;
  w->error = std::move(error);
  w->method = method;
  return w;
}

fs::path default_worker_path() {
  if (const char* v = std::getenv("ARC_EVAL"); v != nullptr && *v != '\0') return v;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "arc-eval";
  fs::path dir = exe.parent_path();
  for (const fs::path& p :
       {dir / "arc-eval", dir / ".." / "tools" / "arc-eval", dir / ".." / "bin" / "arc-eval"}) {
    if (fs::exists(p, ec)) return p.lexically_normal();
  }
  return dir / "arc-eval";  // absent: starting the worker will say so with this path
}

std::vector<Variant> distinct_variants(const Candidate& c, const std::vector<Workload>& workloads) {
  std::vector<Variant> out = {c.base};
  std::set<std::string> seen = {c.base.key()};
  auto add = [&](const Variant& v) {
    if (seen.insert(v.key()).second) out.push_back(v);
  };
  for (const auto& w : workloads) add(c.variant_for(w.name));
  for (const auto& [name, v] : c.gates) add(v);
  return out;
}

fb::CompileFinishedT compile_failure(const Candidate& c, const std::string& hash,
                                     const std::string& error) {
  fb::CompileFinishedT out;
  out.candidate_hash = hash;
  out.ok = false;
  auto v = std::make_unique<fb::CompiledVariantT>();
  v->variant = c.base.key();
  v->error = error;
  out.variants.push_back(std::move(v));
  return out;
}

WorkerClient::WorkerClient(WorkerClientOptions options) : options_(std::move(options)) {}

WorkerClient::~WorkerClient() = default;

Status WorkerClient::ensure(uint64_t memory_limit_mb) {
  if (worker_ && worker_->memory_limit_mb() != memory_limit_mb) worker_.reset();
  if (worker_ && !worker_->alive()) lose();
  if (worker_) return Status::ok();
  auto w = WorkerProcess::start(options_, memory_limit_mb);
  if (!w) return w.status();
  worker_ = std::move(*w);
  return Status::ok();
}

bool WorkerClient::running() const { return worker_ != nullptr; }

uint64_t WorkerClient::memory_limit_mb() const { return worker_ ? worker_->memory_limit_mb() : 0; }

const json& WorkerClient::ready() const {
  static const json empty = json::object();
  return worker_ ? worker_->ready() : empty;
}

void WorkerClient::lose() {
  worker_.reset();  // stops it if it still runs
  ++restarts_;
}

Result<json> WorkerClient::call(const json& request, const std::string& reply_op,
                                double timeout_s) {
  if (!worker_) return Status::unavailable("no worker is running");
  auto deadline = deadline_after(timeout_s);
  Status s = write_message(worker_->to_worker(), request, deadline);
  Result<json> reply = s ? read_message(worker_->from_worker(), deadline) : Result<json>(s);
  if (!reply || reply->value("op", "") != reply_op) {
    std::string why =
        reply ? "it replied " + reply->dump().substr(0, 400) : reply.status().to_string();
    lose();
    return Status::unavailable(why);
  }
  return reply;
}

bool WorkerClient::worker_lost(fb::CandidateEvaluatedT* out,
                               std::vector<std::unique_ptr<fb::WorkloadEvaluationT>>& done,
                               const std::vector<std::string>& workloads, int current,
                               const std::string& phase, const std::optional<json>& fatal,
                               const Status& why, const EvalSettings& settings) {
  const bool timed_out = why.code() == Status::Code::kTimeout;
  const bool eof = why.code() == Status::Code::kUnavailable;
  const bool stopped = timed_out && worker_->stopped();
  const uint64_t limit_mb = worker_->enforced_memory_limit_mb();
  const int status = eof ? worker_->reap(1.0) : worker_->kill();
  lose();
  out->worker_restarts += 1;

  const size_t n = workloads.size();
  const size_t at = current < 0 ? 0 : std::min(static_cast<size_t>(current), n - 1);
  const std::string name = n == 0 ? "" : workloads[at];
  const std::string where =
      " while running workload " + name + (phase.empty() ? "" : " (" + phase + ")");
  fb::WorkloadStatus verdict = fb::WorkloadStatus::CRASH;
  std::string error;
  if (timed_out) {
    verdict = fb::WorkloadStatus::TIMEOUT;
    error = "the candidate ran past its timeout of " + fmt_seconds(settings.timeout_s) + " s" +
            where + "; the worker was killed";
  } else if (!eof) {
    error = "the worker sent an unreadable message" + where + " (" + why.to_string() +
            "); it was killed";
  } else if (const int sig = ended_by_signal(status, fatal, options_.sandbox.enabled()); sig != 0) {
    error = "worker killed by signal " + describe_signal(sig) + where;
    if (fatal && fatal->contains("address") && (sig == SIGSEGV || sig == SIGBUS)) {
      // Only the address's class: a candidate must not spell out data through its crashes.
      const uint64_t address = fatal->value("address", uint64_t{0});
      error += address == 0        ? " at address 0x0"
               : address < 0x10000 ? " at an address near 0x0"
                                   : " at a non-null address";
    }
    const uint64_t vm_kb = fatal ? fatal->value("vm_size_kb", uint64_t{0}) : 0;
    if (sig == SIGKILL) {
      verdict = fb::WorkloadStatus::OUT_OF_MEMORY;
      error +=
          " (not by the watchdog: most likely the kernel's out-of-memory killer; "
          "classified as out of memory)";
    } else if (limit_mb > 0 && vm_kb * 10 >= limit_mb * 1024 * 9) {
      verdict = fb::WorkloadStatus::OUT_OF_MEMORY;
      error += "; its address space was " + std::to_string(vm_kb / 1024) + " of " +
               std::to_string(limit_mb) +
               " MiB (the memory limit), so this is classified as out of memory (an "
               "allocation failed and its failure was not handled)";
    }
  } else if (WIFEXITED(status)) {
    error = "worker exited with status " + std::to_string(WEXITSTATUS(status)) + where +
            " (did the candidate call exit()?)";
  } else {
    error = "the worker closed its pipe" + where + " and was killed";
  }

  out->workloads.clear();
  for (size_t i = 0; i < n; ++i) {
    if (i < at && i < done.size() && done[i]) {
      out->workloads.push_back(std::move(done[i]));
    } else if (i == at) {
      out->workloads.push_back(make_workload(workloads[i], verdict, error, options_.method));
    } else {
      out->workloads.push_back(make_workload(
          workloads[i], fb::WorkloadStatus::NOT_RUN,
          i < at ? "result lost with the worker" : "not run: workload " + name + " failed",
          options_.method));
    }
  }
  const int sig = eof ? ended_by_signal(status, fatal, options_.sandbox.enabled()) : 0;
  const bool from_outside =
      (sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) &&
      !(fatal && fatal->contains("signal"));
  return stopped || from_outside;
}

void WorkerClient::evaluate(const json& request, const std::vector<std::string>& workloads,
                            const EvalSettings& settings, fb::CandidateEvaluatedT* out) {
  std::string first_loss;
  if (!evaluate_once(request, workloads, settings, out, &first_loss)) return;
  // An infrastructure fault: once more on a fresh worker, before any verdict.
  const uint64_t limit = worker_ ? worker_->memory_limit_mb() : settings.memory_limit_mb;
  out->workloads.clear();
  if (Status s = ensure(limit); !s) {
    for (const std::string& w : workloads) {
      out->workloads.push_back(make_workload(
          w, fb::WorkloadStatus::CRASH,
          "the worker was lost (" + first_loss + ") and could not be restarted: " + s.message(),
          options_.method));
    }
    return;
  }
  std::string second_loss;
  (void)evaluate_once(request, workloads, settings, out, &second_loss);
  if (!out->workloads.empty()) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = "retried";
    kv->value = "on a fresh worker after an infrastructure fault: " + first_loss;
    out->workloads.front()->details.push_back(std::move(kv));
  }
}

bool WorkerClient::evaluate_once(const json& request, const std::vector<std::string>& workloads,
                                 const EvalSettings& settings, fb::CandidateEvaluatedT* out,
                                 std::string* why) {
  const auto deadline = deadline_after(settings.timeout_s);
  int current = -1;
  std::string phase;
  std::optional<json> fatal;
  std::vector<std::unique_ptr<fb::WorkloadEvaluationT>> done(workloads.size());
  auto lost = [&](const Status& s) {
    const bool outside = worker_lost(out, done, workloads, current, phase, fatal, s, settings);
    for (const auto& w : out->workloads) {
      if (w->status != fb::WorkloadStatus::NOT_RUN && w->status != fb::WorkloadStatus::OK) {
        *why = w->error;
        break;
      }
    }
    return outside;
  };
  if (Status s = write_message(worker_->to_worker(), request, deadline); !s) return lost(s);
  for (;;) {
    auto msg = read_message(worker_->from_worker(), deadline);
    if (!msg) return lost(msg.status());
    try {
      const std::string op = msg->value("op", "");
      if (op == "progress") {
        current = msg->at("workload").get<int>();
        phase = msg->value("phase", "");
      } else if (op == "workload") {
        size_t i = msg->at("index").get<size_t>();
        if (i < done.size()) done[i] = workload_from_json(msg->at("result"));
      } else if (op == "fatal") {
        fatal = *msg;
      } else if (op == "result") {
        const json& list = msg->at("workloads");
        if (list.size() != workloads.size()) {
          throw json::other_error::create(
              501, "result has " + std::to_string(list.size()) + " workloads", &list);
        }
        for (const json& w : list) out->workloads.push_back(workload_from_json(w));
        if (msg->value("exiting", false)) {
          worker_->reap(1.0);
          lose();
          out->worker_restarts += 1;
        }
        return false;
      } else {
        throw json::other_error::create(501, "unexpected message " + msg->dump().substr(0, 200),
                                        &*msg);
      }
    } catch (const json::exception& e) {
      out->workloads.clear();
      return lost(Status::corruption(e.what()));
    }
  }
}

nlohmann::json evaluate_request_settings(const EvalRequest& req, const problem::Tolerance& tol,
                                         double peak_bandwidth, double peak_flops) {
  const EvalSettings& s = req.settings;
  return {
      {"op", "evaluate"},
      {"input_seed", req.input_seed},
      {"rounds", s.rounds},
      {"warmup", s.warmup},
      {"repetitions", s.repetitions},
      {"buffer_sets", s.buffer_sets},
      {"flush_cache", s.flush_cache},
      {"tolerance", {{"atol", tol.atol}, {"rtol", tol.rtol}, {"matched_ratio", tol.matched_ratio}}},
      {"peak_bandwidth_bytes_per_s", peak_bandwidth},
      {"peak_flops_per_s", peak_flops}};
}

}  // namespace arc::eval
