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
#include "eval/worker_client.h"

namespace arc::eval {

using problem::Candidate;
using problem::Problem;
using problem::Variant;
using problem::Workload;
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

}  // namespace

struct HostEvaluator::Impl {
  Problem problem;
  HostEvaluatorOptions options;
  fs::path cache_dir;
  fs::path worker_path;
  HostCompiler compiler;
  std::string device;

  std::mutex worker_mu;  // one request at a time on the device
  WorkerClient client;
  std::optional<fb::PeaksMeasuredT> peaks;
  std::optional<CompiledObject> reference;

  Impl(const Problem& p, HostEvaluatorOptions o)
      : problem(p),
        options(std::move(o)),
        cache_dir(options.cache_dir.empty() ? default_host_cache_dir() : options.cache_dir),
        worker_path(options.worker_path.empty() ? default_worker_path() : options.worker_path),
        compiler(HostCompilerOptions{cache_dir, options.include_root, options.compiler,
                                     options.compile_jobs, options.compile_timeout_s,
                                     options.sandbox}),
        client(WorkerClientOptions{worker_path,
                                   {},
                                   options.worker_start_timeout_s,
                                   "steady_clock",
                                   options.sandbox,
                                   SandboxProfile{{cache_dir}, {}, false, sandbox_environment()}}) {
    std::string model = field_value(read_text("/proc/cpuinfo"), "model name");
    if (model.empty()) model = "unknown CPU";
    device = "host: " + model + ", " +
             std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " cores, " +
             compiler.compiler_version();
  }

  // Holding worker_mu.
  Result<fb::PeaksMeasuredT> peaks_locked() {
    if (peaks) return *peaks;
    if (Status s = client.ensure(client.running() ? client.memory_limit_mb()
                                                  : options.peaks_memory_limit_mb);
        !s) {
      return s;
    }
    auto reply = client.call(json{{"op", "peaks"}}, "peaks", options.peaks_timeout_s);
    if (!reply) return Status::unavailable("measuring peaks failed: " + reply.status().message());
    fb::PeaksMeasuredT p;
    p.device = device;
    p.bandwidth_bytes_per_s = reply->value("bandwidth_bytes_per_s", 0.0);
    p.flops_per_s = reply->value("flops_per_s", 0.0);
    p.method = reply->value("method", "");
    peaks = p;
    return p;
  }

  fb::CompileFinishedT compile(const Candidate& c, const std::string& hash) {
    fb::CompileFinishedT out;
    out.candidate_hash = hash;
    out.toolchain = compiler.compiler_version();
    std::vector<Variant> variants = distinct_variants(c, problem.workloads);
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
    if (!reference || !reference->ok)
      reference =
          compiler.compile_file(problem.reference, problem.param_defines(), problem.headers);
    return *reference;
  }

  json build_request(const EvalRequest& req, const std::vector<fs::path>& objects,
                     const fb::PeaksMeasuredT* p, const fs::path& reference_so) const {
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
    json request = evaluate_request_settings(req, problem.tolerance,
                                             p != nullptr ? p->bandwidth_bytes_per_s : 0.0,
                                             p != nullptr ? p->flops_per_s : 0.0);
    request["reference"] = reference_so.string();
    request["timeout_s"] = req.settings.timeout_s;  // the runner's CPU-time backstop
    request["workloads"] = std::move(workloads);
    return request;
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
    Status started = client.ensure(req.settings.memory_limit_mb);
    auto measured = started ? peaks_locked() : Result<fb::PeaksMeasuredT>(started);
    if (started) started = client.ensure(req.settings.memory_limit_mb);
    if (!started) {
      fail_all(&out, fb::WorkloadStatus::CRASH,
               "cannot start the evaluation worker: " + started.message());
      return finish();
    }
    json request = build_request(req, objects, measured ? &measured.value() : nullptr, ref.object);

    std::vector<std::string> names;
    for (const auto& w : problem.workloads) names.push_back(w.name);
    client.evaluate(request, names, req.settings, &out);
    return finish();
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
    return compile_failure(c, hash, std::string("internal error while compiling: ") + e.what());
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
      if (impl_->client.running()) impl_->client.lose();
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

uint32_t HostEvaluator::worker_restarts() const { return impl_->client.restarts(); }

const std::filesystem::path& HostEvaluator::worker_path() const { return impl_->worker_path; }

fb::CompiledVariantT HostEvaluator::compile_reference() {
  fb::CompiledVariantT r;
  r.variant = "reference";
  try {
    std::lock_guard lock(impl_->worker_mu);
    const CompiledObject& o = impl_->reference_object();
    r.ok = o.ok;
    r.cached = o.cached;
    r.options = o.options;
    r.object_ref = o.key;
    r.log_ref = o.log_ref;
    r.seconds = o.seconds;
    r.error = o.error;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("internal error while compiling the reference: ") + e.what();
  }
  return r;
}

}  // namespace arc::eval
