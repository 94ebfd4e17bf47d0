// The CUDA evaluator end to end on a real GPU: correct kernels pass with sane statistics; an
// illegal address, a trap, a hang and an impossible workspace are REJECTed with the reason and
// cost only the worker; wrong, partial, NaN, stale and input-writing kernels are caught; the
// shipped problems' seeds (cuBLASLt included) pass. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include "tests/cuda/paths.h"
#include <gmock/gmock.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/cuda_evaluator.h"
#include "eval/problem.h"

namespace arc::eval {
namespace {

using arc::test_paths::source_dir;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using fb::WorkloadStatus;

#define ARC_REQUIRE_GPU()                                                   \
  do {                                                                      \
    std::string why;                                                        \
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
 protected:
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
    o.worker_path = ev != nullptr && *ev != '\0' ? fs::path(ev) : fs::path(ARC_BINARY_DIR) / "tools" / "arc-eval";
    o.include_root = source_dir();
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

TEST_F(CudaEvaluatorTest, CorrectKernelPassesWithEventTimingClocksAndPeaks) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  auto r = run(ev, mode(0));
  ASSERT_EQ(r.workloads.size(), 2u);
  for (const auto& w : r.workloads) {
    ASSERT_EQ(w->status, WorkloadStatus::OK) << w->workload << ": " << w->error;
    EXPECT_EQ(w->samples_ns.size(), 5u);
    EXPECT_EQ(w->method, "cuda_events");
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

TEST_F(CudaEvaluatorTest, CheatsAndMistakesAreCaught) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  expect_first(run(ev, mode(4)), WorkloadStatus::WRONG_RESULT, "within atol");
  expect_first(run(ev, mode(5)), WorkloadStatus::WRONG_RESULT, "wrote to its input x");
  expect_first(run(ev, mode(6, 1)), WorkloadStatus::WRONG_RESULT, "NaN");
  expect_first(run(ev, mode(6, 4)), WorkloadStatus::STALE_OUTPUT, "timed run");
  expect_first(run(ev, mode(7)), WorkloadStatus::WRONG_RESULT, "NaN");
  expect_first(run(ev, mode(8)), WorkloadStatus::WRONG_RESULT, "NaN");
}

TEST_F(CudaEvaluatorTest, AnImpossibleWorkspaceIsOutOfMemory) {
  ARC_REQUIRE_GPU();
  CudaEvaluator ev(faults(), options());
  Candidate c;
  c.base.family = "huge_workspace";
  expect_first(run(ev, c), WorkloadStatus::OUT_OF_MEMORY, "workspace");
  EXPECT_EQ(run(ev, mode(0)).workloads[0]->status, WorkloadStatus::OK);
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
      std::printf("%-20s %-40s %-26s %10.1f us  sol %8.1f us\n", GetParam().c_str(),
                  c.base.key().substr(0, 40).c_str(), w->workload.c_str(), w->median_ns / 1e3,
                  w->sol_ns / 1e3);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, ShippedGpuProblems,
                         ::testing::Values("softmax_f32", "softmax_bf16", "rmsnorm_bf16",
                                           "layernorm_bf16", "bias_gelu_bf16", "rowsum_f32",
                                           "gemm_bf16", "attn_out_proj_bf16"));

}  // namespace
}  // namespace arc::eval
