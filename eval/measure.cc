#include "eval/measure.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <utility>

#include "base/rng.h"

namespace arc::eval {

using json = nlohmann::json;

uint64_t derive_seed(uint64_t input_seed, uint64_t workload_index, uint64_t stream) {
  uint64_t x = input_seed;
  uint64_t h = splitmix64(&x);
  x = h ^ workload_index;
  h = splitmix64(&x);
  x = h ^ stream;
  return splitmix64(&x);
}

std::string format_number(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

SolBound sol_bound(double flops, double bytes, double peak_flops, double peak_bandwidth) {
  double sol_s = 0;
  SolBound b;
  if (peak_flops > 0 && flops > 0 && flops / peak_flops > sol_s) {
    sol_s = flops / peak_flops;
    b.why = format_number(flops) + " flops at the measured peak " + format_number(peak_flops) +
            " flop/s";
  }
  if (peak_bandwidth > 0 && bytes > 0 && bytes / peak_bandwidth > sol_s) {
    sol_s = bytes / peak_bandwidth;
    b.why = format_number(bytes) + " bytes at the measured peak bandwidth " +
            format_number(peak_bandwidth) + " B/s";
  }
  b.ns = sol_s * 1e9;
  return b;
}

Outcome measure_workload(BoundWorkload& w, const EvaluateSettings& r, const WorkloadSpec& spec,
                         size_t position, Reporter& reporter, Outcome o) {
  auto failed = [&o](const Failure& f) {
    o.status = f.status;
    o.error = f.error;
    return std::move(o);
  };
  auto seed = [&r, &spec](uint64_t stream) {
    return derive_seed(r.input_seed, spec.index, stream);
  };
  constexpr size_t kCheck = BoundWorkload::kCorrectnessSet;

  // Correctness: fresh inputs every round.
  if (auto f = w.allocate(kCheck, 1)) return failed(*f);
  o.matched_ratio = 1;
  for (uint32_t round = 0; round < r.rounds; ++round) {
    const std::string when = "in correctness round " + std::to_string(round);
    if (auto f = w.prepare(kCheck, seed(round))) return failed(*f);
    if (auto f = w.run(kCheck, when)) return failed(*f);
    if (auto f = w.check_inputs(kCheck, when)) return failed(*f);
    if (auto f = w.reference(kCheck)) return failed(*f);
    Comparison c;
    if (auto f = w.compare(kCheck, &c)) return failed(*f);
    o.max_abs_error = std::max(o.max_abs_error, c.max_abs_error);
    o.matched_ratio = std::min(o.matched_ratio, c.matched_ratio);
    if (!c.pass) {
      return failed(
          {"WRONG_RESULT", "correctness round " + std::to_string(round) + ": " + c.error});
    }
    o.rounds = round + 1;
  }
  w.release(kCheck);

  // Timing: K sets, W warm-ups, N repetitions rotating the sets.
  reporter.progress(position, spec.name, "timing");
  if (auto f = w.begin_timing()) return failed(*f);
  const uint32_t sets = std::max<uint32_t>(r.buffer_sets, 1);
  const size_t uses = (static_cast<size_t>(r.warmup) + r.repetitions) / sets + 1;
  for (uint32_t k = 0; k < sets; ++k) {
    if (auto f = w.allocate(1 + k, uses)) return failed(*f);
    if (auto f = w.prepare(1 + k, seed(kTimingSetStream + k))) return failed(*f);
  }
  for (uint32_t i = 0; i < r.warmup; ++i) {
    if (auto f = w.warmup(1 + i % sets, i)) return failed(*f);
  }
  if (auto f = w.end_warmup()) return failed(*f);
  const bool every = w.recheck() == Recheck::kEveryRepetition;
  auto stale = [&failed](uint32_t run, uint32_t set, const std::string& why) {
    return failed({"STALE_OUTPUT", "timed run " + std::to_string(run) + " (buffer set " +
                                       std::to_string(set) +
                                       ") does not match the reference for its inputs: " + why});
  };
  for (uint32_t i = 0; i < r.repetitions; ++i) {
    const size_t set = 1 + i % sets;
    if (auto f = w.timed(set, i, seed(kTimedRepetitionStream + i))) return failed(*f);
    if (!every) continue;
    if (auto f = w.check_inputs(set, "in timed run " + std::to_string(i))) return failed(*f);
    Comparison c;
    if (auto f = w.compare(set, &c)) return failed(*f);
    if (!c.pass) return stale(i, i % sets, c.error);
  }
  Timing t;
  if (auto f = w.end_timing(&t)) {
    o.details.insert(o.details.end(), t.details.begin(), t.details.end());
    return failed(*f);
  }
  o.samples = std::move(t.samples_ns);
  if (!t.method.empty()) o.method = std::move(t.method);
  o.details.insert(o.details.end(), t.details.begin(), t.details.end());

  // Re-check of the last use of each set: it holds the output of the last timed run on it.
  for (uint32_t k = 0; !every && k < sets && k < r.repetitions; ++k) {
    const uint32_t last = k + sets * ((r.repetitions - 1 - k) / sets);
    if (auto f = w.recheck_inputs(1 + k, seed(kTimedRepetitionStream + last), k)) {
      return failed(*f);
    }
    if (auto f = w.reference(1 + k)) return failed(*f);
    Comparison c;
    if (auto f = w.compare(1 + k, &c)) return failed(*f);
    if (!c.pass) return stale(last, k, c.error);
  }
  o.stats = summarize_samples(o.samples);

  const SolBound sol = sol_bound(spec.flops, spec.bytes, r.peak_flops, r.peak_bandwidth);
  o.sol_ns = sol.ns;
  if (sol.ns > 0) o.details.emplace_back("sol_bound", sol.why);
  return o;
}

json outcome_json(const std::string& workload, const Outcome& o) {
  json entry = {{"workload", workload},
                {"status", o.status},
                {"error", o.error},
                {"samples_ns", o.samples},
                {"median_ns", json_number(o.stats.median)},
                {"p25_ns", json_number(o.stats.p25)},
                {"p75_ns", json_number(o.stats.p75)},
                {"min_ns", json_number(o.stats.min)},
                {"spread", json_number(o.stats.spread)},
                {"sol_ns", json_number(o.sol_ns)},
                {"method", o.method},
                {"max_abs_error", json_number(o.max_abs_error)},
                {"matched_ratio", json_number(o.matched_ratio)},
                {"rounds", o.rounds}};
  if (!o.details.empty()) {
    json details = json::array();
    for (const auto& [k, v] : o.details) details.push_back({{"key", k}, {"value", v}});
    entry["details"] = std::move(details);
  }
  return entry;
}

json evaluate_request(Device& device, const json& request, Reporter& reporter) {
  const EvaluateSettings settings = parse_evaluate_settings(request);
  std::vector<WorkloadSpec> specs;
  for (const json& w : request.at("workloads")) {
    WorkloadSpec s;
    s.name = w.at("name").get<std::string>();
    s.index = w.at("index").get<uint64_t>();
    s.flops = w.value("flops", 0.0);
    s.bytes = w.value("bytes", 0.0);
    specs.push_back(std::move(s));
  }
  device.load_request(request, settings);
  json results = json::array();
  bool failed = false;
  std::string failed_name;
  for (size_t i = 0; i < specs.size(); ++i) {
    const WorkloadSpec& spec = specs[i];
    Outcome o;
    o.method = device.method();
    if (failed || device.tainted()) {
      o.status = "NOT_RUN";
      o.error = "not run: workload " + failed_name + " failed";
    } else {
      reporter.progress(i, spec.name, "correctness");
      device.begin_workload();
      try {
        Failure f;
        std::unique_ptr<BoundWorkload> bound = device.bind(i, &f, &o.details);
        if (bound == nullptr) {
          o.status = f.status;
          o.error = f.error;
        } else {
          o = measure_workload(*bound, settings, spec, i, reporter, std::move(o));
        }
      } catch (const std::bad_alloc&) {
        o = Outcome{};
        o.method = device.method();
        o.status = "OUT_OF_MEMORY";
        o.error = "the worker could not allocate the buffers of workload " + spec.name +
                  device.memory_limit_note();
      }
      device.end_workload();
      if (o.status != "OK") {
        failed = true;
        failed_name = spec.name;
      }
    }
    json entry = outcome_json(spec.name, o);
    // Streamed too, so the results of earlier workloads survive a later crash.
    if (o.status != "NOT_RUN") reporter.workload(i, entry);
    results.push_back(std::move(entry));
  }
  device.end_request();
  return {{"op", "result"}, {"workloads", std::move(results)}, {"exiting", device.tainted()}};
}

}  // namespace arc::eval
