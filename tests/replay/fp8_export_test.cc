// arcd export of problems/gpu/gemm_fp8's cuBLASLt family: the launcher builds the plan the
// worker runs (cuda/cublaslt.cc): e4m3 A and B, a bf16 D, FAST_ACCUM from the variant's knob,
// and at every call the per-tensor scales of inputs scale_x and scale_w as cuBLASLt's scale
// pointers (its A is our w, so its A scale is scale_w). nvcc builds and links it here (no GPU
// needed); on a GPU its product is checked against the host's. An operand dtype the runtime has
// no cuBLASLt type for is still refused.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "problem/problem.h"
#include "replay/kernel_export.h"
#include "tests/replay/nvcc_build.h"
#include "tests/replay/synthetic_run.h"
#include "tests/scratch.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;
using testing::kNvcc;
using testing::nvcc_build;
using testing::slurp;

struct Fp8Export {
  fs::path dir;  // gemm_fp8.h and gemm_fp8.cu
  std::string cu;
};

// A gemm_fp8 run whose best is the cuBLASLt family with these knobs and details, exported as
// CUDA into a fresh folder under `name`; `cu` is "" when the export failed (a test failure).
Fp8Export export_fp8(const std::map<std::string, std::string>& knobs,
                     const testing::WorkloadDetails& details, const std::string& name) {
  problem::Candidate best;
  best.base.family = "cublaslt";
  best.base.knobs = knobs;
  const fs::path root = testing::scratch_path("export-fp8", name);
  const fs::path run = testing::synthetic_run(root / "run", "problems/gpu/gemm_fp8", best, details);
  Fp8Export e{root / "cuda", ""};
  auto written = export_run(run, "cuda", e.dir);
  EXPECT_TRUE(written.ok()) << written.status().to_string();
  if (written.ok()) e.cu = slurp(e.dir / "gemm_fp8.cu");
  return e;
}

TEST(KernelExport, Fp8CublasltBestSetsItsScalesAndFastAccumulationAndNvccBuilds) {
  // A plan as cuda/cublaslt.cc describes an fp8 one.
  const std::string plan =
      "algo 66, tile 128x128, stages 128x3, splitk 1, reduction none, swizzle 0, workspace 0, "
      "waves 1.00, heuristic rank 1 of 8, custom 0, inner 0, cluster 0, bytes "
      "0000000000000042000000000000001f00000000000000000000000000000000"
      "0000000000000000000000000000000000000000000000000000000000000000, "
      "types fp8_e4m3 x fp8_e4m3 -> bf16, fast_accum 1";
  testing::WorkloadDetails details;
  details["m4096_n4096_k4096"] = {{"library", "cuBLASLt 130100"}, {"plan", plan}};
  const Fp8Export e = export_fp8({{"HEUR", "1"}, {"FAST_ACCUM", "1"}}, details, "fast");
  const std::string& cu = e.cu;
  ASSERT_FALSE(cu.empty());
  // The variant: e4m3 A and B, bf16 C and D, fp8, FAST_ACCUM 1.
  EXPECT_NE(cu.find("static const arc_lt_variant arc_v0_lt = {arc_v0_lt_plans, CUDA_R_8F_E4M3, "
                    "CUDA_R_16BF, 1, 1};"),
            std::string::npos)
      << cu.substr(cu.find("arc_v0_lt_plans[]"), 1500);
  EXPECT_NE(cu.find("// fp8_e4m3 x fp8_e4m3 -> bf16, FAST_ACCUM 1\n"), std::string::npos);
  // The recorded algorithm's row, the fallback rank HEUR.
  EXPECT_NE(cu.find("{4096, 4096, 4096, 66, CUBLASLT_MATMUL_TILE_128x128, "
                    "CUBLASLT_MATMUL_STAGES_128x3, 1, CUBLASLT_REDUCTION_SCHEME_NONE, 0, 0, 0, 0, "
                    "130100ULL, {0x0000000000000042ULL, 0x000000000000001fULL, "),
            std::string::npos);
  EXPECT_NE(cu.find("}, 1, \"m4096_n4096_k4096: " + plan + " (cuBLASLt 130100)\"},"),
            std::string::npos);
  // The descriptor as the worker sets it: FAST_ACCUM, and per call the scale pointers, cuBLASLt's
  // A (our w) scaled by b_scale and its B (our x) by a_scale.
  EXPECT_NE(cu.find("cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,"),
            std::string::npos);
  EXPECT_NE(cu.find("const void* lt_a_scale = b_scale;"), std::string::npos);
  EXPECT_NE(cu.find("const void* lt_b_scale = a_scale;"), std::string::npos);
  EXPECT_NE(cu.find("CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,\n"
                    "                                            &lt_a_scale, sizeof lt_a_scale"),
            std::string::npos);
  EXPECT_NE(cu.find("CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,\n"
                    "                                            &lt_b_scale, sizeof lt_b_scale"),
            std::string::npos);
  // Algorithms rebuilt from their configuration get the fp8 types.
  EXPECT_NE(cu.find("v.ab_type, v.ab_type, v.cd_type, v.cd_type,"), std::string::npos);
  // The launch: x, w, no C, y, and the scales from inputs 2 (scale_x) and 3 (scale_w).
  EXPECT_NE(cu.find("return arc_lt_gemm(&arc_v0_lt, llround(m), llround(n), llround(k), "
                    "inputs[0], inputs[1], nullptr, outputs[0], "
                    "static_cast<const float*>(inputs[2]), static_cast<const float*>(inputs[3]), "
                    "workspace, stream);"),
            std::string::npos);
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(e.dir, "gemm_fp8", true), "");
}

// FAST_ACCUM = 0 is set too (the worker sets the attribute on every fp8 plan); the SOL-ExecBench
// binding passes the scales as the problem's inputs.
TEST(KernelExport, Fp8CublasltWithoutFastAccumulationAndItsSolExecBenchBinding) {
  const std::string cu = export_fp8({{"HEUR", "0"}, {"FAST_ACCUM", "0"}}, {}, "precise").cu;
  ASSERT_FALSE(cu.empty());
  EXPECT_NE(cu.find("static const arc_lt_variant arc_v0_lt = {arc_v0_lt_plans, CUDA_R_8F_E4M3, "
                    "CUDA_R_16BF, 1, 0};"),
            std::string::npos);
  EXPECT_NE(cu.find("}, 0, \"m16_n4096_k4096: not recorded\"},"), std::string::npos);

  problem::Candidate best;
  best.base.family = "cublaslt";
  const fs::path root = testing::scratch_path("export-fp8", "sol");
  const fs::path run = testing::synthetic_run(root / "run", "problems/gpu/gemm_fp8", best, {});
  auto sol = export_run(run, "sol-execbench", root / "sol");
  ASSERT_TRUE(sol.ok()) << sol.status().to_string();
  const nlohmann::json j = nlohmann::json::parse(slurp(root / "sol" / "solution.json"));
  EXPECT_NE(j["spec"]["compile_options"]["ld_flags"].dump().find("-lcublasLt"), std::string::npos);
  std::string kernel;
  for (const auto& s : j["sources"]) {
    if (s["path"] == "kernel.cu") kernel = s["content"];
  }
  EXPECT_NE(kernel.find("void run(torch::Tensor x, torch::Tensor w, torch::Tensor scale_x, "
                        "torch::Tensor scale_w, torch::Tensor y)"),
            std::string::npos)
      << kernel;
}

// Still refused: an operand dtype the runtime has no cuBLASLt type for (the loader admits none
// today; a problem built in memory stands for one), naming the family and the product.
TEST(KernelExport, CublasltProductWithoutACublasltTypeIsRefusedWithTheReason) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_fp8");
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  problem->inputs[0].dtype = "fp8_e5m2";
  problem->inputs[1].dtype = "fp8_e5m2";
  KernelExportInput in;
  in.problem = &problem.value();
  in.candidate.base.family = "cublaslt";
  auto files = export_cuda(in);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find(
                "family cublaslt: the export's cuBLASLt runtime runs bf16, f16 and f32 products "
                "and fp8_e4m3 operands with a bf16, f16 or f32 output, not fp8_e5m2 x fp8_e5m2 "
                "-> bf16"),
            std::string::npos)
      << files.status().to_string();
}

// On a GPU: the exported fp8 GEMM (the heuristic's plan: no algorithm recorded) against a
// product of the same e4m3 bytes taken on the host in double, with scales of 0.5 and 0.125.
// Skips without nvcc or without a CUDA device.
TEST(KernelExport, ExportedFp8GemmRunsCorrectlyOnTheGpu) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc;
  const Fp8Export e = export_fp8({{"HEUR", "0"}, {"FAST_ACCUM", "0"}}, {}, "run");
  ASSERT_FALSE(e.cu.empty());
  const fs::path& out = e.dir;
  std::ofstream(out / "check.cu") << R"(#include "gemm_fp8.h"
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>
#include <vector>
// An e4m3 code's value (bias 7; the NaN codes 0x7f and 0xff are never drawn here).
static double e4m3(unsigned char c) {
  const int sign = c >> 7, exp = (c >> 3) & 15, man = c & 7;
  const double v = exp == 0 ? ldexp(man / 8.0, -6) : ldexp(1.0 + man / 8.0, exp - 7);
  return sign ? -v : v;
}
// Exit 0: correct; 1: wrong; 77: no CUDA device.
int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 77;
  const long long m = 64, n = 256, k = 512;
  std::vector<unsigned char> x(m * k), w(n * k);
  // Codes with bit 6 clear: magnitudes below 2, from the subnormals up, and no NaN; the
  // unscaled sums are of order 16, far from fp32's rounding at any k-order.
  auto code = [](unsigned long long i, unsigned long long seed) {
    return (unsigned char)(((i + seed) * 2654435761ULL >> 13) & 0xbf);
  };
  for (long long i = 0; i < m * k; ++i) x[i] = code(i, 1);
  for (long long i = 0; i < n * k; ++i) w[i] = code(i, 977);
  const float scales[2] = {0.5f, 0.125f};
  unsigned char *dx, *dw;
  float* ds;
  __nv_bfloat16* dy;
  if (cudaMalloc((void**)&dx, x.size()) != cudaSuccess) return 77;
  cudaMalloc((void**)&dw, w.size());
  cudaMalloc((void**)&ds, sizeof scales);
  cudaMalloc((void**)&dy, m * n * sizeof(__nv_bfloat16));
  cudaMemcpy(dx, x.data(), x.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w.data(), w.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(ds, scales, sizeof scales, cudaMemcpyHostToDevice);
  const long long axes[3] = {m, n, k};
  const void* in[4] = {dx, dw, ds, ds + 1};
  void* outp[1] = {dy};
  if (gemm_fp8_launch(in, outp, axes, nullptr, 0) != cudaSuccess) {
    printf("launch: %s\n", gemm_fp8_last_error());
    return 1;
  }
  std::vector<__nv_bfloat16> y(m * n);
  if (cudaMemcpy(y.data(), dy, y.size() * sizeof y[0], cudaMemcpyDeviceToHost) != cudaSuccess) {
    printf("copy: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  printf("plan: %s\n", gemm_fp8_plan(axes));
  for (long long r = 0; r < m; ++r) {
    for (long long c = 0; c < n; ++c) {
      double s = 0;
      for (long long i = 0; i < k; ++i) s += e4m3(x[r * k + i]) * e4m3(w[c * k + i]);
      s *= 0.5 * 0.125;
      const double got = __bfloat162float(y[r * n + c]);
      if (fabs(got - s) > 1e-2 + 1.6e-2 * fabs(s)) {
        printf("y[%lld, %lld] = %f, expected %f\n", r, c, got, s);
        return 1;
      }
    }
  }
  printf("%lld x %lld x %lld: correct\n", m, n, k);
  return 0;
}
)";
  std::string log;
  const int rc = testing::run_export_check(out, "gemm_fp8", true, &log);
  ASSERT_NE(rc, -1) << log;
  if (rc == 77) GTEST_SKIP() << "no CUDA device here: the export compiled and linked";
  EXPECT_EQ(rc, 0) << log;
  std::printf("%s", log.c_str());
}

}  // namespace
}  // namespace arc::replay
