// arc-replay export --format kernel-tuner (replay/kt_export.h): the shipped H200 softmax sweep as
// a Kernel Tuner cache, checked against the sweep's own records, and a small log for the failure
// names and the refusals.
#include "replay/kt_export.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "replay/reconstruct.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const fs::path kSweep = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/h200-softmax_bf16-sweep";

// The text Python's str() gives a parameter value once parsed: Kernel Tuner's key is these
// joined with commas.
std::string python_str(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

struct Loaded {
  std::vector<events::Event> log;
  actors::RunInputs inputs;
};

Loaded load_sweep() {
  Loaded l;
  auto inputs = run_problem(kSweep, l.log);
  EXPECT_TRUE(inputs.ok()) << inputs.status().to_string();
  if (inputs.ok()) l.inputs = std::move(inputs.value());
  return l;
}

// Per candidate hash, the geometric mean (ms) of its medians over every workload, or of one
// workload, when every workload it needs is OK: what the sweep says, computed from its events.
std::map<std::string, double> recorded_times(const std::vector<events::Event>& log,
                                             const std::string& workload = "") {
  std::map<std::string, double> out;
  for (const auto& e : log) {
    if (e.payload.type != fb::Payload::CandidateEvaluated) continue;
    const auto* ev = e.payload.AsCandidateEvaluated();
    double s = 0;
    int n = 0;
    bool ok = true;
    for (const auto& w : ev->workloads) {
      if (!workload.empty() && w->workload != workload) continue;
      ok &= w->status == fb::WorkloadStatus::OK;
      s += std::log(w->median_ns / 1e6);
      ++n;
    }
    if (ok && n > 0) out.emplace(ev->candidate_hash, std::exp(s / n));
  }
  return out;
}

// Checks the layout Kernel Tuner reads and writes; returns the parsed file.
Json check_structure(const KernelTunerExport& x) {
  const Json j = Json::parse(x.text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  const std::vector<std::string> expected = {"schema_version", "device_name",      "kernel_name",
                                             "problem_size",   "tune_params_keys", "tune_params",
                                             "objective",      "kernelarc",        "cache"};
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(j["schema_version"], "1.1.0");
  EXPECT_EQ(j["objective"], "time");
  // Kernel Tuner treats a cache not ending in "}\n}" as left open and appends to it.
  std::string t = x.text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  EXPECT_EQ(t.substr(t.size() - 3), "}\n}");
  // tune_params in the order of tune_params_keys (Kernel Tuner refuses another order).
  std::vector<std::string> param_order;
  for (const auto& [k, v] : j["tune_params"].items()) param_order.push_back(k);
  EXPECT_EQ(param_order, j["tune_params_keys"].get<std::vector<std::string>>());
  EXPECT_EQ(j["cache"].size(), x.configurations);
  uint32_t failed = 0;
  for (const auto& [key, entry] : j["cache"].items()) {
    std::string joined;
    for (const auto& k : j["tune_params_keys"]) {
      const std::string name = k.get<std::string>();
      EXPECT_TRUE(entry.contains(name)) << key << " lacks " << name;
      if (!entry.contains(name)) continue;
      const auto& values = j["tune_params"][name];
      EXPECT_NE(std::find(values.begin(), values.end(), entry[name]), values.end())
          << key << ": " << name << "=" << entry[name].dump() << " is not in tune_params";
      joined += (joined.empty() ? "" : ",") + python_str(entry[name]);
    }
    EXPECT_EQ(joined, key);
    for (const char* f : {"time", "compile_time", "verification_time", "benchmark_time",
                          "strategy_time", "framework_time", "timestamp"}) {
      EXPECT_TRUE(entry.contains(f)) << key << " lacks " << f;
    }
    EXPECT_EQ(entry["timestamp"].get<std::string>().size(), 32u) << entry["timestamp"];
    if (entry["time"].is_string()) {
      ++failed;
      const std::string err = entry["time"];
      EXPECT_TRUE(err == "CompilationFailedConfig" || err == "RuntimeFailedConfig" ||
                  err == "InvalidConfig")
          << err;
    } else {
      EXPECT_GT(entry["time"].get<double>(), 0);
      EXPECT_FALSE(entry["times"].empty());
    }
  }
  EXPECT_EQ(failed, x.failed);
  return j;
}

TEST(KernelTunerExport, SweepGeometricMeanMatchesTheSweepsBest) {
  Loaded l = load_sweep();
  auto x = kernel_tuner_cache(l.log, &l.inputs.problem, {});
  ASSERT_TRUE(x.ok()) << x.status().to_string();
  const Json j = check_structure(x.value());
  // Every point of the 385-point space is a configuration; one failed (a fault of the harness
  // the replay evaluator answers as recorded, a failure).
  EXPECT_EQ(x->configurations, 385u);
  EXPECT_EQ(x->failed, 1u);
  EXPECT_EQ(x->unmeasured, 0u);
  EXPECT_EQ(j["device_name"], "NVIDIA H200");
  EXPECT_EQ(j["kernel_name"], "softmax_bf16");
  EXPECT_EQ(j["problem_size"], Json::parse("[4096,4096,32768,4096,8192,32000]"));
  // Several families: "family" is the first parameter and a knob a family lacks is "n/a".
  EXPECT_EQ(j["tune_params_keys"][0], "family");
  EXPECT_EQ(j["tune_params"]["family"], Json::parse(R"(["naive","online","regcache","smem"])"));
  EXPECT_EQ(j["tune_params"]["THREADS"], Json::parse(R"([128,256,512,1024,"n/a"])"));
  EXPECT_EQ(j["cache"]["naive,n/a,n/a,n/a,n/a,n/a"]["family"], "naive");
  // The best configuration and time are the sweep's: the fastest geometric mean of medians.
  const auto times = recorded_times(l.log);
  std::string best_hash;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [h, t] : times) {
    if (t < best) {
      best = t;
      best_hash = h;
    }
  }
  EXPECT_DOUBLE_EQ(x->best_ms, best);
  EXPECT_EQ(j["cache"][x->best_key]["candidate"], best_hash);
  EXPECT_DOUBLE_EQ(j["cache"][x->best_key]["time"].get<double>(), best);
  for (const auto& [key, entry] : j["cache"].items()) {
    if (!entry["time"].is_number()) continue;
    EXPECT_GE(entry["time"].get<double>(), best);
    EXPECT_DOUBLE_EQ(entry["time"].get<double>(), times.at(entry["candidate"]));
  }
  // The baseline is the sweep's seed (the problem's naive kernel), evaluated first.
  EXPECT_EQ(x->baseline_key, "naive,n/a,n/a,n/a,n/a,n/a");
  EXPECT_EQ(j["cache"][x->baseline_key]["candidate"], l.inputs.problem.seed.hash());
  EXPECT_EQ(j["kernelarc"]["baseline_time"].get<double>(), x->baseline_ms);
  EXPECT_EQ(j["kernelarc"]["best"], x->best_key);
  // The best point's speedup over the baseline: what KernelArc scores that point (2.45x).
  EXPECT_NEAR(x->baseline_ms / x->best_ms, 2.446, 0.001);
}

TEST(KernelTunerExport, OneWorkloadIsThatWorkloadsMedian) {
  Loaded l = load_sweep();
  KernelTunerExportOptions o;
  o.workload = "r8192_c32000";
  auto x = kernel_tuner_cache(l.log, &l.inputs.problem, o);
  ASSERT_TRUE(x.ok()) << x.status().to_string();
  const Json j = check_structure(x.value());
  EXPECT_EQ(j["problem_size"], Json::parse("[8192,32000]"));
  EXPECT_EQ(j["kernelarc"]["workloads"], Json::parse(R"(["r8192_c32000"])"));
  const auto times = recorded_times(l.log, o.workload);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [h, t] : times) best = std::min(best, t);
  EXPECT_DOUBLE_EQ(x->best_ms, best);
  EXPECT_EQ(x->configurations, 385u);
  const auto& entry = j["cache"][x->best_key];
  EXPECT_DOUBLE_EQ(entry["time"].get<double>(), times.at(entry["candidate"]));
  // "times" are that workload's timed repetitions, in ms.
  EXPECT_EQ(entry["times"].size(), 50u);
}

TEST(KernelTunerExport, WithoutTheProblemTheSameConfigurations) {
  Loaded l = load_sweep();
  auto with = kernel_tuner_cache(l.log, &l.inputs.problem, {});
  auto without = kernel_tuner_cache(l.log, nullptr, {});
  ASSERT_TRUE(with.ok() && without.ok());
  const Json j = check_structure(without.value());
  EXPECT_EQ(j["problem_size"], Json::array());
  EXPECT_EQ(without->configurations, with->configurations);
  // The knobs in the order first seen (alphabetical in a candidate) instead of the problem's:
  // other keys, the same best.
  EXPECT_EQ(j["tune_params_keys"],
            Json::parse(R"(["family","EXP","THREADS","UNROLL","VEC","STAGES"])"));
  EXPECT_EQ(j["cache"][without->best_key]["candidate"],
            Json::parse(with->text)["cache"][with->best_key]["candidate"]);
  EXPECT_DOUBLE_EQ(without->best_ms, with->best_ms);
  EXPECT_EQ(j["tune_params"]["THREADS"], Json::parse(R"([128,256,512,1024,"n/a"])"));
}

TEST(KernelTunerExport, BadWorkloadIsNamedWithTheChoices) {
  Loaded l = load_sweep();
  KernelTunerExportOptions o;
  o.workload = "r1_c1";
  auto x = kernel_tuner_cache(l.log, &l.inputs.problem, o);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().message(),
            "--workload 'r1_c1': expected one of r4096_c4096, r32768_c4096, r8192_c32000");
  std::vector<events::Event> not_a_log(l.log.begin() + 1, l.log.end());
  auto y = kernel_tuner_cache(not_a_log, nullptr, {});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().message(), "expected a log beginning with CampaignStarted");
}

// A small log: per candidate, its workloads' statuses (and medians in ns).
class SmallLog {
 public:
  SmallLog() {
    fb::CampaignStartedT s;
    s.problem_name = "toy";
    s.device = "host: test machine";
    s.mode = "sweep";
    add(s);
  }
  void point(const std::string& canonical,
             const std::vector<std::pair<fb::WorkloadStatus, double>>& workloads) {
    auto c = problem::Candidate::from_canonical(canonical);
    ASSERT_TRUE(c.ok()) << canonical;
    fb::CandidateProposedT p;
    p.candidate_hash = c->hash();
    p.agent = "sweep";
    p.canonical = c->canonical();
    add(p);
    fb::CandidateEvaluatedT ev;
    ev.candidate_hash = c->hash();
    ev.wall_seconds = 0.5;
    const char* names[] = {"w1", "w2"};
    for (size_t i = 0; i < workloads.size(); ++i) {
      auto w = std::make_unique<fb::WorkloadEvaluationT>();
      w->workload = names[i];
      w->status = workloads[i].first;
      w->median_ns = workloads[i].second;
      w->samples_ns = {workloads[i].second};
      ev.workloads.push_back(std::move(w));
    }
    add(ev);
  }
  const std::vector<events::Event>& log() const { return log_; }

 private:
  template <class T>
  void add(T payload) {
    auto e = events::make_event("sweep", std::move(payload));
    e.seq = log_.size() + 1;
    e.campaign = "toy";
    e.wall_time_ns = 1'796'400'000'000'000'000 + static_cast<int64_t>(log_.size()) * 1000;
    log_.push_back(std::move(e));
  }
  std::vector<events::Event> log_;
};

constexpr auto kOk = fb::WorkloadStatus::OK;

TEST(KernelTunerExport, FailuresCarryKernelTunersNames) {
  SmallLog l;
  l.point(R"({"base":{"family":"a","knobs":{"T":"1"}}})", {{kOk, 2e6}, {kOk, 8e6}});
  l.point(R"({"base":{"family":"a","knobs":{"T":"2"}}})",
          {{fb::WorkloadStatus::COMPILE_ERROR, 0}, {fb::WorkloadStatus::COMPILE_ERROR, 0}});
  l.point(R"({"base":{"family":"a","knobs":{"T":"4"}}})",
          {{fb::WorkloadStatus::WRONG_RESULT, 0}, {fb::WorkloadStatus::NOT_RUN, 0}});
  l.point(R"({"base":{"family":"a","knobs":{"T":"8"}}})",
          {{kOk, 1e6}, {fb::WorkloadStatus::UNANSWERED, 0}});
  l.point(R"({"base":{"family":"b"}})", {{kOk, 1e6}, {kOk, 1e6}});
  l.point(R"({"base":{"family":"a","knobs":{"T":"1"}},"gates":{"w1":{"family":"b"}}})",
          {{kOk, 1e6}, {kOk, 8e6}});
  auto x = kernel_tuner_cache(l.log(), nullptr, {});
  ASSERT_TRUE(x.ok()) << x.status().to_string();
  const Json j = check_structure(x.value());
  EXPECT_EQ(j["device_name"], "test machine");
  EXPECT_EQ(j["tune_params_keys"], Json::parse(R"(["family","T"])"));
  EXPECT_EQ(j["tune_params"]["T"], Json::parse(R"([1,2,4,"n/a"])"));  // T=8 measured nothing
  EXPECT_DOUBLE_EQ(j["cache"]["a,1"]["time"].get<double>(), 4.0);     // sqrt(2 ms * 8 ms)
  EXPECT_EQ(j["cache"]["a,2"]["time"], "CompilationFailedConfig");
  EXPECT_EQ(j["cache"]["a,4"]["time"], "RuntimeFailedConfig");
  EXPECT_FALSE(j["cache"].contains("a,8"));  // UNANSWERED: not measured, left out
  EXPECT_EQ(j["cache"]["b,n/a"]["time"].get<double>(), 1.0);
  EXPECT_EQ(j["cache"]["a,1"]["timestamp"], "2026-12-04T16:00:00.000002+00:00");
  EXPECT_EQ(x->configurations, 4u);
  EXPECT_EQ(x->failed, 2u);
  EXPECT_EQ(x->unmeasured, 1u);
  EXPECT_EQ(x->gated, 1u);
  EXPECT_EQ(x->best_key, "b,n/a");
  EXPECT_EQ(x->baseline_key, "a,1");
  EXPECT_DOUBLE_EQ(x->baseline_ms, 4.0);
  // One workload: the protocol stopped T=4 at its first failure, which stands for w2; T=8 is
  // measured on w1.
  KernelTunerExportOptions o;
  o.workload = "w2";
  auto w2 = kernel_tuner_cache(l.log(), nullptr, o);
  ASSERT_TRUE(w2.ok());
  const Json j2 = Json::parse(w2->text);
  EXPECT_EQ(j2["cache"]["a,4"]["time"], "RuntimeFailedConfig");
  EXPECT_DOUBLE_EQ(j2["cache"]["a,1"]["time"].get<double>(), 8.0);
  o.workload = "w1";
  auto w1 = kernel_tuner_cache(l.log(), nullptr, o);
  ASSERT_TRUE(w1.ok());
  EXPECT_DOUBLE_EQ(Json::parse(w1->text)["cache"]["a,8"]["time"].get<double>(), 1.0);
}

TEST(KernelTunerExport, NamesKernelTunerCannotTakeAreRefused) {
  SmallLog reserved;
  reserved.point(R"({"base":{"family":"a","knobs":{"time":"1"}}})", {{kOk, 1e6}});
  auto x = kernel_tuner_cache(reserved.log(), nullptr, {});
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().message(),
            "knob 'time': a name Kernel Tuner reserves; expected another name");
  SmallLog comma;
  comma.point(R"({"base":{"family":"a","knobs":{"T":"1,2"}}})", {{kOk, 1e6}});
  auto y = kernel_tuner_cache(comma.log(), nullptr, {});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().message(),
            "knob 'T' value '1,2': expected a value without a comma, other than 'n/a'");
  SmallLog gated_only;
  gated_only.point(R"({"base":{"family":"a"},"gates":{"w1":{"family":"b"}}})", {{kOk, 1e6}});
  auto z = kernel_tuner_cache(gated_only.log(), nullptr, {});
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("no evaluated point"), std::string::npos);
}

}  // namespace
}  // namespace arc::replay
