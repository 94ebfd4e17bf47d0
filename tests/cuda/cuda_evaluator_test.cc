// The CUDA evaluator end to end on a real GPU: correct kernels pass with sane statistics; an
// illegal address, a trap, a hang and an impossible workspace are REJECTed with the reason and
// cost only the worker; wrong and NaN kernels are caught; the reward-hacking suite
// (CudaRewardHack) is REJECTed hack by hack; the shipped problems' seeds (cuBLASLt included)
// pass; CUPTI activity spans are the samples where CUPTI works, with the CUDA event median
// beside them. Skips, saying why, without a GPU.
#include "eval/cuda_evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/throttle.h"
#include "eval/pair.h"
#include "problem/problem.h"
#include "tests/cuda/hopper_cases.h"
#include "tests/cuda/paths.h"

namespace arc::eval {

using problem::Candidate;
using problem::Family;
using problem::load_problem;
using problem::Problem;
namespace {

using arc::test_paths::source_dir;

namespace fs = std::filesystem;
using fb::WorkloadStatus;
using ::testing::HasSubstr;

#define ARC_REQUIRE_GPU()                                                               \
  do {                                                                                  \
    std::string why;                                                                    \
    if (!CudaEvaluator::device_available(&why)) GTEST_SKIP() << "no GPU here: " << why; \
  } while (0)

EvalSettings light() {
  EvalSettings s;
  s.rounds = 2;
  s.warmup = 2;
  s.repetitions = 5;
  s.buffer_sets = 2;
  s.timeout_s = 20;
  return s;
}

class CudaEvaluatorTest : public ::testing::Test {
 public:  // the helpers below the fixture use options() and run()
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/arc-cuda-eval-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    cache_ = new fs::path(tmpl);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*cache_, ec);
    delete cache_;
  }
  static CudaEvaluatorOptions options() {
    CudaEvaluatorOptions o;
    o.cache_dir = *cache_;
    const char* ev = std::getenv("ARC_EVAL");
    o.worker_path = ev != nullptr && *ev != '\0' ? fs::path(ev)
                                                 : fs::path(ARC_BINARY_DIR) / "tools" / "arc-eval";
    o.include_root = source_dir();
    // As arcd runs it: the worker in the sandbox (with the GPU's device nodes) where possible.
    o.sandbox = Sandbox::detect(SandboxMode::kAuto);
    return o;
  }
  static Problem faults() {
    auto p = load_problem(source_dir() / "tests" / "data" / "gpu" / "faults");
    EXPECT_TRUE(p) << p.status().to_string();
    return *p;
  }
  static fb::CandidateEvaluatedT run(CudaEvaluator& ev, const Candidate& c,
                                     EvalSettings s = light()) {
    const std::string hash = c.hash();
    fb::CompileFinishedT compiled = ev.compile(c, hash);
    EvalRequest req;
    req.candidate = c;
    req.candidate_hash = hash;
    req.input_seed = 7;
    req.settings = s;
    return ev.evaluate(req, compiled);
  }
  static Candidate mode(int m, int skip_after = 1) {
    Candidate c;
    c.base.family = "faults";
    c.base.knobs = {{"MODE", std::to_string(m)}, {"SKIP_AFTER", std::to_string(skip_after)}};
    return c;
  }
  static void expect_first(const fb::CandidateEvaluatedT& r, WorkloadStatus status,
                           const std::string& part) {
    ASSERT_EQ(r.workloads.size(), 2u);
    EXPECT_EQ(r.workloads[0]->status, status)
        << fb::EnumNameWorkloadStatus(r.workloads[0]->status) << ": " << r.workloads[0]->error;
    EXPECT_THAT(r.workloads[0]->error, HasSubstr(part));
    EXPECT_EQ(r.workloads[1]->status, WorkloadStatus::NOT_RUN);
  }
  // The value of a workload's detail `key`, "" when absent.
  static std::string detail(const fb::WorkloadEvaluationT& w, const std::string& key) {
    for (const auto& d : w.details) {
      if (d && d->key == key) return d->value;
    }
    return "";
  }
  static fs::path* cache_;
};
fs::path* CudaEvaluatorTest::cache_ = nullptr;

TEST_F(CudaEvaluatorTest, WithoutAGpuEvaluationFailsCleanlyButCompilationWorks) {
  std::string why;
  if (CudaEvaluator::device_available(&why)) GTEST_SKIP() << "a GPU is present";
  CudaEvaluator ev(faults(), options());
  EXPECT_THAT(ev.device(), HasSubstr("cuda: "));
  EXPECT_FALSE(ev.peaks());
  auto compiled = ev.compile(mode(0), mode(0).hash());
  EXPECT_TRUE(compiled.ok) << compiled.variants[0]->error;
  ASSERT_EQ(compiled.variants.size(), 1u);
  EXPECT_FALSE(compiled.variants[0]->kernels.empty());
  auto r = run(ev, mode(0));
  ASSERT_EQ(r.workloads.size(), 2u);
  EXPECT_EQ(r.workloads[0]->status, WorkloadStatus::CRASH);
  EXPECT_THAT(r.workloads[0]->error, HasSubstr(why));
}

// An llm/exec agent's free source: the family named supplies the launches; NVRTC compiles it
// with or without a GPU.
static Candidate free_source(bool with_family) {
  std::ifstream in(source_dir() / "tests" / "data" / "gpu" / "faults" / "families" / "faults.cu");
  std::stringstream text;
  text << in.rdbuf();
  Candidate c;
  c.base.source = "// written by a model\n" + text.str();
  if (with_family) c.base.family = "faults";
  c.base.knobs = {{"MODE", "0"}, {"SKIP_AFTER", "1"}};
  return c;
}

TEST_F(CudaEvaluatorTest, FreeSourceCompilesWithItsFamilysLaunches) {
  CudaEvaluator ev(faults(), options());
  const Candidate c = free_source(true);
  auto compiled = ev.compile(c, c.hash());
  ASSERT_EQ(compiled.variants.size(), 1u);
  EXPECT_TRUE(compiled.ok) << compiled.variants[0]->error;
  EXPECT_FALSE(compiled.variants[0]->kernels.empty());
  EXPECT_THAT(compiled.variants[0]->variant, HasSubstr("@faults{"));
  const Candidate bare = free_source(false);
  auto refused = ev.compile(bare, bare.hash());
  EXPECT_FALSE(refused.ok);
  ASSERT_EQ(refused.variants.size(), 1u);
  EXPECT_THAT(refused.variants[0]->error, HasSubstr("needs a family to take its launches from"));
}

TEST_F(CudaEvaluatorTest, FreeSourcePassesOnTheGpu) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto r = run(ev, free_source(true));
  ASSERT_EQ(r.workloads.size(), 2u);
  for (const auto& w : r.workloads) {
    EXPECT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
  }
}

TEST_F(CudaEvaluatorTest, CorrectKernelPassesWithSaneTimingClocksAndPeaks) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto r = run(ev, mode(0));
  ASSERT_EQ(r.workloads.size(), 2u);
  for (const auto& w : r.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    EXPECT_EQ(w->samples_ns.size(), 5u);
    // timing = "auto": CUPTI spans where CUPTI works, else CUDA events and the reason.
    EXPECT_THAT(w->method, ::testing::AnyOf("cupti_activity", "cuda_events"));
    if (w->method == "cuda_events") {
      EXPECT_NE(detail(*w, "timing_method_reason"), "");
    }
    EXPECT_GT(w->min_ns, 0);
    EXPECT_LE(w->min_ns, w->median_ns);
    EXPECT_GT(w->sol_ns, 0);
    EXPECT_EQ(w->max_abs_error, 0.0);
    EXPECT_EQ(w->rounds, 2u);
  }
  EXPECT_EQ(r.evaluator, "cuda");
  EXPECT_THAT(r.device, HasSubstr("NVIDIA"));
  bool sm = false;
  for (const auto& kv : r.clocks) sm = sm || kv->key == "sm_mhz";
  EXPECT_TRUE(sm) << "no SM clock recorded";
  auto p = ev.peaks();
  ASSERT_TRUE(p) << p.status().to_string();
  EXPECT_GT(p->bandwidth_bytes_per_s, 1e12);
  EXPECT_GT(p->flops_per_s, 1e12);
  std::printf("peaks: copy %.3g B/s, f32 GEMM %.3g flop/s; n16m median %.1f us\n",
              p->bandwidth_bytes_per_s, p->flops_per_s, r.workloads[1]->median_ns / 1e3);
  for (const auto& d : p->details) std::printf("  %s = %s\n", d->key.c_str(), d->value.c_str());
}

// Every timed workload carries NVML's readings from right before its first timed repetition
// and right after its last, and the throttling verdict those readings give (base/throttle.h);
// the evaluation's clocks are the last workload's readings after its timed runs.
TEST_F(CudaEvaluatorTest, TimedWorkloadsCarryClocksBeforeAndAfterAndAThrottleVerdict) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto r = run(ev, mode(0));
  ASSERT_EQ(r.workloads.size(), 2u);
  for (const auto& w : r.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    throttle::Readings before, after;
    for (const auto& d : w->details) {
      const std::string b = throttle::kBeforePrefix, a = throttle::kAfterPrefix;
      if (d->key.rfind(b, 0) == 0) before.emplace_back(d->key.substr(b.size()), d->value);
      if (d->key.rfind(a, 0) == 0) after.emplace_back(d->key.substr(a.size()), d->value);
      std::printf("%s: %s = %s\n", w->workload.c_str(), d->key.c_str(), d->value.c_str());
    }
    for (const char* key :
         {"sm_mhz", "mem_mhz", "temperature_c", "power_w", "clocks_event_reasons"}) {
      EXPECT_NE(detail(*w, std::string("before.") + key), "") << w->workload << ": " << key;
      EXPECT_NE(detail(*w, std::string("after.") + key), "") << w->workload << ": " << key;
    }
    EXPECT_GT(std::stod(detail(*w, "before.sm_mhz")), 0) << w->workload;
    EXPECT_GT(std::stod(detail(*w, "after.sm_mhz")), 0) << w->workload;
    EXPECT_TRUE(throttle::parse_mask(detail(*w, "before.clocks_event_reasons"))) << w->workload;
    EXPECT_TRUE(throttle::parse_mask(detail(*w, "after.clocks_event_reasons"))) << w->workload;
    // A known verdict, and the one the recorded readings give.
    const std::string verdict = detail(*w, "throttled");
    EXPECT_TRUE(verdict == "no" || throttle::throttled_reasons(verdict)) << verdict;
    EXPECT_EQ(verdict, throttle::verdict(before, after)) << w->workload;
    // No unprefixed reading is left beside them.
    EXPECT_EQ(detail(*w, "sm_mhz"), "") << w->workload;
  }
  std::string source;
  for (const auto& kv : r.clocks) {
    EXPECT_EQ(kv->key.find('.'), std::string::npos) << kv->key;
    if (kv->key == "clocks_source") source = kv->value;
    if (kv->key == "sm_mhz") {
      EXPECT_EQ(kv->value, detail(*r.workloads[1], "after.sm_mhz"));
    }
  }
  EXPECT_EQ(source, "NVML, after the timed runs of " + r.workloads[1]->workload);
}

// CUPTI activity spans are the samples where CUPTI works (the H200 machine has libcupti);
// timing = "cupti" makes a workload fail, with the reason, where it does not.
TEST_F(CudaEvaluatorTest, CuptiSpansAreTheSamplesAndEventsAreKeptBeside) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  EvalSettings s = light();
  s.timing = "cupti";
  auto r = run(ev, mode(0), s);
  ASSERT_EQ(r.workloads.size(), 2u);
  for (const auto& w : r.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    EXPECT_EQ(w->method, "cupti_activity") << detail(*w, "timing_method_reason");
    ASSERT_EQ(w->samples_ns.size(), static_cast<size_t>(s.repetitions));
    for (double ns : w->samples_ns) EXPECT_GT(ns, 0) << w->workload;
    EXPECT_GT(w->min_ns, 0);
    const std::string events = detail(*w, "cuda_events_median_ns");
    ASSERT_NE(events, "") << w->workload << ": no CUDA event median in details";
    EXPECT_GT(std::stod(events), 0) << events;
    // The faults family launches one kernel, extern "C" scale, once per repetition.
    EXPECT_EQ(detail(*w, "timed_kernels"), "scale") << w->workload;
    EXPECT_EQ(detail(*w, "timing_method_reason"), "");
    std::printf("%s: CUPTI median %.1f us, CUDA events median %s ns, kernels %s\n",
                w->workload.c_str(), w->median_ns / 1e3, events.c_str(),
                detail(*w, "timed_kernels").c_str());
  }
}

TEST_F(CudaEvaluatorTest, TimingCudaEventsIsHonouredAndAutoReturnsToCupti) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  EvalSettings s = light();
  s.timing = "cuda_events";
  auto events = run(ev, mode(0), s);
  for (const auto& w : events.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    EXPECT_EQ(w->method, "cuda_events");
    EXPECT_EQ(w->samples_ns.size(), static_cast<size_t>(s.repetitions));
    EXPECT_THAT(detail(*w, "timing_method_reason"), HasSubstr("cuda_events"));
    EXPECT_EQ(detail(*w, "cuda_events_median_ns"), "");
  }
  // The same worker, CUPTI switched back on.
  s.timing = "auto";
  auto spans = run(ev, mode(0), s);
  for (const auto& w : spans.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    EXPECT_EQ(w->method, "cupti_activity") << detail(*w, "timing_method_reason");
  }
  EXPECT_EQ(ev.worker_restarts(), 0u);
}

TEST_F(CudaEvaluatorTest, IllegalAddressAndTrapCostOnlyTheWorker) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto bad = run(ev, mode(1));
  expect_first(bad, WorkloadStatus::CRASH, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(bad.worker_restarts, 1u);
  auto trap = run(ev, mode(2));
  expect_first(trap, WorkloadStatus::CRASH, "CUDA_ERROR_");
  auto good = run(ev, mode(0));
  EXPECT_EQ(good.workloads[0]->status, WorkloadStatus::OK) << good.workloads[0]->error;
  EXPECT_EQ(good.workloads[1]->status, WorkloadStatus::OK) << good.workloads[1]->error;
  EXPECT_GE(ev.worker_restarts(), 2u);
}

TEST_F(CudaEvaluatorTest, AHangIsATimeoutAndTheNextCandidateRuns) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  EvalSettings s = light();
  s.timeout_s = 8;
  auto hang = run(ev, mode(3), s);
  expect_first(hang, WorkloadStatus::TIMEOUT, "timeout");
  auto good = run(ev, mode(0));
  EXPECT_EQ(good.workloads[0]->status, WorkloadStatus::OK) << good.workloads[0]->error;
}

TEST_F(CudaEvaluatorTest, WrongAndNanOutputsAreCaught) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(4)), WorkloadStatus::WRONG_RESULT, "within atol");
  expect_first(run(ev, mode(8)), WorkloadStatus::WRONG_RESULT, "NaN");
}

// ---------------------------------------------------------------------------------------------
// The reward-hacking suite on the GPU (docs/threat-model.md): one case per hack, each REJECTed
// with the status and reason of its defence. The kernels are tests/data/gpu/faults's MODEs.

class CudaRewardHack : public CudaEvaluatorTest {};

TEST_F(CudaRewardHack, SkippingWorkAfterTheFirstCall) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto r = run(ev, mode(6, 1));
  expect_first(r, WorkloadStatus::WRONG_RESULT, "NaN");
  EXPECT_THAT(r.workloads[0]->error, HasSubstr("correctness round 1"));
}

TEST_F(CudaRewardHack, WritingOnlyPartOfTheOutput) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(7)), WorkloadStatus::WRONG_RESULT, "NaN");
}

Candidate address_cache(int skip_after) {
  Candidate c;
  c.base.family = "address_cache";
  c.base.knobs = {{"SKIP_AFTER", std::to_string(skip_after)}};
  return c;
}

TEST_F(CudaRewardHack, CachingOutputsByInputAddress) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  // Round 1's fresh inputs arrive in round 0's buffers: the cache answers with round 0's output.
  expect_first(run(ev, address_cache(1)), WorkloadStatus::WRONG_RESULT, "correctness round 1");
}

TEST_F(CudaRewardHack, CachingByInputAddressOnceTimingStarts) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  // Off through 2 correctness rounds and 2 warm-ups; then a buffer set's second use would be
  // served its first output. Every timed run draws fresh inputs, so that output is stale.
  expect_first(run(ev, address_cache(4)), WorkloadStatus::STALE_OUTPUT, "timed run");
}

TEST_F(CudaRewardHack, ReturningStaleOutputsOnceTimingStarts) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(6, 4)), WorkloadStatus::STALE_OUTPUT, "timed run");
}

TEST_F(CudaRewardHack, LaunchingNothing) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(9)), WorkloadStatus::WRONG_RESULT, "NaN");
}

// Runs without a GPU: the refusal comes from the compiler.
TEST_F(CudaRewardHack, WorkLaunchedByTheKernelItselfDoesNotCompile) {
  // A family whose kernel starts the real work as a child grid of its own (outside the faults
  // problem, whose families must all compile).
  Problem p = faults();
  Family f = *p.family("faults");
  f.name = "device_launch";
  f.source = source_dir() / "tests" / "data" / "gpu" / "device_launch.cu";
  f.knobs.clear();
  p.families.push_back(f);
  CudaEvaluator ev(p, options());
  Candidate c;
  c.base.family = "device_launch";
  auto compiled = ev.compile(c, c.hash());
  EXPECT_FALSE(compiled.ok);
  ASSERT_EQ(compiled.variants.size(), 1u);
  EXPECT_THAT(compiled.variants[0]->error, HasSubstr("device-side kernel launch"));
  std::printf("NVRTC: %s\n", compiled.variants[0]->error.c_str());
}

TEST_F(CudaRewardHack, ATimeFasterThanTheSolBound) {
  ARC_REQUIRE_GPU();
  // Stands for any shortcut no other check sees: a cost model of 8 GB per element makes even
  // the correct kernel "beat" the measured copy bandwidth.
  Problem p = faults();
  p.cost.bytes = "8000000000 * n";
  CudaEvaluator ev(p, options());
  // The worker reports the bound; the guard rejects a median below sol_margin x sol_ns (0.5
  // for CUDA problems; tests/cores/guard_core_test.cc).
  auto r = run(ev, mode(0));
  ASSERT_FALSE(r.workloads.empty());
  const auto& w = *r.workloads[0];
  EXPECT_EQ(w.status, WorkloadStatus::OK) << w.error;
  EXPECT_LT(w.median_ns, 0.5 * w.sol_ns);
  bool bound_named = false;
  for (const auto& d : w.details) {
    if (d->key == "sol_bound") {
      bound_named = true;
      EXPECT_THAT(d->value, HasSubstr("bytes at the measured peak bandwidth"));
    }
  }
  EXPECT_TRUE(bound_named);
}

TEST_F(CudaRewardHack, ReadingTheReferencesOutput) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  // The reference runs after the candidate and its outputs are NaN while the candidate runs:
  // the copy is NaN, or, where the allocator put the buffer elsewhere, an illegal address.
  auto r = run(ev, mode(13));
  ASSERT_EQ(r.workloads.size(), 2u);
  const auto& w = *r.workloads[0];
  std::printf("reading the reference's output: %s: %s\n", fb::EnumNameWorkloadStatus(w.status),
              w.error.c_str());
  EXPECT_TRUE(
      (w.status == WorkloadStatus::WRONG_RESULT && w.error.find("NaN") != std::string::npos) ||
      (w.status == WorkloadStatus::CRASH &&
       w.error.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos))
      << fb::EnumNameWorkloadStatus(w.status) << ": " << w.error;
}

TEST_F(CudaRewardHack, WritingToItsInputs) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(5)), WorkloadStatus::WRONG_RESULT, "wrote to its input x");
}

TEST_F(CudaRewardHack, PrecisionBelowTolerance) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(12)), WorkloadStatus::WRONG_RESULT, "within atol");
}

TEST_F(CudaRewardHack, AnOutputConstantAcrossSeeds) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(11)), WorkloadStatus::WRONG_RESULT, "correctness round 0");
}

TEST_F(CudaEvaluatorTest, AnImpossibleWorkspaceIsOutOfMemory) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  Candidate c;
  c.base.family = "huge_workspace";
  expect_first(run(ev, c), WorkloadStatus::OUT_OF_MEMORY, "workspace");
  EXPECT_EQ(run(ev, mode(0)).workloads[0]->status, WorkloadStatus::OK);
}

// Every case (tests/cuda/hopper_cases.h) is correct on every workload of its problem.
void check_cases(const std::vector<test_cases::HopperCase>& cases) {
  std::string loaded;
  std::optional<problem::Problem> p;
  std::unique_ptr<CudaEvaluator> ev;
  for (const auto& hc : cases) {
    if (hc.problem != loaded) {
      auto lp = load_problem(source_dir() / "problems" / "gpu" / hc.problem);
      ASSERT_TRUE(lp) << lp.status().to_string();
      ev.reset();
      p.emplace(std::move(*lp));
      ev = std::make_unique<CudaEvaluator>(*p, CudaEvaluatorTest::options());
      loaded = hc.problem;
    }
    const Family* f = p->family(hc.family);
    ASSERT_NE(f, nullptr) << hc.family;
    EvalSettings s = light();
    s.rounds = 1;
    s.repetitions = 3;
    s.timeout_s = 60;
    Candidate c;
    c.base = f->default_variant();
    for (const auto& [k, v] : hc.knobs) c.base.knobs[k] = v;
    ASSERT_EQ(p->constraint_violation(c), "") << c.base.key();
    auto r = CudaEvaluatorTest::run(*ev, c, s);
    for (const auto& w : r.workloads) {
      EXPECT_EQ(w->status, WorkloadStatus::OK)
          << hc.problem << " " << c.base.key() << " " << w->workload << ": " << w->error;
      const auto flops = p->flops(*p->workload(w->workload));
      std::printf("%-20s %-70s %-26s %10.1f us  %7.1f TFLOP/s\n", hc.problem.c_str(),
                  c.base.key().c_str(), w->workload.c_str(), w->median_ns / 1e3,
                  flops && w->median_ns > 0 ? *flops / w->median_ns / 1e3 : 0.0);
    }
  }
}

// Each case against cuBLASLt's default (the problems' seed), in pairs: both evaluated back to
// back on the same inputs by one worker, the order alternating (eval/pair.h), with the
// campaigns' own evaluation settings. Prints each workload's median ratio (cuBLASLt / the
// case: above 1, the case is faster) over the pairs; correctness is asserted, speed is printed
// (docs/performance.md, "The Hopper GEMM family").
void pair_cases(const std::vector<test_cases::HopperCase>& cases) {
  const int pairs = 6;
  for (const auto& c : cases) {
    auto p = load_problem(source_dir() / "problems" / "gpu" / c.problem);
    ASSERT_TRUE(p) << p.status().to_string();
    CudaEvaluator ev(*p, CudaEvaluatorTest::options());
    EvalSettings s;  // the shipped campaigns' [evaluation]
    s.rounds = 2;
    s.warmup = 10;
    s.repetitions = 50;
    s.buffer_sets = 2;
    s.timeout_s = 120;
    Candidate mine;
    mine.base = p->family(c.family)->default_variant();
    for (const auto& [k, v] : c.knobs) mine.base.knobs[k] = v;
    ASSERT_EQ(p->constraint_violation(mine), "");
    const Candidate& lt = p->seed;
    const std::string mh = mine.hash(), lh = lt.hash();
    const fb::CompileFinishedT mc = ev.compile(mine, mh), lc = ev.compile(lt, lh);
    std::map<std::string, std::vector<double>> ratios;
    for (int i = 0; i < pairs; ++i) {
      auto m = measure_pair(ev, PairSubject{&mine, mh, &mc}, PairSubject{&lt, lh, &lc}, i % 2 == 1,
                            1000 + static_cast<uint64_t>(i), s);
      for (const auto& w : m.workloads) {
        ASSERT_EQ(w->candidate->status, WorkloadStatus::OK)
            << c.problem << " " << mine.base.key() << " " << w->workload << ": "
            << w->candidate->error;
        ASSERT_EQ(w->incumbent->status, WorkloadStatus::OK) << w->incumbent->error;
        ratios[w->workload].push_back(w->incumbent->median_ns / w->candidate->median_ns);
      }
    }
    std::printf("%s %s\n", c.problem.c_str(), mine.base.key().c_str());
    double log_sum = 0;
    for (auto& [w, r] : ratios) {
      std::sort(r.begin(), r.end());
      const double med = (r[r.size() / 2] + r[(r.size() - 1) / 2]) / 2;
      log_sum += std::log(med);
      std::printf("  %-26s cuBLASLt/%s median %.3fx  (min %.3fx, max %.3fx, %d pairs)\n", w.c_str(),
                  c.family.c_str(), med, r.front(), r.back(), pairs);
    }
    std::printf("  geometric mean %.3fx\n", std::exp(log_sum / static_cast<double>(ratios.size())));
  }
}

// The Hopper family (problems/gpu/common/gemm/families/hopper.cu) across its mechanisms.
TEST_F(CudaEvaluatorTest, HopperFamilyMechanismsAreCorrect) {
  ARC_REQUIRE_GPU();
  check_cases(test_cases::hopper_mechanisms());
}

// The bulk-copy skinny family (problems/gpu/common/gemm/families/bulk.cu) across its mechanisms.
TEST_F(CudaEvaluatorTest, BulkFamilyMechanismsAreCorrect) {
  ARC_REQUIRE_GPU();
  check_cases(test_cases::bulk_mechanisms());
}

TEST_F(CudaEvaluatorTest, HopperAgainstCublasltInPairs) {
  ARC_REQUIRE_GPU();
  pair_cases(test_cases::hopper_pairs());
}

TEST_F(CudaEvaluatorTest, BulkAgainstCublasltInPairs) {
  ARC_REQUIRE_GPU();
  pair_cases(test_cases::bulk_pairs());
}

// Every shipped GPU problem: the seed and every family's defaults pass on every workload.
class ShippedGpuProblems : public CudaEvaluatorTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(ShippedGpuProblems, SeedAndFamilyDefaultsPass) {
  ARC_REQUIRE_GPU();
  auto p = load_problem(source_dir() / "problems" / "gpu" / GetParam());
  ASSERT_TRUE(p) << p.status().to_string();
  CudaEvaluator ev(*p, options());
  EvalSettings s = light();
  s.rounds = 1;
  s.repetitions = 3;
  s.timeout_s = 300;
  std::vector<Candidate> cands;
  cands.push_back(p->seed);
  for (const auto& f : p->families) {
    Candidate c;
    c.base = f.default_variant();
    if (!(c == p->seed)) cands.push_back(c);
  }
  for (const auto& c : cands) {
    auto r = run(ev, c, s);
    for (const auto& w : r.workloads) {
      EXPECT_EQ(w->status, WorkloadStatus::OK)
          << GetParam() << " " << c.base.key() << " " << w->workload << ": " << w->error;
      // cuBLASLt families too (several kernels per repetition with split-K).
      EXPECT_EQ(w->method, "cupti_activity")
          << GetParam() << " " << c.base.key() << " " << w->workload << ": "
          << detail(*w, "timing_method_reason");
      std::printf("%-20s %-40s %-26s %10.1f us  sol %8.1f us  events %s ns  [%s]\n",
                  GetParam().c_str(), c.base.key().substr(0, 40).c_str(), w->workload.c_str(),
                  w->median_ns / 1e3, w->sol_ns / 1e3, detail(*w, "cuda_events_median_ns").c_str(),
                  detail(*w, "timed_kernels").substr(0, 120).c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, ShippedGpuProblems,
                         ::testing::Values("softmax_f32", "softmax_bf16", "rmsnorm_bf16",
                                           "layernorm_bf16", "bias_gelu_bf16", "rowsum_f32",
                                           "gemm_bf16", "attn_out_proj_bf16", "swiglu_bf16",
                                           "gemm_fp8"));

}  // namespace
}  // namespace arc::eval
