// The measurement protocol (eval/measure.h) driven through a device whose "buffers" are
// numbers: what the protocol decides (order of steps, seeds, NOT_RUN, re-check, statistics,
// SOL) is tested here in isolation; the host and CUDA devices are tested by their evaluators.
#include "eval/measure.h"

#include <cmath>
#include <limits>
#include <map>
#include <new>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

enum class Kernel { kCorrect, kWrong, kReplaysFirstTimedOutput, kWritesItsInputWhenTimed };

struct Trace {
  std::vector<std::string> steps;  // "prepare 0 <seed>", "run 0", "timed 1 3", ...
};

// A set holds one input value, the candidate's output and the reference's.
struct Set {
  double in = 0, drawn = 0, out = 0, ref = std::numeric_limits<double>::quiet_NaN();
};

class FakeWorkload : public BoundWorkload {
 public:
  FakeWorkload(Kernel k, Recheck recheck, std::vector<double> samples, Trace* trace)
      : kernel_(k), recheck_(recheck), samples_(std::move(samples)), trace_(trace) {}

  Step allocate(size_t set, size_t) override {
    if (sets_.size() <= set) sets_.resize(set + 1);
    return std::nullopt;
  }
  void release(size_t) override {}
  Step prepare(size_t set, uint64_t seed) override {
    trace_->steps.push_back("prepare " + std::to_string(set) + " " + std::to_string(seed));
    sets_[set].in = sets_[set].drawn = static_cast<double>(seed % 1000);
    sets_[set].ref = std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
  }
  Step run(size_t set, const std::string&) override {
    trace_->steps.push_back("run " + std::to_string(set));
    sets_[set].out = kernel_ == Kernel::kWrong ? 2 * sets_[set].in + 1 : 2 * sets_[set].in;
    return std::nullopt;
  }
  Step check_inputs(size_t set, const std::string& when) override {
    if (sets_[set].in != sets_[set].drawn)
      return Failure{"WRONG_RESULT", "wrote to its input " + when};
    return std::nullopt;
  }
  Step reference(size_t set) override {
    sets_[set].ref = 2 * sets_[set].in;
    return std::nullopt;
  }
  Step compare(size_t set, Comparison* c) override {
    if (std::isnan(sets_[set].ref)) reference(set);  // a device that computes it in prepare()
    c->pass = sets_[set].out == sets_[set].ref;
    c->max_abs_error = std::fabs(sets_[set].out - sets_[set].ref);
    c->matched_ratio = c->pass ? 1 : 0;
    if (!c->pass) c->error = "got " + std::to_string(sets_[set].out);
    return std::nullopt;
  }
  Step begin_timing() override { return std::nullopt; }
  Step warmup(size_t set, uint32_t) override { return run(set, ""); }
  Step end_warmup() override { return std::nullopt; }
  Step timed(size_t set, uint32_t i, uint64_t fresh_seed) override {
    trace_->steps.push_back("timed " + std::to_string(set) + " " + std::to_string(i));
    Set& s = sets_[set];
    if (recheck_ == Recheck::kLastUseOfSet) s.in = s.drawn = static_cast<double>(fresh_seed % 1000);
    if (kernel_ == Kernel::kReplaysFirstTimedOutput && i > 0) {
      s.out = first_timed_out_;
    } else {
      s.out = 2 * s.in;
      if (i == 0) first_timed_out_ = s.out;
    }
    if (kernel_ == Kernel::kWritesItsInputWhenTimed) s.in += 1;
    return std::nullopt;
  }
  Step end_timing(Timing* t) override {
    t->samples_ns = samples_;
    t->method = "fake_clock";
    t->details.emplace_back("clock", "fake");
    return std::nullopt;
  }
  Recheck recheck() const override { return recheck_; }
  Step recheck_inputs(size_t set, uint64_t seed, uint32_t k) override {
    trace_->steps.push_back("recheck " + std::to_string(set) + " " + std::to_string(seed));
    if (sets_[set].in != sets_[set].drawn) {
      return Failure{"WRONG_RESULT",
                     "wrote to its input during timing (buffer set " + std::to_string(k) + ")"};
    }
    return prepare(set, seed);
  }

 private:
  Kernel kernel_;
  Recheck recheck_;
  std::vector<double> samples_;
  Trace* trace_;
  std::vector<Set> sets_;
  double first_timed_out_ = 0;
};

class FakeDevice : public Device {
 public:
  std::map<std::string, Kernel> kernels;  // by workload name; default kCorrect
  Recheck recheck = Recheck::kEveryRepetition;
  std::vector<double> samples = {5, 1, 3, 2, 4};
  bool taint_after_first = false;
  bool bad_alloc = false;
  Trace trace;

  void describe(json*) const override {}
  json peaks() override { return {{"op", "peaks"}}; }
  void load_request(const json& request, const EvaluateSettings&) override {
    names_.clear();
    for (const auto& w : request.at("workloads")) names_.push_back(w.at("name").get<std::string>());
  }
  std::unique_ptr<BoundWorkload> bind(size_t position, Failure* failure, Details* d) override {
    if (bad_alloc) throw std::bad_alloc();
    if (names_[position] == "unloadable") {
      *failure = {"LOAD_ERROR", "no such kernel"};
      return nullptr;
    }
    d->emplace_back("bound", names_[position]);
    auto it = kernels.find(names_[position]);
    const Kernel k = it == kernels.end() ? Kernel::kCorrect : it->second;
    return std::make_unique<FakeWorkload>(k, recheck, samples, &trace);
  }
  void end_workload() override { tainted_ = tainted_ || taint_after_first; }
  std::string memory_limit_note() const override { return " (note)"; }
  bool tainted() const override { return tainted_; }
  std::string method() const override { return "fake_clock"; }

 private:
  std::vector<std::string> names_;
  bool tainted_ = false;
};

class RecordingReporter : public Reporter {
 public:
  std::vector<std::string> progress_seen;
  std::vector<json> workloads;
  void progress(size_t position, const std::string& name, const char* phase) override {
    progress_seen.push_back(std::to_string(position) + " " + name + " " + phase);
  }
  void workload(size_t, const json& entry) override { workloads.push_back(entry); }
};

json request(const std::vector<std::string>& names, uint32_t rounds = 2, uint32_t warmup = 1,
             uint32_t repetitions = 5, uint32_t sets = 2) {
  json ws = json::array();
  uint64_t index = 7;
  for (const auto& n : names) {
    ws.push_back({{"name", n}, {"index", index++}, {"flops", 0.0}, {"bytes", 1000.0}});
  }
  return {{"op", "evaluate"},
          {"input_seed", 42},
          {"rounds", rounds},
          {"warmup", warmup},
          {"repetitions", repetitions},
          {"buffer_sets", sets},
          {"flush_cache", true},
          {"peak_bandwidth_bytes_per_s", 1e11},
          {"tolerance", {{"atol", 0.0}, {"rtol", 0.0}, {"matched_ratio", 1.0}}},
          {"workloads", ws}};
}

TEST(MeasureProtocol, TheFirstFailureLeavesTheRestNotRun) {
  FakeDevice d;
  d.kernels["b"] = Kernel::kWrong;
  RecordingReporter rep;
  json r = evaluate_request(d, request({"a", "b", "c"}), rep);
  ASSERT_EQ(r["workloads"].size(), 3u);
  EXPECT_EQ(r["workloads"][0]["status"], "OK");
  EXPECT_EQ(r["workloads"][1]["status"], "WRONG_RESULT");
  EXPECT_THAT(r["workloads"][1]["error"].get<std::string>(), HasSubstr("correctness round 0: got"));
  EXPECT_EQ(r["workloads"][2]["status"], "NOT_RUN");
  EXPECT_EQ(r["workloads"][2]["error"], "not run: workload b failed");
  EXPECT_EQ(r["workloads"][2]["method"], "fake_clock");
  EXPECT_FALSE(r["exiting"].get<bool>());
  // Streamed: every workload that ran, not the one that did not.
  ASSERT_EQ(rep.workloads.size(), 2u);
  EXPECT_EQ(rep.workloads[1], r["workloads"][1]);
  EXPECT_EQ(rep.progress_seen,
            (std::vector<std::string>{"0 a correctness", "0 a timing", "1 b correctness"}));
}

TEST(MeasureProtocol, ALoadErrorAndATaintedDeviceStopTheRequest) {
  FakeDevice d;
  RecordingReporter rep;
  json r = evaluate_request(d, request({"unloadable", "a"}), rep);
  EXPECT_EQ(r["workloads"][0]["status"], "LOAD_ERROR");
  EXPECT_EQ(r["workloads"][1]["status"], "NOT_RUN");

  FakeDevice t;
  t.taint_after_first = true;
  r = evaluate_request(t, request({"a", "b"}), rep);
  EXPECT_EQ(r["workloads"][0]["status"], "OK");
  EXPECT_EQ(r["workloads"][1]["status"], "NOT_RUN");
  EXPECT_TRUE(r["exiting"].get<bool>());

  FakeDevice m;
  m.bad_alloc = true;
  r = evaluate_request(m, request({"a"}), rep);
  EXPECT_EQ(r["workloads"][0]["status"], "OUT_OF_MEMORY");
  EXPECT_EQ(r["workloads"][0]["error"],
            "the worker could not allocate the buffers of workload a (note)");
}

TEST(MeasureProtocol, StepsAndSeedsInOrder) {
  FakeDevice d;
  d.recheck = Recheck::kLastUseOfSet;
  RecordingReporter rep;
  json r = evaluate_request(d, request({"a"}, 2, 1, 3, 2), rep);
  ASSERT_EQ(r["workloads"][0]["status"], "OK") << r.dump();
  auto seed = [](uint64_t stream) { return std::to_string(derive_seed(42, 7, stream)); };
  const std::vector<std::string> want = {
      "prepare 0 " + seed(0), "run 0", "prepare 0 " + seed(1), "run 0",
      "prepare 1 " + seed(kTimingSetStream), "prepare 2 " + seed(kTimingSetStream + 1),
      "run 1",  // the warm-up
      "timed 1 0", "timed 2 1", "timed 1 2",
      // the last use of set 1 is repetition 2, of set 2 repetition 1
      "recheck 1 " + seed(kTimedRepetitionStream + 2),
      "prepare 1 " + seed(kTimedRepetitionStream + 2),
      "recheck 2 " + seed(kTimedRepetitionStream + 1),
      "prepare 2 " + seed(kTimedRepetitionStream + 1)};
  EXPECT_EQ(d.trace.steps, want);
  EXPECT_EQ(r["workloads"][0]["rounds"], 2);
}

TEST(MeasureProtocol, TheRecheckCatchesStaleOutputs) {
  for (Recheck policy : {Recheck::kEveryRepetition, Recheck::kLastUseOfSet}) {
    FakeDevice d;
    d.recheck = policy;
    d.kernels["a"] = Kernel::kReplaysFirstTimedOutput;
    RecordingReporter rep;
    json r = evaluate_request(d, request({"a", "b"}, 2, 1, 5, 2), rep);
    EXPECT_EQ(r["workloads"][0]["status"], "STALE_OUTPUT");
    // Every repetition: the first with other inputs is repetition 1 on set 1; last use: set 0's
    // last repetition is 4.
    EXPECT_THAT(r["workloads"][0]["error"].get<std::string>(),
                HasSubstr(policy == Recheck::kEveryRepetition
                              ? "timed run 1 (buffer set 1) does not match the reference"
                              : "timed run 4 (buffer set 0) does not match the reference"));
    EXPECT_EQ(r["workloads"][1]["status"], "NOT_RUN");
  }
}

TEST(MeasureProtocol, AWriteToAnInputDuringTimingIsAWrongResult) {
  for (Recheck policy : {Recheck::kEveryRepetition, Recheck::kLastUseOfSet}) {
    FakeDevice d;
    d.recheck = policy;
    d.kernels["a"] = Kernel::kWritesItsInputWhenTimed;
    RecordingReporter rep;
    json r = evaluate_request(d, request({"a"}), rep);
    EXPECT_EQ(r["workloads"][0]["status"], "WRONG_RESULT");
    EXPECT_THAT(r["workloads"][0]["error"].get<std::string>(), HasSubstr("wrote to its input"));
  }
}

TEST(MeasureProtocol, StatisticsAndTheSolBoundAreReportedNotJudged) {
  FakeDevice d;
  d.samples = {5, 1, 3, 2, 4};  // ns; the bound is 1000 bytes at 1e11 B/s = 10 ns
  RecordingReporter rep;
  json r = evaluate_request(d, request({"a"}), rep);
  const json& w = r["workloads"][0];
  EXPECT_EQ(w["status"], "OK");  // below the bound: the guard's call (actors/guard_core.h)
  EXPECT_EQ(w["median_ns"], 3);
  EXPECT_EQ(w["p25_ns"], 2);
  EXPECT_EQ(w["p75_ns"], 4);
  EXPECT_EQ(w["min_ns"], 1);
  EXPECT_DOUBLE_EQ(w["spread"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(w["sol_ns"].get<double>(), 10);
  EXPECT_EQ(w["method"], "fake_clock");
  EXPECT_EQ(w["samples_ns"], json({5, 1, 3, 2, 4}));
  EXPECT_FALSE(w.contains("sol_floor_ns"));
  json details = w["details"];
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[0]["key"], "bound");
  EXPECT_EQ(details[1]["key"], "clock");
  EXPECT_EQ(details[2]["key"], "sol_bound");
  EXPECT_EQ(details[2]["value"], "1e+03 bytes at the measured peak bandwidth 1e+11 B/s");
}

TEST(MeasureProtocol, SolBound) {
  EXPECT_EQ(sol_bound(0, 0, 1e12, 1e11).ns, 0);
  EXPECT_EQ(sol_bound(1e6, 1e3, 0, 0).ns, 0);
  const SolBound b = sol_bound(2e6, 1e3, 1e12, 1e11);  // 2000 ns of flops, 10 ns of bytes
  EXPECT_DOUBLE_EQ(b.ns, 2000);
  EXPECT_THAT(b.why, HasSubstr("flops at the measured peak"));
}

}  // namespace
}  // namespace arc::eval
