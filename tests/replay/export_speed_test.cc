// The exported cuBLASLt launcher against cuBLASLt's default, on a GPU: for gemm_bf16 and
// attn_out_proj_bf16, a run whose best is the cuBLASLt family with the plan cuda/cublaslt.h
// records for every shipped workload on this device (the heuristic's first algorithm, as the
// campaign's evaluator would record it), exported with arcd export --format cuda, built with
// nvcc beside tests/data/gpu/export_gemm_bench.cu and run: correctness against cuBLASLt's
// default is asserted (and that every shape runs the recorded algorithm); the timing table
// (medians of interleaved, L2-flushed repetitions, default / export) is printed for
// docs/performance.md, never asserted. ARC_EXPORT_BENCH_REPS sets the repetitions (default 50),
// ARC_NVCC the nvcc (default /usr/local/cuda/bin/nvcc).
// Without nvcc it skips; without a GPU it builds the exports and the bench, then skips.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "cuda/cublaslt.h"
#include "cuda/driver.h"
#include "problem/problem.h"
#include "replay/kernel_export.h"
#include "tests/replay/synthetic_run.h"
#include "tests/scratch.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

// ARC_NVCC names another nvcc.
fs::path nvcc() {
  const char* env = std::getenv("ARC_NVCC");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/usr/local/cuda/bin/nvcc");
}

using testing::slurp;

// The plans the CUDA evaluator records for a cuBLASLt family's default knobs, on device 0.
struct Recorder {
  std::unique_ptr<cuda::Context> context;
  std::unique_ptr<cuda::Lt> lt;
  std::string device;   // as a run's CampaignStarted names it
  std::string why_not;  // why there is no recorder ("" when there is)
};

Recorder open_recorder() {
  Recorder r;
  auto ctx = cuda::Context::open(0);
  if (!ctx) {
    r.why_not = ctx.status().to_string();
    return r;
  }
  r.context = std::move(ctx.value());
  auto lt = cuda::Lt::open();
  if (!lt) {
    r.why_not = lt.status().to_string();
    return r;
  }
  r.lt = std::move(lt.value());
  r.device = "cuda: " + r.context->info().describe();
  return r;
}

TEST(ExportSpeed, CublasltExportsMatchAndAreTimedAgainstCublasltDefault) {
  const fs::path kNvcc = nvcc();
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << " (ARC_NVCC): nothing built";
  const char* reps_env = std::getenv("ARC_EXPORT_BENCH_REPS");
  const std::string reps = reps_env != nullptr ? reps_env : "50";
  Recorder rec = open_recorder();
  std::string tables;
  bool ran = false;
  for (const std::string dir : {"problems/gpu/gemm_bf16", "problems/gpu/attn_out_proj_bf16"}) {
    auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / dir);
    ASSERT_TRUE(problem.ok()) << problem.status().to_string();
    const problem::Family* lt_family = problem->family("cublaslt");
    ASSERT_NE(lt_family, nullptr) << dir;
    // The bench's layout: axes (m, n, k), inputs A, B (, C), output D aliasing C.
    const problem::GemmSpec& g = lt_family->gemm;
    ASSERT_EQ(problem->axes, (std::vector<std::string>{g.m, g.n, g.k})) << dir;
    ASSERT_EQ(problem->inputs[0].name, g.a);
    ASSERT_EQ(problem->inputs[1].name, g.b);
    ASSERT_EQ(problem->inputs.size(), g.c.empty() ? 2u : 3u);
    if (!g.c.empty()) {
      ASSERT_EQ(problem->outputs[0].alias, g.c);
    }

    problem::Candidate best;
    best.base = lt_family->default_variant();
    testing::WorkloadDetails details;
    for (const auto& w : problem->workloads) {
      if (!rec.lt) break;
      cuda::GemmProblem gp{w.axes.at(g.m), w.axes.at(g.n), w.axes.at(g.k), "bf16", !g.c.empty(), ""};
      auto plan = rec.lt->plan(gp, cuda::LtConfig{}, size_t{64} << 20);
      ASSERT_TRUE(plan.ok()) << w.name << ": " << plan.status().to_string();
      details[w.name] = {{"library", rec.lt->version()}, {"plan", (*plan)->description()}};
    }
    const std::string name = export_name(problem.value());
    const fs::path run =
        testing::synthetic_run(testing::scratch_path("export-speed", "run-" + name), dir, best,
                               details, rec.lt ? rec.device : "cuda: (no device)");
    const fs::path out = testing::scratch_path("export-speed", "cuda-" + name);
    auto written = export_run(run, "cuda", out);
    ASSERT_TRUE(written.ok()) << written.status().to_string();

    const fs::path bench = out / "bench";
    const std::string build = kNvcc.string() + " -std=c++17 -O2 -arch=sm_90a -I" + out.string() +
                              " -DARC_EXPORT=" + name + " '-DARC_EXPORT_HEADER=\"" + name +
                              ".h\"' " + ARC_SOURCE_DIR "/tests/data/gpu/export_gemm_bench.cu " +
                              (out / (name + ".cu")).string() + " -lcublasLt -o " + bench.string() +
                              " > " + (out / "nvcc.log").string() + " 2>&1";
    ASSERT_EQ(std::system(build.c_str()), 0) << build << "\n" << slurp(out / "nvcc.log");
    if (!rec.lt) continue;  // built; nothing to run it on

    std::string cmd = bench.string() + " " + problem->name + " " +
                      std::to_string(problem->tolerance.atol) + " " +
                      std::to_string(problem->tolerance.rtol) + " " + reps;
    for (const auto& w : problem->workloads) {
      cmd += " " + w.name + " " + std::to_string(w.axes.at(g.m)) + " " +
             std::to_string(w.axes.at(g.n)) + " " + std::to_string(w.axes.at(g.k));
    }
    const int rc = std::system((cmd + " > " + (out / "bench.log").string() + " 2>&1").c_str());
    const std::string log = slurp(out / "bench.log");
    ASSERT_TRUE(WIFEXITED(rc)) << cmd << "\n" << log;
    if (WEXITSTATUS(rc) == 77) GTEST_SKIP() << "the bench found no CUDA device:\n" << log;
    EXPECT_EQ(WEXITSTATUS(rc), 0) << cmd << "\n" << log;
    // Every shape runs the algorithm the run recorded (its bytes with this cuBLASLt, else
    // rebuilt from its configuration): nothing fell back to the heuristic.
    for (const auto& w : problem->workloads) {
      EXPECT_NE(log.find("plan " + w.name + ": recorded algorithm ("), std::string::npos)
          << w.name << "\n"
          << log;
    }
    tables += log + "\n";
    ran = true;
  }
  if (!ran) {
    GTEST_SKIP() << "no GPU (" << rec.why_not << "): the exports and the bench were built, "
                 << "not run";
  }
  std::printf("%s", tables.c_str());
}

}  // namespace
}  // namespace arc::replay
