// `arcd check` and the no-device exit of `arcd run`, through the real arcd binary: the real
// system compiler, NVRTC (which needs no GPU), the real worker. Broken problems are copies of
// shipped ones in a scratch folder with one source edited.
#include "actors/check.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "eval/cuda_evaluator.h"
#include "problem/problem.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) { return testing::scratch_path("check", name); }

int run_cli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(ARC_BINARY_DIR) + "/tools/" + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return WEXITSTATUS(::pclose(p));
}

// A copy of a shipped problem with `text` appended to one of its family sources. The suite's
// shared sources (problems/<suite>/common/, which problem.toml names by relative paths such as
// "../common/include") are copied beside it when the suite has them.
fs::path broken_copy(const std::string& shipped, const std::string& name,
                     const std::string& family_file, const std::string& text) {
  const fs::path from = fs::path(ARC_SOURCE_DIR) / "problems" / shipped;
  const fs::path root = scratch(name);
  const fs::path dir = root / from.filename();
  fs::create_directories(root);
  fs::copy(from, dir, fs::copy_options::recursive);
  if (fs::is_directory(from.parent_path() / "common")) {
    fs::copy(from.parent_path() / "common", root / "common", fs::copy_options::recursive);
  }
  std::ofstream(dir / "families" / family_file, std::ios::app) << "\n" << text << "\n";
  return dir;
}

bool gpu_present() { return eval::CudaEvaluator::device_available(); }

TEST(CliCheck, HostProblemCompilesEveryExtremeAndItsSeedPasses) {
  std::string out;
  const int rc =
      run_cli("arcd check " + (fs::path(ARC_SOURCE_DIR) / "problems/host/softmax").string(), &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("reference reference.cpp: compiled"), std::string::npos) << out;
  EXPECT_NE(out.find("family fused"), std::string::npos) << out;
  EXPECT_NE(out.find("the seed passes its own check"), std::string::npos) << out;
  EXPECT_EQ(out.find("compile error"), std::string::npos) << out;
}

TEST(CliCheck, HostFamilyFailingAtAKnobExtremeIsNamedWithKnobsAndFirstError) {
  // online's VEC runs 1, 4, 8, 16 (default 1); UNROLL 1, 2, 4 (default 1).
  const fs::path dir = broken_copy("host/softmax", "host-broken", "online.cpp",
                                   "#if VEC == 16\nstatic int lanes = sixteen_lanes;\n#endif");
  std::string out;
  const int rc = run_cli("arcd check " + dir.string(), &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("compile error: family online with VEC=16 UNROLL=1: "), std::string::npos)
      << out;
  // The compiler's own first error line, not the wrapper's header.
  const auto line = out.find("compile error: family online with VEC=16 UNROLL=1: ");
  ASSERT_NE(line, std::string::npos) << out;
  const std::string first = out.substr(line, out.find('\n', line) - line);
  EXPECT_NE(first.find("online.cpp:"), std::string::npos) << first;
  EXPECT_NE(first.find("error: "), std::string::npos) << first;
  EXPECT_NE(first.find("sixteen_lanes"), std::string::npos) << first;
  EXPECT_EQ(out.find("g++ exited"), std::string::npos) << out;
  // The defaults and the other extremes compiled; the other families are untouched.
  EXPECT_EQ(out.find("family online with VEC=1 "), std::string::npos) << out;
  EXPECT_EQ(out.find("family fused with"), std::string::npos) << out;
}

TEST(CliCheck, CudaProblemWithoutGpuCompilesEverythingAndSaysNothingRan) {
  if (gpu_present()) GTEST_SKIP() << "a CUDA device is present: the seed runs there instead";
  std::string out;
  const int rc = run_cli(
      "arcd check " + (fs::path(ARC_SOURCE_DIR) / "problems/gpu/rowsum_f32").string(), &out);
  EXPECT_EQ(rc, 5) << out;
  EXPECT_NE(out.find("compiled with NVRTC"), std::string::npos) << out;
  EXPECT_NE(out.find("reference reference.cu: compiled"), std::string::npos) << out;
  EXPECT_NE(out.find(" variants compiled, the reference compiled; nothing ran because there is "
                     "no usable CUDA device ("),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("compile error"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAILS"), std::string::npos) << out;
  EXPECT_EQ(out.find("CRASH"), std::string::npos) << out;
}

// gemm_bf16's tensor-core and split-K families static_assert the tile combinations they do
// not support; some knob extremes are such combinations: reported, not failures.
TEST(CliCheck, CudaLibraryFamilyIsLeftToRunTimeAndStaticAssertsAreRejectionsNotFailures) {
  if (gpu_present()) GTEST_SKIP() << "a CUDA device is present: the seed runs there instead";
  std::string out;
  const int rc =
      run_cli("arcd check " + (fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_bf16").string(), &out);
  EXPECT_EQ(rc, 5) << out;
  EXPECT_NE(out.find("family cublaslt: cublaslt (library, no source): checked at run time"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("rejected by its source: family tensorcore with "), std::string::npos) << out;
  EXPECT_EQ(out.find("compile error"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAILS"), std::string::npos) << out;
}

// gemm_fp8: check compiles the reference (fp8 operands, the scales as scalar inputs) and the
// Hopper and bulk families in fp8 at every knob extreme their constraints allow, and leaves
// cuBLASLt to run time; with a GPU the cuBLASLt seed runs with its drawn scales and passes.
TEST(CliCheck, Fp8GemmCompilesItsReferenceAndLeavesCublasltToRunTime) {
  const fs::path dir = fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_fp8";
  auto problem = problem::load_problem(dir);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  size_t all = 0;
  for (const char* name : {"hopper", "bulk"}) {
    const problem::Family* f = problem->family(name);
    ASSERT_NE(f, nullptr) << name;
    all += actors::extreme_variants(*f, problem->integer_params()).size();
  }
  const std::string n = std::to_string(all);
  const std::string nh = std::to_string(
      actors::extreme_variants(*problem->family("hopper"), problem->integer_params()).size());
  std::string out;
  const int rc = run_cli("arcd check " + dir.string(), &out);
  EXPECT_NE(out.find("compiled with NVRTC (NVRTC "), std::string::npos) << out;
  EXPECT_NE(out.find("family hopper           " + nh + "/" + nh + " variants compiled"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("reference ../common/gemm/reference.cu: compiled"), std::string::npos) << out;
  EXPECT_NE(out.find("family cublaslt: cublaslt (library, no source): checked at run time"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("compile error"), std::string::npos) << out;
  if (gpu_present()) {
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("the seed passes its own check"), std::string::npos) << out;
  } else {
    EXPECT_EQ(rc, 5) << out;
    EXPECT_NE(out.find(n + " of " + n +
                       " variants compiled, the reference compiled; nothing ran "
                       "because there is no usable CUDA device ("),
              std::string::npos)
        << out;
  }
}

TEST(CliCheck, CudaSyntaxErrorIsReportedWithOrWithoutGpu) {
  const fs::path dir =
      broken_copy("gpu/rowsum_f32", "cuda-broken", "naive.cu", "this is not CUDA at all");
  std::string out;
  const int rc = run_cli("arcd check " + dir.string(), &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("compile error: family naive with (no knobs): "), std::string::npos) << out;
  EXPECT_NE(out.find("naive.cu("), std::string::npos) << "no NVRTC error line: " << out;
  EXPECT_EQ(out.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << out;
  EXPECT_EQ(out.find("family blockrow with"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAILS"), std::string::npos) << out;
}

TEST(CliCheck, CudaRunWithoutGpuExitsFiveAndWritesNoRunDirectory) {
  if (gpu_present()) GTEST_SKIP() << "a CUDA device is present: the campaign would run";
  const fs::path run_dir = scratch("cuda-run");
  std::string out;
  const int rc = run_cli(
      "arcd run " + (fs::path(ARC_SOURCE_DIR) / "problems/gpu/rowsum_f32/campaign.toml").string() +
          " --run-dir " + run_dir.string() + " --budget 2",
      &out);
  EXPECT_EQ(rc, 5) << out;
  EXPECT_NE(out.find("campaign gpu-rowsum-f32: cannot run on the CUDA evaluator: "),
            std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists(run_dir)) << out;
}

}  // namespace
}  // namespace arc
