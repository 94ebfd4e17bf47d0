#include "eval/cuda_evaluator.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "base/arc_home.h"
#include "base/sha256.h"
#include "base/throttle.h"
#include "cuda/driver.h"
#include "cuda/nvrtc.h"
#include "eval/evaluators.h"
#include "eval/worker_client.h"
#include "problem/expression.h"
#include "problem/launch.h"
#include "problem/tensor_map.h"

namespace arc::eval {

using problem::Candidate;
using problem::evaluate_expression;
using problem::expression_names;
using problem::Family;
using problem::GemmSpec;
using problem::Problem;
using problem::resolve_launches;
using problem::ResolvedLaunch;
using problem::short_hash;
using problem::tensor_index;
using problem::Variant;
using problem::Workload;
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The worker's "tensor_maps" entries (eval/cuda_worker.h).
json tensor_maps_json(const std::vector<problem::ResolvedTensorMap>& maps) {
  json out = json::array();
  for (const auto& m : maps) {
    out.push_back({{"output", m.output},
                   {"index", m.index},
                   {"dtype", m.dtype},
                   {"dims", m.dims},
                   {"strides", m.strides},
                   {"box", m.box},
                   {"element_strides", m.element_strides},
                   {"swizzle", m.swizzle},
                   {"l2_promotion", m.l2_promotion},
                   {"nan_fill", m.nan_fill}});
  }
  return out;
}

json launches_json(const std::vector<ResolvedLaunch>& ls) {
  json a = json::array();
  for (const auto& l : ls) {
    a.push_back({{"kernel", l.kernel},
                 {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                 {"block", {l.block[0], l.block[1], l.block[2]}},
                 {"shared", l.shared}});
  }
  return a;
}

std::unique_ptr<fb::KeyValueT> kv(std::string k, std::string v) {
  auto p = std::make_unique<fb::KeyValueT>();
  p->key = std::move(k);
  p->value = std::move(v);
  return p;
}

}  // namespace

bool CudaEvaluator::device_available(std::string* why) {
  auto info = cuda::device_info(0);
  if (!info) {
    if (why != nullptr) *why = info.status().message();
    return false;
  }
  return true;
}

struct CudaEvaluator::Impl {
  Problem problem;
  CudaEvaluatorOptions options;
  fs::path cache_root;
  std::optional<cuda::DeviceInfo> info;
  std::string no_device;  // why there is no device ("" when there is)
  std::unique_ptr<cuda::Compiler> compiler;
  std::string device;

  std::mutex worker_mu;
  std::unique_ptr<WorkerClient> client;
  std::optional<fb::PeaksMeasuredT> peaks;
  std::optional<cuda::Cubin> reference;

  Impl(const Problem& p, CudaEvaluatorOptions o) : problem(p), options(std::move(o)) {
    cache_root = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
    auto di = cuda::device_info(options.device);
    if (di) {
      info = *di;
    } else {
      no_device = di.status().message();
    }
    cuda::CompilerOptions co;
    co.cache_dir = cache_root / "cuda";
    co.arch = !options.arch.empty() ? options.arch : info ? info->arch() : "sm_90a";
    co.include_root = options.include_root;
    co.jobs = options.compile_jobs;
    compiler = std::make_unique<cuda::Compiler>(co);
    device = "cuda: " + (info ? info->describe() : no_device) + ", " + compiler->toolchain();
    fs::path worker = options.worker_path.empty() ? default_worker_path() : options.worker_path;
    client = std::make_unique<WorkerClient>(
        WorkerClientOptions{worker,
                            {"--backend", "cuda", "--cache", (cache_root / "cuda").string(),
                             "--device", std::to_string(options.device)},
                            options.worker_start_timeout_s,
                            "cuda_events",
                            options.sandbox,
                            worker_profile()});
  }

  // What the sandboxed worker sees besides the system: the cache (its "cuda" folder writable,
  // for the runtime kernels' cubins), the kernel ABI it compiles those with (through ARC_HOME)
  // and the toolkit's headers and libraries wherever /usr/local/cuda leads.
  SandboxProfile worker_profile() const {
    const fs::path home = options.include_root.empty() ? arc_home() : options.include_root;
    SandboxProfile p{{cache_root, home / "cuda" / "include", "/usr/local/cuda"},
                     {cache_root / "cuda"},
                     true,
                     sandbox_environment()};
    p.env.push_back("ARC_HOME=" + home.string());
    return p;
  }

  // What launch, workspace and tensor-map expressions may name about the device.
  std::map<std::string, int64_t> device_names() const {
    return {{problem::kSmCountName, info ? info->sm_count : problem::kCheckSmCount}};
  }

  // The family's defaults overridden by the variant's knobs.
  std::map<std::string, std::string> knobs_of(const Variant& v, const Family& f) const {
    return f.knob_values(v);
  }

  // What a variant's source is compiled with: its knobs (knobs_of) and the problem's params.
  std::map<std::string, std::string> defines_of(const Variant& v, const Family& f) const {
    Variant full = v;
    full.knobs = knobs_of(v, f);
    return problem.defines_for(full);
  }

  fb::CompileFinishedT compile(const Candidate& c, const std::string& hash) {
    fb::CompileFinishedT out;
    out.candidate_hash = hash;
    out.toolchain = compiler->toolchain();
    out.ok = true;
    std::vector<Variant> variants = distinct_variants(c, problem.workloads);
    std::vector<cuda::Compiler::Job> jobs;
    std::vector<int> job_of(variants.size(), -1);
    std::vector<std::string> early_error(variants.size());
    for (size_t i = 0; i < variants.size(); ++i) {
      const Variant& v = variants[i];
      if (!v.source.empty() && v.family.empty()) {
        early_error[i] =
            "a free-source CUDA variant needs a family to take its launches from; set "
            "'family' to one of the problem's families";
        continue;
      }
      const Family* f = problem.family(v.family);
      if (f == nullptr) {
        early_error[i] = "unknown family '" + v.family + "' in problem " + problem.name;
        continue;
      }
      if (!v.source.empty()) {
        if (!f->library.empty()) {
          early_error[i] = "family '" + f->name +
                           "' is a library family: free source cannot "
                           "take its launches";
          continue;
        }
        // The family's launches with the variant's own source.
        job_of[i] = static_cast<int>(jobs.size());
        jobs.push_back({v.source, "source:" + short_hash(arc::sha256_hex(v.source)) + ".cu",
                        defines_of(v, *f), &problem.headers});
        continue;
      }
      if (!f->library.empty()) continue;  // no source: the library is the implementation
      if (std::string why = f->constraint_violation(knobs_of(v, *f), problem.integer_params());
          !why.empty()) {
        early_error[i] = "outside the search space: " + why;
        continue;
      }
      std::ifstream in(f->source, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in) {
        early_error[i] = "cannot read " + f->source.string();
        continue;
      }
      job_of[i] = static_cast<int>(jobs.size());
      jobs.push_back({text.str(), f->source.string(), defines_of(v, *f), &problem.headers});
    }
    std::vector<cuda::Cubin> cubins = compiler->compile_all(jobs);
    for (size_t i = 0; i < variants.size(); ++i) {
      auto cv = std::make_unique<fb::CompiledVariantT>();
      cv->variant = variants[i].key();
      if (!early_error[i].empty()) {
        cv->ok = false;
        cv->error = early_error[i];
      } else if (job_of[i] < 0) {
        const Family* f = problem.family(variants[i].family);
        cv->ok = true;
        cv->cached = true;
        cv->options = "library " + f->library;
        cv->object_ref = "library:" + f->library;
      } else {
        const cuda::Cubin& b = cubins[static_cast<size_t>(job_of[i])];
        cv->ok = b.ok;
        cv->cached = b.cached;
        cv->options = b.options;
        cv->object_ref = b.ok ? b.key : "";
        cv->seconds = b.seconds;
        cv->error = b.error;
        for (const auto& k : b.kernels) {
          auto r = std::make_unique<fb::KernelResourcesT>();
          r->name = k.name;
          r->registers = k.registers;
          r->stack_bytes = k.stack_bytes;
          r->spill_store_bytes = k.spill_store_bytes;
          r->spill_load_bytes = k.spill_load_bytes;
          r->shared_static_bytes = k.shared_static_bytes;
          r->barriers = k.barriers;
          cv->kernels.push_back(std::move(r));
        }
      }
      out.ok = out.ok && cv->ok;
      out.variants.push_back(std::move(cv));
    }
    return out;
  }

  void fail_all(fb::CandidateEvaluatedT* out, fb::WorkloadStatus status, const std::string& error) {
    out->workloads.clear();
    for (const auto& w : problem.workloads)
      out->workloads.push_back(make_workload(w.name, status, error, "cuda_events"));
  }

  fs::path peaks_cache_path() const {
    if (!info) return {};
    return cache_root / "cuda" /
           ("peaks-v3-" + info->uuid + "-driver" + std::to_string(info->driver_version) + ".json");
  }

  // Holding worker_mu.
  Result<fb::PeaksMeasuredT> peaks_locked() {
    if (peaks) return *peaks;
    if (!info) return Status::unavailable(no_device);
    json reply;
    std::string origin;
    const fs::path cached = peaks_cache_path();
    if (options.use_peaks_cache) {
      std::ifstream in(cached);
      if (in) {
        json j = json::parse(in, nullptr, false);
        if (!j.is_discarded() && j.value("op", "") == "peaks" && j.contains("flops")) {
          reply = j;
          origin = "cached in " + cached.string();
        }
      }
    }
    if (reply.is_null()) {
      if (Status s = client->ensure(0); !s) return s;
      auto r = client->call(json{{"op", "peaks"}}, "peaks", options.peaks_timeout_s);
      if (!r) return Status::unavailable("measuring peaks failed: " + r.status().message());
      reply = *r;
      origin = "measured now";
      std::error_code ec;
      fs::create_directories(cached.parent_path(), ec);
      const fs::path tmp = cached.string() + ".tmp" + std::to_string(::getpid());
      {
        std::ofstream o(tmp);
        o << reply.dump(2) << "\n";
      }
      fs::rename(tmp, cached, ec);
    }
    fb::PeaksMeasuredT p;
    p.device = device;
    p.bandwidth_bytes_per_s = reply.value("bandwidth_bytes_per_s", 0.0);
    const std::string dtype = problem.compute_dtype.empty() ? "bf16" : problem.compute_dtype;
    p.flops_per_s = reply.at("flops").value(dtype, 0.0);
    p.method = reply.value("method", "") + "; flops_per_s is the " + dtype +
               " GEMM peak (the "
               "problem's compute_dtype)";
    p.details.push_back(kv("origin", origin));
    p.details.push_back(kv("compute_dtype", dtype));
    for (const auto& [k, v] : reply.at("flops").items()) {
      if (v.is_number()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
        p.details.push_back(kv("flops_" + k, buf));
      }
    }
    for (const json& d : reply.value("details", json::array())) {
      p.details.push_back(kv(d.value("key", ""), d.value("value", "")));
    }
    peaks = p;
    return p;
  }

  // Holding worker_mu.
  const cuda::Cubin& reference_cubin() {
    if (!reference || !reference->ok)
      reference =
          compiler->compile_file(problem.reference, problem.param_defines(), problem.headers);
    return *reference;
  }

  // The request entry of one workload, or the error that fails it before any GPU work.
  Result<json> workload_entry(size_t i, const Variant& v, const fs::path& cubin,
                              const fs::path& reference) const {
    const Workload& w = problem.workloads[i];
    const Family* f = problem.family(v.family);
    if (f == nullptr) return Status::invalid_argument("unknown family '" + v.family + "'");
    const auto knobs = knobs_of(v, *f);
    std::vector<int64_t> axes;
    for (const auto& a : problem.axes) {
      auto it = w.axes.find(a);
      axes.push_back(it == w.axes.end() ? 0 : it->second);
    }
    json inputs = json::array(), outputs = json::array();
    for (const auto& t : problem.inputs) {
      inputs.push_back({{"name", t.name},
                        {"dtype", t.dtype},
                        {"elements", problem.elements(t, w)},
                        {"init", t.init},
                        {"low", t.low},
                        {"high", t.high}});
    }
    for (const auto& t : problem.outputs) {
      outputs.push_back({{"name", t.name},
                         {"dtype", t.dtype},
                         {"elements", problem.elements(t, w)},
                         {"alias", t.alias.empty() ? -1 : tensor_index(problem.inputs, t.alias)}});
    }
    auto ref_launches = resolve_launches(problem.reference_launches, w, {});
    if (!ref_launches) {
      return Status::invalid_argument("the reference's launches: " +
                                      ref_launches.status().message());
    }
    auto flops = problem.flops(w);
    auto bytes = problem.bytes(w);
    json e = {{"name", w.name},
              {"index", i},
              {"axes", axes},
              {"flops", flops ? *flops : 0.0},
              {"bytes", bytes ? *bytes : 0.0},
              {"inputs", std::move(inputs)},
              {"outputs", std::move(outputs)},
              {"reference_module", reference.string()},
              {"reference_launches", launches_json(*ref_launches)},
              {"gemm", nullptr}};
    if (!f->library.empty()) {
      const GemmSpec& g = f->gemm;
      auto axis = [&](const std::string& name) {
        auto it = w.axes.find(name);
        return it == w.axes.end() ? int64_t{0} : it->second;
      };
      json config = json::object();
      for (const auto& [k, val] : knobs) config[k] = val;
      const int a = tensor_index(problem.inputs, g.a);
      const int d = tensor_index(problem.outputs, g.d);
      e["gemm"] = {{"a", a},
                   {"b", tensor_index(problem.inputs, g.b)},
                   {"c", g.c.empty() ? -1 : tensor_index(problem.inputs, g.c)},
                   {"d", d},
                   {"a_scale", g.a_scale.empty() ? -1 : tensor_index(problem.inputs, g.a_scale)},
                   {"b_scale", g.b_scale.empty() ? -1 : tensor_index(problem.inputs, g.b_scale)},
                   {"m", axis(g.m)},
                   {"n", axis(g.n)},
                   {"k", axis(g.k)},
                   {"dtype", problem.inputs[static_cast<size_t>(a)].dtype},
                   {"out_dtype", problem.outputs[static_cast<size_t>(d)].dtype},
                   {"variant", v.key()},
                   {"config", config}};
      e["module"] = "";
      e["launches"] = json::array();
      e["workspace"] = 0;
      return e;
    }
    auto launches = resolve_launches(f->launches, w, knobs, device_names());
    if (!launches) return launches.status();
    auto maps = resolve_tensor_maps(problem, *f, w, knobs, device_names());
    if (!maps) return maps.status();
    auto names = expression_names(w, knobs);
    for (const auto& [k, val] : device_names()) names.emplace(k, val);
    auto ws = evaluate_expression(f->workspace, names);
    if (!ws) return Status::invalid_argument("workspace: " + ws.status().message());
    if (*ws < 0) {
      return Status::invalid_argument("workspace = \"" + f->workspace + "\" is negative (" +
                                      std::to_string(*ws) + ")");
    }
    e["module"] = cubin.string();
    e["launches"] = launches_json(*launches);
    e["workspace"] = static_cast<uint64_t>(*ws);
    e["tensor_maps"] = tensor_maps_json(*maps);
    return e;
  }

  fb::CandidateEvaluatedT evaluate(const EvalRequest& req, const fb::CompileFinishedT& compiled) {
    const auto start = Clock::now();
    fb::CandidateEvaluatedT out;
    out.candidate_hash = req.candidate_hash;
    out.device = device;
    out.input_seed = req.input_seed;
    out.evaluator = "cuda";
    auto finish = [&] {
      out.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return std::move(out);
    };
    for (const auto& v : compiled.variants) {
      if (v && !v->ok) {
        fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
                 "variant " + v->variant + ": " + v->error);
        return finish();
      }
    }
    if (!info) {
      fail_all(&out, fb::WorkloadStatus::CRASH, no_device);
      return finish();
    }
    std::lock_guard lock(worker_mu);
    const cuda::Cubin& ref = reference_cubin();
    if (!ref.ok) {
      fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
               "the reference " + problem.reference.string() + " failed to compile: " + ref.error);
      return finish();
    }
    json workloads = json::array();
    for (size_t i = 0; i < problem.workloads.size(); ++i) {
      const Workload& w = problem.workloads[i];
      const Variant& v = req.candidate.variant_for(w.name);
      const std::string key = v.key();
      const fb::CompiledVariantT* found = nullptr;
      for (const auto& cv : compiled.variants) {
        if (cv && cv->variant == key) found = cv.get();
      }
      if (found == nullptr) {
        fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
                 "variant " + key + " (workload " + w.name + ") is not in the compile result");
        return finish();
      }
      fs::path cubin;
      if (found->object_ref.rfind("library:", 0) != 0) {
        cubin = compiler->cubin_path(found->object_ref);
        if (cubin.empty()) {
          fail_all(&out, fb::WorkloadStatus::COMPILE_ERROR,
                   "variant " + key + " has no valid object_ref");
          return finish();
        }
      }
      auto entry = workload_entry(i, v, cubin, ref.path);
      if (!entry) {
        // Before any GPU work: this workload cannot be launched as described.
        out.workloads.clear();
        for (size_t j = 0; j < problem.workloads.size(); ++j) {
          if (j < i) {
            out.workloads.push_back(
                make_workload(problem.workloads[j].name, fb::WorkloadStatus::NOT_RUN,
                              "not run: workload " + w.name + " failed", "cuda_events"));
          } else if (j == i) {
            out.workloads.push_back(
                make_workload(w.name, fb::WorkloadStatus::LOAD_ERROR,
                              "variant " + key + ": " + entry.status().message(), "cuda_events"));
          } else {
            out.workloads.push_back(
                make_workload(problem.workloads[j].name, fb::WorkloadStatus::NOT_RUN,
                              "not run: workload " + w.name + " failed", "cuda_events"));
          }
        }
        return finish();
      }
      workloads.push_back(std::move(*entry));
    }
    Status started = client->ensure(0);
    auto measured = started ? peaks_locked() : Result<fb::PeaksMeasuredT>(started);
    if (started) started = client->ensure(0);
    if (!started) {
      fail_all(&out, fb::WorkloadStatus::CRASH,
               "cannot start the GPU worker: " + started.message());
      return finish();
    }
    json request = evaluate_request_settings(req, problem.tolerance,
                                             measured ? measured->bandwidth_bytes_per_s : 0.0,
                                             measured ? measured->flops_per_s : 0.0);
    request["timing"] = req.settings.timing;
    request["workloads"] = std::move(workloads);
    std::vector<std::string> names;
    for (const auto& w : problem.workloads) names.push_back(w.name);
    client->evaluate(request, names, req.settings, &out);
    // Clocks: the NVML readings taken after the timed runs of the last workload that ran (its
    // details hold them as "after.<key>", beside "before.<key>": base/throttle.h).
    const std::string after = throttle::kAfterPrefix;
    for (auto it = out.workloads.rbegin(); it != out.workloads.rend(); ++it) {
      if (!*it || (*it)->details.empty()) continue;
      bool any = false;
      for (const auto& d : (*it)->details) {
        if (d && d->key.size() > after.size() && d->key.compare(0, after.size(), after) == 0) {
          out.clocks.push_back(kv(d->key.substr(after.size()), d->value));
          any = true;
        }
      }
      if (any) {
        out.clocks.push_back(
            kv("clocks_source", "NVML, after the timed runs of " + (*it)->workload));
        break;
      }
    }
    return finish();
  }
};

CudaEvaluator::CudaEvaluator(const Problem& problem, CudaEvaluatorOptions options)
    : impl_(std::make_unique<Impl>(problem, std::move(options))) {}

CudaEvaluator::~CudaEvaluator() = default;

std::string CudaEvaluator::device() const { return impl_->device; }

std::string CudaEvaluator::device_model() const {
  if (!impl_->info) return impl_->device;
  cuda::DeviceInfo model = *impl_->info;
  model.uuid = "one of its kind";  // what tells two GPUs of one model apart
  return "cuda: " + model.describe() + ", " + impl_->compiler->toolchain();
}

std::string CudaEvaluator::device_key() const {
  return impl_->info ? "gpu:" + impl_->info->uuid + " " + impl_->info->pci_bus_id : "";
}

std::string CudaEvaluator::worker() const {
  return "local:" + std::to_string(impl_->options.device);
}

Result<fb::PeaksMeasuredT> CudaEvaluator::peaks() {
  try {
    std::lock_guard lock(impl_->worker_mu);
    return impl_->peaks_locked();
  } catch (const std::exception& e) {
    return Status::internal(std::string("peaks: ") + e.what());
  }
}

fb::CompileFinishedT CudaEvaluator::compile(const Candidate& c, const std::string& hash) {
  try {
    return impl_->compile(c, hash);
  } catch (const std::exception& e) {
    return compile_failure(c, hash, std::string("internal error while compiling: ") + e.what());
  }
}

fb::CandidateEvaluatedT CudaEvaluator::evaluate(const EvalRequest& request,
                                                const fb::CompileFinishedT& compiled) {
  try {
    return impl_->evaluate(request, compiled);
  } catch (const std::exception& e) {
    try {
      std::lock_guard lock(impl_->worker_mu);
      if (impl_->client->running()) impl_->client->lose();
    } catch (...) {
    }
    fb::CandidateEvaluatedT out;
    out.candidate_hash = request.candidate_hash;
    out.device = impl_->device;
    out.input_seed = request.input_seed;
    out.evaluator = "cuda";
    impl_->fail_all(&out, fb::WorkloadStatus::CRASH,
                    std::string("internal error in the CUDA evaluator: ") + e.what());
    return out;
  }
}

uint32_t CudaEvaluator::worker_restarts() const { return impl_->client->restarts(); }

fb::CompiledVariantT CudaEvaluator::compile_reference() {
  fb::CompiledVariantT r;
  r.variant = "reference";
  try {
    std::lock_guard lock(impl_->worker_mu);
    const cuda::Cubin& b = impl_->reference_cubin();
    r.ok = b.ok;
    r.cached = b.cached;
    r.options = b.options;
    r.object_ref = b.ok ? b.key : "";
    r.seconds = b.seconds;
    r.error = b.error;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("internal error while compiling the reference: ") + e.what();
  }
  return r;
}

}  // namespace arc::eval
