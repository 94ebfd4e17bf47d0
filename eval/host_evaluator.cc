#include "eval/host_evaluator.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/host_compiler.h"
#include "eval/protocol.h"
#include "eval/subprocess.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

fs::path default_host_cache_dir() {
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return (v != nullptr && *v != '\0') ? v : nullptr;
  };
  fs::path root;
  if (const char* v = env("ARC_CACHE")) {
    root = v;
  } else if (const char* x = env("XDG_CACHE_HOME")) {
    root = fs::path(x) / "kernelarc";
  } else if (const char* h = env("HOME")) {
    root = fs::path(h) / ".cache" / "kernelarc";
  } else {
    root = "/tmp/kernelarc-cache";
  }
  return root / "host";
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

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// The value after "key<spaces>:" on the first matching line of /proc/cpuinfo-like text.
std::string field_value(const std::string& text, const std::string& key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (line.rfind(key, 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
    pos = end + 1;
  }
  return "";
}

// {MHz, where it was read}; {"", ""} when neither source is readable.
std::pair<std::string, std::string> cpu_mhz() {
  std::string khz = read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  if (!khz.empty()) {
    char* end = nullptr;
    double v = std::strtod(khz.c_str(), &end);
    if (end != khz.c_str() && v > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", v / 1000.0);
      return {buf, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"};
    }
  }
  std::string mhz = field_value(read_text("/proc/cpuinfo"), "cpu MHz");
  if (!mhz.empty()) return {mhz, "/proc/cpuinfo"};
  return {"", ""};
}

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

// A running arc-eval --worker with its two pipes. Destruction stops it (politely, then not).
class WorkerProcess {
 public:
  static Result<std::unique_ptr<WorkerProcess>> start(const fs::path& path,
                                                      uint64_t memory_limit_mb,
                                                      double start_timeout_s) {
    UniqueFd req_read, req_write, rep_read, rep_write;
    if (Status s = make_pipe(&req_read, &req_write); !s) return s;
    if (Status s = make_pipe(&rep_read, &rep_write); !s) return s;
    SpawnOptions spawn;
    spawn.fds = {{3, req_read.get()}, {4, rep_write.get()}};
    auto pid = spawn_process({path.string(), "--worker", "--in", "3", "--out", "4", "--memory-mb",
                              std::to_string(memory_limit_mb)},
                             spawn);
    if (!pid) return pid.status();
    std::unique_ptr<WorkerProcess> w(
        new WorkerProcess(*pid, std::move(req_write), std::move(rep_read), memory_limit_mb));
    req_read.reset();
    rep_write.reset();  // else EOF from a dead worker would never come
    auto ready = read_message(w->from_worker_.get(), deadline_after(start_timeout_s));
    if (!ready || ready->value("op", "") != "ready") {
      std::string why = ready ? "it sent " + ready->dump() : ready.status().to_string();
      int status = w->kill();
      if (WIFEXITED(status))
        why += "; it exited with status " + std::to_string(WEXITSTATUS(status));
      if (WIFSIGNALED(status)) why += "; killed by signal " + describe_signal(WTERMSIG(status));
      return Status::unavailable("the worker " + path.string() + " did not start: " + why);
    }
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

  // SIGKILL to its process group (what a candidate forked goes too); returns the wait status.
  int kill() {
    int status = kill_and_reap(pid_);
    pid_ = -1;
    return status;
  }
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
};

std::unique_ptr<fb::WorkloadEvaluationT> make_workload(const std::string& name,
                                                       fb::WorkloadStatus status,
                                                       std::string error) {
  auto w = std::make_unique<fb::WorkloadEvaluationT>();
  w->workload = name;
  w->status = status;
  w->error = std::move(error);
  w->method = "steady_clock";
  return w;
}

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
  return w;
}

}  // namespace

struct HostEvaluator::Impl {
  Problem problem;
  HostEvaluatorOptions options;
  fs::path cache_dir;
  fs::path worker_path;
  HostCompiler compiler;
  std::string device;

  std::mutex worker_mu;  // one request at a time on the device
  std::unique_ptr<WorkerProcess> worker;
  std::optional<fb::PeaksMeasuredT> peaks;
  std::optional<CompiledObject> reference;
  std::atomic<uint32_t> restarts{0};

  Impl(const Problem& p, HostEvaluatorOptions o)
      : problem(p),
        options(std::move(o)),
        cache_dir(options.cache_dir.empty() ? default_host_cache_dir() : options.cache_dir),
        worker_path(options.worker_path.empty() ? default_worker_path() : options.worker_path),
        compiler(HostCompilerOptions{cache_dir, options.include_root, options.compiler,
                                     options.compile_jobs, options.compile_timeout_s}) {
    std::string model = field_value(read_text("/proc/cpuinfo"), "model name");
    if (model.empty()) model = "unknown CPU";
    device = "host: " + model + ", " +
             std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " cores, " +
             compiler.compiler_version();
  }

  // Holding worker_mu. A worker of the wanted limit, started if needed.
  Status ensure_worker(uint64_t memory_limit_mb) {
    if (worker && worker->memory_limit_mb() != memory_limit_mb) worker.reset();
    // Died between requests (say, a thread a candidate left behind): that death belongs to no
    // candidate, so replace it before this one is blamed.
    if (worker && !worker->alive()) lose_worker();
    if (worker) return Status::ok();
    auto w = WorkerProcess::start(worker_path, memory_limit_mb, options.worker_start_timeout_s);
    if (!w) return w.status();
    worker = std::move(*w);
    return Status::ok();
  }

  void lose_worker() {
    worker.reset();
    restarts.fetch_add(1);
  }

  // Holding worker_mu.
  Result<fb::PeaksMeasuredT> peaks_locked() {
    if (peaks) return *peaks;
    if (Status s =
            ensure_worker(worker ? worker->memory_limit_mb() : options.peaks_memory_limit_mb);
        !s) {
      return s;
    }
    auto deadline = deadline_after(options.peaks_timeout_s);
    Status s = write_message(worker->to_worker(), json{{"op", "peaks"}}, deadline);
    Result<json> reply = s ? read_message(worker->from_worker(), deadline) : Result<json>(s);
    if (!reply || reply->value("op", "") != "peaks") {
      std::string why = reply ? "it replied " + reply->dump() : reply.status().to_string();
      worker->kill();
      lose_worker();
      return Status::unavailable("measuring peaks failed: " + why);
    }
    fb::PeaksMeasuredT p;
    p.device = device;
    p.bandwidth_bytes_per_s = reply->value("bandwidth_bytes_per_s", 0.0);
    p.flops_per_s = reply->value("flops_per_s", 0.0);
    p.method = reply->value("method", "");
    peaks = p;
    return p;
  }

  std::vector<Variant> distinct_variants(const Candidate& c) const {
    std::vector<Variant> out = {c.base};
    std::set<std::string> seen = {c.base.key()};
    auto add = [&](const Variant& v) {
      if (seen.insert(v.key()).second) out.push_back(v);
    };
    for (const auto& w : problem.workloads) add(c.variant_for(w.name));
    for (const auto& [name, v] : c.gates) add(v);  // gates naming no workload still must build
    return out;
  }

  fb::CompileFinishedT compile(const Candidate& c, const std::string& hash) {
    fb::CompileFinishedT out;
    out.candidate_hash = hash;
    out.toolchain = compiler.compiler_version();
    std::vector<Variant> variants = distinct_variants(c);
    std::vector<CompiledObject> objects = compiler.compile_variants(problem, variants);
    out.ok = true;
    for (size_t i = 0; i < variants.size(); ++i) {
      auto v = std::make_unique<fb::CompiledVariantT>();
      v->variant = variants[i].key();
      v->ok = objects[i].ok;
      v->cached = objects[i].cached;
      v->options = objects[i].options;
      v->object_ref = objects[i].key;
      v->log_ref = objects[i].log_ref;
      v->seconds = objects[i].seconds;
      v->error = objects[i].error;
      out.ok = out.ok && v->ok;
      out.variants.push_back(std::move(v));
    }
    return out;
  }

  // Every workload gets `status` with `error`.
  void fail_all(fb::CandidateEvaluatedT* out, fb::WorkloadStatus status, const std::string& error) {
    out->workloads.clear();
    for (const auto& w : problem.workloads)
      out->workloads.push_back(make_workload(w.name, status, error));
  }

  // Holding worker_mu.
  const CompiledObject& reference_object() {
    if (!reference || !reference->ok) reference = compiler.compile_file(problem.reference, {});
    return *reference;
  }

  json build_request(const EvalRequest& req, const std::vector<fs::path>& objects,
                     const fb::PeaksMeasuredT* p, const fs::path& reference_so) const {
    const EvalSettings& s = req.settings;
    json workloads = json::array();
    for (size_t i = 0; i < problem.workloads.size(); ++i) {
      const Workload& w = problem.workloads[i];
      std::vector<int64_t> axes;
      for (const auto& a : problem.axes) {
        auto it = w.axes.find(a);
        axes.push_back(it == w.axes.end() ? 0 : it->second);
      }
      json inputs = json::array(), outputs = json::array();
      for (const auto& t : problem.inputs) {
        inputs.push_back({{"name", t.name},
                          {"elements", problem.elements(t, w)},
                          {"init", t.init},
                          {"low", t.low},
                          {"high", t.high}});
      }
      for (const auto& t : problem.outputs) {
        outputs.push_back({{"name", t.name}, {"elements", problem.elements(t, w)}});
      }
      auto flops = problem.flops(w);
      auto bytes = problem.bytes(w);
      workloads.push_back({{"name", w.name},
                           {"index", i},
                           {"object", objects[i].string()},
                           {"axes", axes},
                           {"flops", flops ? *flops : 0.0},
                           {"bytes", bytes ? *bytes : 0.0},
                           {"inputs", std::move(inputs)},
                           {"outputs", std::move(outputs)}});
    }
    return {{"op", "evaluate"},
            {"input_seed", req.input_seed},
            {"rounds", s.rounds},
            {"warmup", s.warmup},
            {"repetitions", s.repetitions},
            {"buffer_sets", s.buffer_sets},
            {"flush_cache", s.flush_cache},
            {"tolerance",
             {{"atol", problem.tolerance.atol},
              {"rtol", problem.tolerance.rtol},
              {"matched_ratio", problem.tolerance.matched_ratio}}},
            {"peak_bandwidth_bytes_per_s", p != nullptr ? p->bandwidth_bytes_per_s : 0.0},
            {"peak_flops_per_s", p != nullptr ? p->flops_per_s : 0.0},
            {"reference", reference_so.string()},
            {"workloads", std::move(workloads)}};
  }

  // The worker died, hung or talked nonsense while running workload `current` (-1: before the
  // first). Kills it, and says what happened in the words of a performance engineer.
  void worker_lost(fb::CandidateEvaluatedT* out,
                   std::vector<std::unique_ptr<fb::WorkloadEvaluationT>>& done, int current,
                   const std::string& phase, const std::optional<json>& fatal, const Status& why,
                   const EvalSettings& settings) {
    const bool timed_out = why.code() == Status::Code::kTimeout;
    const bool eof = why.code() == Status::Code::kUnavailable;
    const uint64_t limit_mb = worker->memory_limit_mb();
    const int status = eof ? worker->reap(1.0) : worker->kill();
    lose_worker();
    out->worker_restarts += 1;

    const size_t n = problem.workloads.size();
    const size_t at = current < 0 ? 0 : std::min(static_cast<size_t>(current), n - 1);
    const std::string name = n == 0 ? "" : problem.workloads[at].name;
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
    } else if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      error = "worker killed by signal " + describe_signal(sig) + where;
      if (fatal && fatal->contains("address") && (sig == SIGSEGV || sig == SIGBUS)) {
        char buf[40];
        std::snprintf(buf, sizeof buf, " at address 0x%llx",
                      static_cast<unsigned long long>(fatal->value("address", uint64_t{0})));
        error += buf;
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
        out->workloads.push_back(make_workload(problem.workloads[i].name, verdict, error));
      } else {
        out->workloads.push_back(make_workload(
            problem.workloads[i].name, fb::WorkloadStatus::NOT_RUN,
            i < at ? "result lost with the worker" : "not run: workload " + name + " failed"));
      }
    }
  }

  fb::CandidateEvaluatedT evaluate(const EvalRequest& req, const fb::CompileFinishedT& compiled) {
    const auto start = Clock::now();
    fb::CandidateEvaluatedT out;
    out.candidate_hash = req.candidate_hash;
    out.device = device;
    out.input_seed = req.input_seed;
    out.evaluator = "host";
    auto [mhz, source] = cpu_mhz();
    if (!mhz.empty()) {
      auto kv = std::make_unique<fb::KeyValueT>();
      kv->key = "cpu_mhz";
      kv->value = mhz;
      out.clocks.push_back(std::move(kv));
      auto src = std::make_unique<fb::KeyValueT>();
      src->key = "cpu_mhz_source";
      src->value = source;
      out.clocks.push_back(std::move(src));
    }
    auto finish = [&] {
      out.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return std::move(out);
    };

    // Objects per workload, from the compile result; any failed variant fails everything.
    std::vector<fs::path> objects;
    for (const auto& v : compiled.variants) {
      if (v && !v->ok) {
        fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
                 "variant " + v->variant + ": " + v->error);
        return finish();
      }
    }
    for (const auto& w : problem.workloads) {
      const std::string key = req.candidate.variant_for(w.name).key();
      const fb::CompiledVariantT* found = nullptr;
      for (const auto& v : compiled.variants) {
        if (v && v->variant == key) found = v.get();
      }
      fs::path so = found != nullptr ? compiler.object_path(found->object_ref) : fs::path();
      if (so.empty()) {
        fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
                 "variant " + key + " (workload " + w.name + ") is not in the compile result" +
                     (found != nullptr ? " with a valid object_ref" : ""));
        return finish();
      }
      objects.push_back(so);
    }

    std::lock_guard lock(worker_mu);
    const CompiledObject& ref = reference_object();
    if (!ref.ok) {
      fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
               "the reference " + problem.reference.string() + " failed to compile: " + ref.error);
      return finish();
    }
    // The worker first (peaks would otherwise start one with another limit), then the peaks
    // (without them the SOL check is off: sol_ns 0), then the worker again in case measuring
    // the peaks lost it.
    Status started = ensure_worker(req.settings.memory_limit_mb);
    auto measured = started ? peaks_locked() : Result<fb::PeaksMeasuredT>(started);
    if (started) started = ensure_worker(req.settings.memory_limit_mb);
    if (!started) {
      fail_all(&out, fb::WorkloadStatus::CRASH,
               "cannot start the evaluation worker: " + started.message());
      return finish();
    }
    json request = build_request(req, objects, measured ? &measured.value() : nullptr, ref.object);

    const auto deadline = deadline_after(req.settings.timeout_s);
    int current = -1;
    std::string phase;
    std::optional<json> fatal;
    std::vector<std::unique_ptr<fb::WorkloadEvaluationT>> done(problem.workloads.size());
    if (Status s = write_message(worker->to_worker(), request, deadline); !s) {
      worker_lost(&out, done, current, phase, fatal, s, req.settings);
      return finish();
    }
    for (;;) {
      auto msg = read_message(worker->from_worker(), deadline);
      if (!msg) {
        worker_lost(&out, done, current, phase, fatal, msg.status(), req.settings);
        return finish();
      }
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
          if (list.size() != problem.workloads.size()) {
            throw json::other_error::create(
                501, "result has " + std::to_string(list.size()) + " workloads", &list);
          }
          for (const json& w : list) out.workloads.push_back(workload_from_json(w));
          if (msg->value("exiting", false)) {
            worker->reap(1.0);
            lose_worker();
            out.worker_restarts += 1;
          }
          return finish();
        } else {
          throw json::other_error::create(501, "unexpected message " + msg->dump().substr(0, 200),
                                          &*msg);
        }
      } catch (const json::exception& e) {
        out.workloads.clear();
        worker_lost(&out, done, current, phase, fatal, Status::corruption(e.what()), req.settings);
        return finish();
      }
    }
  }
};

HostEvaluator::HostEvaluator(const Problem& problem, HostEvaluatorOptions options)
    : impl_(std::make_unique<Impl>(problem, std::move(options))) {}

HostEvaluator::~HostEvaluator() = default;

std::string HostEvaluator::device() const { return impl_->device; }

Result<fb::PeaksMeasuredT> HostEvaluator::peaks() {
  try {
    std::lock_guard lock(impl_->worker_mu);
    return impl_->peaks_locked();
  } catch (const std::exception& e) {
    return Status::internal(std::string("peaks: ") + e.what());
  }
}

fb::CompileFinishedT HostEvaluator::compile(const Candidate& c, const std::string& hash) {
  try {
    return impl_->compile(c, hash);
  } catch (const std::exception& e) {
    fb::CompileFinishedT out;
    out.candidate_hash = hash;
    out.ok = false;
    auto v = std::make_unique<fb::CompiledVariantT>();
    v->variant = c.base.key();
    v->error = std::string("internal error while compiling: ") + e.what();
    out.variants.push_back(std::move(v));
    return out;
  }
}

fb::CandidateEvaluatedT HostEvaluator::evaluate(const EvalRequest& request,
                                                const fb::CompileFinishedT& compiled) {
  try {
    return impl_->evaluate(request, compiled);
  } catch (const std::exception& e) {
    // The exchange with the worker may have stopped half way: never reuse that worker.
    try {
      std::lock_guard lock(impl_->worker_mu);
      if (impl_->worker) impl_->lose_worker();
    } catch (...) {
    }
    fb::CandidateEvaluatedT out;
    out.candidate_hash = request.candidate_hash;
    out.device = impl_->device;
    out.input_seed = request.input_seed;
    out.evaluator = "host";
    impl_->fail_all(&out, fb::WorkloadStatus::CRASH,
                    std::string("internal error in the host evaluator: ") + e.what());
    return out;
  }
}

uint32_t HostEvaluator::worker_restarts() const { return impl_->restarts.load(); }

const std::filesystem::path& HostEvaluator::worker_path() const { return impl_->worker_path; }

}  // namespace arc::eval
