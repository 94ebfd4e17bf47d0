#include "replay/kt_export.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

namespace arc::replay {
namespace {

using Json = nlohmann::ordered_json;

// Kernel Tuner's names for a configuration that could not be measured (kernel_tuner/util.py).
constexpr const char* kCompilationFailed = "CompilationFailedConfig";
constexpr const char* kRuntimeFailed = "RuntimeFailedConfig";
constexpr const char* kFamilyParameter = "family";
// Names an entry or Kernel Tuner itself uses besides the parameters.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> kNames = {
      "time",          "times",          "compile_time", "verification_time", "benchmark_time",
      "strategy_time", "framework_time", "timestamp",    "candidate",         "grid_size_x",
      "grid_size_y",   "grid_size_z",    "__error__"};
  return kNames;
}

// A value Python prints as the text itself once parsed as JSON (so that the cache key Kernel
// Tuner builds, ",".join(str(v) ...), is the key written here): a canonical integer.
bool is_integer_text(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  if (s[i] == '0') return s.size() == i + 1 && i == 0;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

Json parameter_value(const std::string& s) {
  if (is_integer_text(s)) return Json(std::stoll(s));
  return Json(s);
}

std::string timestamp(int64_t wall_time_ns) {
  const std::time_t secs = static_cast<std::time_t>(wall_time_ns / 1'000'000'000);
  const long micros = static_cast<long>((wall_time_ns % 1'000'000'000) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld+00:00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
  return buf;
}

// "cuda: NVIDIA H200 (sm_90, ...), NVRTC 13.0" -> "NVIDIA H200": the device as Kernel Tuner
// names it (the whole description is kept under "kernelarc").
std::string device_name(const std::string& device) {
  std::string d = device;
  if (const auto colon = d.find(": "); colon != std::string::npos && colon < 16) {
    d = d.substr(colon + 2);
  }
  if (const auto paren = d.find(" ("); paren != std::string::npos) d = d.substr(0, paren);
  return d.empty() ? device : d;
}

// What one workload entry says about a configuration.
struct WorkloadOutcome {
  enum Kind { kTime, kError, kUnmeasured } kind = kUnmeasured;
  const char* error = nullptr;
  const fb::WorkloadEvaluationT* entry = nullptr;
};

const char* error_name(fb::WorkloadStatus s) {
  return s == fb::WorkloadStatus::COMPILE_ERROR ? kCompilationFailed : kRuntimeFailed;
}

// The outcome of `workload` in an evaluation. The protocol stops a candidate at its first
// failing workload (the rest are NOT_RUN): that failure stands for them. UNANSWERED (a replayed
// log) measured nothing.
WorkloadOutcome outcome(const fb::CandidateEvaluatedT& ev, const std::string& workload) {
  WorkloadOutcome o;
  const char* earlier_failure = nullptr;
  for (const auto& w : ev.workloads) {
    const bool failed = w->status != fb::WorkloadStatus::OK &&
                        w->status != fb::WorkloadStatus::NOT_RUN &&
                        w->status != fb::WorkloadStatus::UNANSWERED;
    if (w->workload == workload) {
      o.entry = w.get();
      if (w->status == fb::WorkloadStatus::OK) {
        o.kind = WorkloadOutcome::kTime;
      } else if (failed) {
        o.kind = WorkloadOutcome::kError;
        o.error = error_name(w->status);
      } else if (w->status == fb::WorkloadStatus::NOT_RUN && earlier_failure != nullptr) {
        o.kind = WorkloadOutcome::kError;
        o.error = earlier_failure;
      }
      return o;
    }
    if (failed && earlier_failure == nullptr) earlier_failure = error_name(w->status);
  }
  return o;
}

struct Point {
  std::string hash;
  std::string family;
  std::map<std::string, std::string> knobs;
  const fb::CandidateEvaluatedT* evaluation = nullptr;
  int64_t wall_time_ns = 0;
  double compile_seconds = 0;
  std::vector<WorkloadOutcome> outcomes;  // per objective workload
  const char* error = nullptr;            // the first failure, or null
};

// Orders a parameter's values: integers ascending, then the others in `order` (the problem's
// order, else first seen); the not-applicable value last.
std::vector<std::string> ordered_values(const std::set<std::string>& seen,
                                        const std::vector<std::string>& order,
                                        bool not_applicable) {
  std::vector<std::string> ints, others;
  for (const auto& v : seen) {
    if (is_integer_text(v)) ints.push_back(v);
  }
  std::sort(ints.begin(), ints.end(), [](const std::string& a, const std::string& b) {
    return std::stoll(a) < std::stoll(b);
  });
  for (const auto& v : order) {
    if (seen.count(v) != 0 && !is_integer_text(v) &&
        std::find(others.begin(), others.end(), v) == others.end()) {
      others.push_back(v);
    }
  }
  ints.insert(ints.end(), others.begin(), others.end());
  if (not_applicable) ints.emplace_back(kKernelTunerNotApplicable);
  return ints;
}

}  // namespace

Result<KernelTunerExport> kernel_tuner_cache(const std::vector<events::Event>& log,
                                             const problem::Problem* problem,
                                             const KernelTunerExportOptions& options) {
  if (log.empty() || log.front().payload.type != fb::Payload::CampaignStarted) {
    return Status::invalid_argument("expected a log beginning with CampaignStarted");
  }
  const fb::CampaignStartedT& started = *log.front().payload.AsCampaignStarted();
  // The evaluations, first one per candidate, in log order.
  std::map<std::string, std::string> canonical;
  std::map<std::string, double> compile_seconds;
  std::vector<std::pair<const events::Event*, const fb::CandidateEvaluatedT*>> evaluations;
  std::set<std::string> evaluated;
  std::vector<std::string> workloads;
  if (problem != nullptr) {
    for (const auto& w : problem->workloads) workloads.push_back(w.name);
  }
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      canonical.emplace(p->candidate_hash, p->canonical);
    } else if (e.payload.type == fb::Payload::CompileFinished) {
      const auto* c = e.payload.AsCompileFinished();
      double s = 0;
      for (const auto& v : c->variants) s += v->seconds;
      compile_seconds.emplace(c->candidate_hash, s);
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      const auto* ev = e.payload.AsCandidateEvaluated();
      if (!evaluated.insert(ev->candidate_hash).second) continue;
      evaluations.emplace_back(&e, ev);
      if (problem == nullptr) {
        for (const auto& w : ev->workloads) {
          if (std::find(workloads.begin(), workloads.end(), w->workload) == workloads.end()) {
            workloads.push_back(w->workload);
          }
        }
      }
    }
  }
  std::string workload_list;
  for (const auto& w : workloads) workload_list += (workload_list.empty() ? "" : ", ") + w;
  if (!options.workload.empty() &&
      std::find(workloads.begin(), workloads.end(), options.workload) == workloads.end()) {
    return Status::invalid_argument("--workload '" + options.workload + "': expected one of " +
                                    workload_list);
  }
  const std::vector<std::string> objective_workloads =
      options.workload.empty() ? workloads : std::vector<std::string>{options.workload};

  KernelTunerExport out;
  // The points: ungated family variants, knobs completed with the family's defaults.
  std::vector<Point> points;
  std::vector<std::string> family_order, knob_order;
  std::map<std::string, std::set<std::string>> knob_values;
  std::set<std::string> families;
  for (const auto& [event, ev] : evaluations) {
    auto text = canonical.find(ev->candidate_hash);
    if (text == canonical.end()) continue;  // never proposed: nothing to name it by
    auto c = problem::Candidate::from_canonical(text->second);
    if (!c) {
      return Status::invalid_argument(
          "candidate " + ev->candidate_hash +
          ": its canonical form does not parse: " + c.status().message());
    }
    if (!c->gates.empty() || !c->base.source.empty() || c->base.family.empty()) {
      ++out.gated;
      continue;
    }
    Point p;
    p.hash = ev->candidate_hash;
    p.family = c->base.family;
    p.knobs = c->base.knobs;
    if (problem != nullptr) {
      if (const auto* f = problem->family(p.family); f != nullptr)
        p.knobs = f->knob_values(c->base);
    }
    p.evaluation = ev;
    bool unmeasured = false;
    for (const auto& w : objective_workloads) {
      p.outcomes.push_back(outcome(*ev, w));
      if (p.outcomes.back().kind == WorkloadOutcome::kError && p.error == nullptr) {
        p.error = p.outcomes.back().error;
      }
      unmeasured |= p.outcomes.back().kind == WorkloadOutcome::kUnmeasured;
    }
    if (p.error == nullptr && unmeasured) {
      ++out.unmeasured;
      continue;
    }
    p.wall_time_ns = event->wall_time_ns;
    if (auto s = compile_seconds.find(p.hash); s != compile_seconds.end()) {
      p.compile_seconds = s->second;
    }
    families.insert(p.family);
    for (const auto& [k, v] : p.knobs) knob_values[k].insert(v);
    points.push_back(std::move(p));
  }
  if (points.empty()) {
    return Status::invalid_argument(
        "the log holds no evaluated point of the search space (a family with knob values, "
        "without gates, measured on " +
        (options.workload.empty() ? std::string("every workload") : options.workload) +
        "): nothing to export");
  }
  // Parameter order: the problem's families and knobs as declared, then as first seen.
  std::vector<std::string> value_order;
  if (problem != nullptr) {
    for (const auto& f : problem->families) {
      family_order.push_back(f.name);
      for (const auto& k : f.knobs) {
        if (std::find(knob_order.begin(), knob_order.end(), k.name) == knob_order.end()) {
          knob_order.push_back(k.name);
        }
        value_order.insert(value_order.end(), k.values.begin(), k.values.end());
      }
    }
  }
  for (const auto& p : points) {
    if (std::find(family_order.begin(), family_order.end(), p.family) == family_order.end()) {
      family_order.push_back(p.family);
    }
    for (const auto& [k, v] : p.knobs) {
      if (std::find(knob_order.begin(), knob_order.end(), k) == knob_order.end()) {
        knob_order.push_back(k);
      }
      value_order.push_back(v);
    }
  }
  const bool family_parameter = families.size() > 1;
  std::vector<std::string> keys;
  Json tune_params = Json::object();
  if (family_parameter) {
    keys.emplace_back(kFamilyParameter);
    Json values = Json::array();
    for (const auto& f : family_order) {
      if (families.count(f) != 0) values.push_back(f);
    }
    tune_params[kFamilyParameter] = values;
  }
  for (const auto& k : knob_order) {
    auto seen = knob_values.find(k);
    if (seen == knob_values.end()) continue;  // a knob of a family no point uses
    if (reserved_names().count(k) != 0 || (family_parameter && k == kFamilyParameter)) {
      return Status::invalid_argument("knob '" + k +
                                      "': a name Kernel Tuner reserves; expected another name");
    }
    for (const auto& v : seen->second) {
      if (v.find(',') != std::string::npos || v == kKernelTunerNotApplicable) {
        std::string m = "knob '";
        m += k;
        m += "' value '";
        m += v;
        m += "': expected a value without a comma, other than '";
        m += kKernelTunerNotApplicable;
        return Status::invalid_argument(m + "'");
      }
    }
    bool partial = false;
    for (const auto& p : points) partial |= p.knobs.count(k) == 0;
    Json values = Json::array();
    for (const auto& v : ordered_values(seen->second, value_order, partial)) {
      values.push_back(parameter_value(v));
    }
    tune_params[k] = values;
    keys.push_back(k);
  }
  for (const auto& f : families) {
    if (f.find(',') != std::string::npos) {
      return Status::invalid_argument("family '" + f + "': expected a name without a comma");
    }
  }

  // The entries, in the order the log evaluated them.
  // (Not an ordered_json object: it looks keys up linearly, and a sweep may hold 10^5 points.)
  std::vector<std::pair<std::string, Json>> cache;
  std::set<std::string> written;
  bool have_best = false;
  for (const Point& p : points) {
    const auto& outcomes = p.outcomes;
    Json entry = Json::object();
    std::string key;
    for (const auto& k : keys) {
      std::string v;
      if (k == kFamilyParameter && family_parameter) {
        v = p.family;
      } else {
        auto it = p.knobs.find(k);
        v = it == p.knobs.end() ? kKernelTunerNotApplicable : it->second;
      }
      key += (key.empty() ? "" : ",") + v;
      entry[k] = parameter_value(v);
    }
    if (!written.insert(key).second) continue;  // the same configuration again: the first counts
    double ms = 0;
    if (p.error != nullptr) {
      entry["time"] = p.error;
      ++out.failed;
    } else {
      // Geometric mean of the medians; "times": of the i-th timed repetition of each workload.
      double log_sum = 0;
      size_t reps = SIZE_MAX;
      for (const auto& o : outcomes) {
        log_sum += std::log(std::max(o.entry->median_ns, 1e-3) / 1e6);
        reps = std::min(reps, o.entry->samples_ns.size());
      }
      ms = std::exp(log_sum / static_cast<double>(outcomes.size()));
      Json times = Json::array();
      for (size_t r = 0; r < reps; ++r) {
        double s = 0;
        for (const auto& o : outcomes) s += std::log(std::max(o.entry->samples_ns[r], 1e-3) / 1e6);
        times.push_back(std::exp(s / static_cast<double>(outcomes.size())));
      }
      entry["time"] = ms;
      entry["times"] = times;
      if (!have_best || ms < out.best_ms) {
        have_best = true;
        out.best_ms = ms;
        out.best_key = key;
      }
    }
    entry["compile_time"] = p.compile_seconds * 1000;
    entry["verification_time"] = 0;  // checked inside the evaluation: in benchmark_time
    entry["benchmark_time"] = p.evaluation->wall_seconds * 1000;
    entry["strategy_time"] = 0;
    entry["framework_time"] = 0;
    entry["timestamp"] = timestamp(p.wall_time_ns);
    entry["candidate"] = p.hash;
    if (p.evaluation == evaluations.front().second) {
      out.baseline_key = key;
      out.baseline_ms = ms;
    }
    cache.emplace_back(key, std::move(entry));
  }
  out.configurations = static_cast<uint32_t>(cache.size());

  Json problem_size = Json::array();
  if (problem != nullptr) {
    for (const auto& w : problem->workloads) {
      if (!options.workload.empty() && w.name != options.workload) continue;
      for (const auto& axis : problem->axes) {
        auto a = w.axes.find(axis);
        if (a != w.axes.end()) problem_size.push_back(a->second);
      }
    }
  }
  Json meta = Json::object();
  meta["problem"] = started.problem_name;
  meta["problem_hash"] = started.problem_hash;
  meta["problem_dir"] = started.problem_dir;
  meta["campaign"] = log.front().campaign;
  meta["mode"] = started.mode;
  meta["device"] = started.device;
  meta["workloads"] = objective_workloads;
  meta["objective"] =
      options.workload.empty()
          ? "geometric mean over the workloads of the median time, ms (a configuration failing "
            "any workload fails)"
          : "median time of workload " + options.workload + ", ms";
  meta["baseline"] = out.baseline_key.empty() ? Json(nullptr) : Json(out.baseline_key);
  meta["baseline_time"] = out.baseline_ms > 0 ? Json(out.baseline_ms) : Json(nullptr);
  meta["best"] = out.best_key.empty() ? Json(nullptr) : Json(out.best_key);
  meta["best_time"] = out.best_key.empty() ? Json(nullptr) : Json(out.best_ms);
  meta["unmeasured"] = out.unmeasured;
  meta["not_points"] = out.gated;

  // Kernel Tuner's layout: the header, then one entry per line, "cache" last (a cache file is
  // appended to, and read back when it ends in "}\n}").
  std::string text = "{\n";
  auto field = [&text](const std::string& k, const Json& v) {
    text += Json(k).dump() + ": " + v.dump() + ",\n";
  };
  field("schema_version", "1.1.0");
  field("device_name", device_name(started.device));
  field("kernel_name", options.kernel_name.empty() ? started.problem_name : options.kernel_name);
  field("problem_size", problem_size);
  field("tune_params_keys", keys);
  field("tune_params", tune_params);
  field("objective", "time");
  field("kernelarc", meta);
  text += "\"cache\": {";
  bool first = true;
  for (const auto& [k, v] : cache) {
    text += (first ? "\n" : ",\n") + Json(k).dump() + ": " + v.dump();
    first = false;
  }
  text += "\n}\n}\n";
  out.text = std::move(text);
  return out;
}

}  // namespace arc::replay
