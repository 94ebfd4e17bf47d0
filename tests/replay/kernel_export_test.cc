// arcd export: a GPU run directory (a real RocksDB log built event by event, with a shipped
// CUDA problem's candidates) exported as CUDA and as a SOL-ExecBench solution; the exported
// CUDA is compiled and linked with the real nvcc here (no GPU needed).
#include "replay/kernel_export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "problem/problem.h"
#include "tests/replay/nvcc_build.h"
#include "tests/replay/synthetic_run.h"
#include "tests/scratch.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::kNvcc;
using testing::nvcc_build;

fs::path scratch(const std::string& name) {
  fs::path p = testing::scratch_path("export", name);
  fs::create_directories(p);
  return p;
}

using testing::slurp;

// A GPU campaign's log with `best` kept; `plans`: the cuBLASLt plan recorded per workload.
fs::path gpu_run(const std::string& problem_dir, const problem::Candidate& best,
                 const std::map<std::string, std::string>& plans) {
  testing::WorkloadDetails details;
  for (const auto& [w, plan] : plans) details[w] = {{"plan", plan}};
  return testing::synthetic_run(scratch("run-" + fs::path(problem_dir).filename().string()),
                                problem_dir, best, details);
}

TEST(KernelExport, GatedRowsumExportsOneLauncherThatNvccBuilds) {
  problem::Candidate best;
  best.base.family = "warprow";
  best.base.knobs = {{"BLOCK_ROWS", "8"}, {"VEC", "4"}, {"UNROLL", "2"}};
  problem::Variant gate;
  gate.family = "blockrow";
  gate.knobs = {{"THREADS", "512"}, {"ACC", "double"}};
  best.gates["r8192_c32000"] = gate;
  const fs::path run = gpu_run("problems/gpu/rowsum_f32", best, {});
  const fs::path out = scratch("cuda-rowsum");
  auto written = export_run(run, "cuda", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  ASSERT_EQ(written->size(), 2u);
  const std::string cu = slurp(out / "rowsum_f32.cu");
  const std::string h = slurp(out / "rowsum_f32.h");
  EXPECT_NE(h.find("cudaError_t rowsum_f32_launch("), std::string::npos);
  // Both variants, their kernels renamed apart; the gated shape dispatches to variant 1.
  EXPECT_NE(cu.find("arc_v0::arc_v0_rowsum_warprow<<<"), std::string::npos);
  EXPECT_NE(cu.find("arc_v1::arc_v1_rowsum_blockrow<<<"), std::string::npos);
  EXPECT_NE(cu.find("axes[0] == 8192LL && axes[1] == 32000LL) return 1;"), std::string::npos);
  EXPECT_NE(cu.find("#define BLOCK_ROWS 8"), std::string::npos);
  EXPECT_NE(cu.find(best.hash()), std::string::npos);
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(out, "rowsum_f32", false), "");
}

// A problem with params and shared sources (softmax_bf16: its families live in
// problems/gpu/common/softmax and include elem_io.cuh): the export defines the params and
// writes each shared source in place of its #include, so it builds with nvcc alone.
TEST(KernelExport, SharedSourcesAreInlinedAndParamsDefined) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/softmax_bf16");
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  ASSERT_FALSE(problem->headers.empty());
  ASSERT_FALSE(problem->params.empty());
  problem::Candidate best;
  best.base.family = "online";
  const fs::path run = gpu_run("problems/gpu/softmax_bf16", best, {});
  const fs::path out = scratch("cuda-softmax-shared");
  auto written = export_run(run, "cuda", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  const std::string cu = slurp(out / "softmax_bf16.cu");
  for (const auto& prm : problem->params) {
    EXPECT_NE(cu.find("#define " + prm.name + " " + prm.text + "\n"), std::string::npos)
        << prm.name;
  }
  EXPECT_NE(cu.find("// ---- shared source elem_io.cuh ----"), std::string::npos);
  EXPECT_NE(cu.find("typedef arc_bf16 elem_t;"), std::string::npos);
  std::istringstream lines(cu);
  std::string line;
  while (std::getline(lines, line)) {
    for (const auto& [name, text] : problem->headers) {
      EXPECT_FALSE(line.rfind("#include", 0) == 0 && line.find(name) != std::string::npos)
          << "an #include of the shared source " << name << " is left: " << line;
    }
  }
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(out, "softmax_bf16", false), "");
}

// On a GPU: the exported row sums, both variants (the gated shape and another), agree with
// sums taken on the host. Skips without nvcc or without a CUDA device.
TEST(KernelExport, ExportedRowsumRunsCorrectlyOnTheGpu) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc;
  problem::Candidate best;
  best.base.family = "warprow";
  best.base.knobs = {{"BLOCK_ROWS", "8"}};
  problem::Variant gate;
  gate.family = "blockrow";
  gate.knobs = {{"THREADS", "512"}, {"ACC", "double"}};
  best.gates["r8192_c32000"] = gate;
  const fs::path run = gpu_run("problems/gpu/rowsum_f32", best, {});
  const fs::path out = scratch("cuda-rowsum-run");
  ASSERT_TRUE(export_run(run, "cuda", out).ok());
  std::ofstream(out / "check.cu") << R"(#include "rowsum_f32.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
// Exit 0: correct; 1: wrong; 77: no CUDA device.
static int check(long long rows, long long cols) {
  std::vector<float> x(rows * cols), y(rows);
  for (long long i = 0; i < rows * cols; ++i) x[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
  float *dx, *dy;
  if (cudaMalloc((void**)&dx, x.size() * 4) != cudaSuccess) return 77;
  cudaMalloc((void**)&dy, y.size() * 4);
  cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  const long long axes[2] = {rows, cols};
  const void* in[1] = {dx};
  void* outp[1] = {dy};
  if (rowsum_f32_launch(in, outp, axes, nullptr, 0) != cudaSuccess) return 1;
  if (cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  for (long long r = 0; r < rows; ++r) {
    double s = 0;
    for (long long c = 0; c < cols; ++c) s += x[r * cols + c];
    if (fabs(s - y[r]) > 1e-2 + 1e-4 * fabs(s)) {
      printf("row %lld: %f vs %f (variant %d)\n", r, y[r], s, rowsum_f32_variant_for(axes));
      return 1;
    }
  }
  printf("%lld x %lld: variant %d correct\n", rows, cols, rowsum_f32_variant_for(axes));
  cudaFree(dx);
  cudaFree(dy);
  return 0;
}
int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return 77;
  int a = check(4096, 4096);
  if (a != 0) return a;
  return check(8192, 32000);
}
)";
  std::string log;
  const int rc = testing::run_export_check(out, "rowsum_f32", false, &log);
  ASSERT_NE(rc, -1) << log;
  if (rc == 77) GTEST_SKIP() << "no CUDA device here: the export compiled and linked";
  EXPECT_EQ(rc, 0) << log;
  std::printf("%s", log.c_str());
}

TEST(KernelExport, CublasltBestCarriesItsPlanTableAndLinks) {
  problem::Candidate best;
  best.base.family = "cublaslt";
  best.base.knobs = {{"HEUR", "1"}};
  problem::Variant tc;
  tc.family = "tensorcore";
  best.gates["m16_n4096_k4096"] = tc;
  // A plan as cuda/cublaslt.cc describes it, with the algorithm's bytes and the library that
  // measured it.
  const std::string bytes =
      "0000000000000042000000000000001f00000000000000000000000000000000"
      "0000000000000000000000000000000000000000000000000000000000000000";
  const std::string plan =
      "algo 66, tile 128x256, stages 64x4, splitk 1, reduction none, swizzle 0, workspace 0, "
      "waves 1.94, heuristic rank 1 of 8, custom 2, inner 5, cluster 3, bytes " +
      bytes;
  testing::WorkloadDetails details;
  details["m64_n4096_k4096"] = {{"library", "cuBLASLt 130100"}, {"plan", plan}};
  const fs::path run =
      testing::synthetic_run(scratch("run-gemm_bf16"), "problems/gpu/gemm_bf16", best, details);
  const fs::path out = scratch("cuda-gemm");
  auto written = export_run(run, "cuda", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  const std::string cu = slurp(out / "gemm_bf16.cu");
  const std::string h = slurp(out / "gemm_bf16.h");
  EXPECT_NE(cu.find("#include <cublasLt.h>"), std::string::npos);
  // The recorded algorithm: its configuration, the cuBLASLt version and its bytes.
  EXPECT_NE(cu.find("{64, 4096, 4096, 66, CUBLASLT_MATMUL_TILE_128x256, "
                    "CUBLASLT_MATMUL_STAGES_64x4, 1, CUBLASLT_REDUCTION_SCHEME_NONE, 0, 2, 5, 3, "
                    "130100ULL, {0x0000000000000042ULL, 0x000000000000001fULL, "
                    "0x0000000000000000ULL, "),
            std::string::npos)
      << cu.substr(cu.find("plans[]"), 900);
  // The variant: bf16 A, B, C and D, not fp8 (no FAST_ACCUM, no scales); the launch passes none.
  EXPECT_NE(cu.find("static const arc_lt_variant arc_v0_lt = {arc_v0_lt_plans, CUDA_R_16BF, "
                    "CUDA_R_16BF, 0, 0};"),
            std::string::npos);
  EXPECT_NE(cu.find("return arc_lt_gemm(&arc_v0_lt, llround(m), llround(n), llround(k), "
                    "inputs[0], inputs[1], nullptr, outputs[0], nullptr, nullptr, workspace, "
                    "stream);"),
            std::string::npos);
  // The device that measured it: a device of another compute capability falls back.
  EXPECT_NE(cu.find("constexpr int kRecordedSm = 90;"), std::string::npos);
  // A workload without a recorded plan falls back to the heuristic's rank HEUR.
  EXPECT_NE(cu.find("{128, 8192, 8192, -1, 0, 0, 1, 0, 0, -1, -1, -1, 0ULL, "
                    "{0x0000000000000000ULL, "),
            std::string::npos);
  EXPECT_NE(cu.find("}, 1, \"m128_n8192_k8192: not recorded\"},"), std::string::npos);
  EXPECT_NE(cu.find("axes[0] == 16LL && axes[1] == 4096LL && axes[2] == 4096LL) return 1;"),
            std::string::npos);
  // The setup is cached per shape and device: the heuristic is called only in make_shape, which
  // only shape_for calls when its cache misses; the hot path is one cublasLtMatmul.
  EXPECT_NE(cu.find("std::map<Key, std::unique_ptr<Shape>> shapes;"), std::string::npos);
  EXPECT_EQ(cu.find("cublasLtMatmulAlgoGetHeuristic", cu.find("static cudaError_t arc_lt_gemm(")),
            std::string::npos);
  for (const char* fn : {"const char* gemm_bf16_plan(const long long* axes);",
                         "const char* gemm_bf16_last_error(void);"}) {
    EXPECT_NE(h.find(fn), std::string::npos) << fn;
  }

  auto sol = export_run(run, "sol-execbench", out / "sol");
  ASSERT_TRUE(sol.ok()) << sol.status().to_string();
  json j = json::parse(slurp(out / "sol" / "solution.json"));
  EXPECT_EQ(j["definition"], "gemm_bf16");
  EXPECT_EQ(j["spec"]["languages"], json::array({"cuda_cpp"}));
  EXPECT_EQ(j["spec"]["entry_point"], "kernel.cu::run");
  EXPECT_EQ(j["spec"]["destination_passing_style"], true);
  EXPECT_NE(j["spec"]["compile_options"]["ld_flags"].dump().find("-lcublasLt"), std::string::npos);
  std::map<std::string, std::string> sources;
  for (const auto& s : j["sources"]) sources[s["path"]] = s["content"];
  ASSERT_EQ(sources.count("kernel.cu"), 1u);
  ASSERT_EQ(sources.count("gemm_bf16.h"), 1u);
  ASSERT_EQ(sources.count("gemm_bf16_impl.cuh"), 1u);
  // Destination-passing style: the inputs, then the outputs, in the problem's order; the axes
  // read from the tensors' shapes.
  EXPECT_NE(
      sources["kernel.cu"].find("void run(torch::Tensor x, torch::Tensor w, torch::Tensor y)"),
      std::string::npos)
      << sources["kernel.cu"];
  EXPECT_NE(sources["kernel.cu"].find("{x.size(0), w.size(0), x.size(1)}"), std::string::npos);
  EXPECT_EQ(sources["gemm_bf16_impl.cuh"], cu);

  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(out, "gemm_bf16", true), "");
}

// A Hopper-family best (tensor maps, clusters, the device's sm_count in its grid): the launcher
// encodes each declared map over the caller's buffers, passes them as the kernel's second
// parameter and sizes the persistent grid from the device; nvcc builds it.
TEST(KernelExport, HopperBestEncodesItsTensorMapsAndNvccBuilds) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_bf16");
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  problem::Candidate best;
  best.base = problem->family("hopper")->default_variant();
  best.base.knobs["CLUSTER_M"] = "2";
  best.base.knobs["MULTICAST"] = "1";
  best.base.knobs["PINGPONG"] = "1";  // ping-pong consumers storing with TMA (map 4: y)
  best.base.knobs["BLOCK_N"] = "128";
  best.base.knobs["EPILOGUE"] = "1";
  ASSERT_EQ(problem->constraint_violation(best), "");
  const fs::path run = gpu_run("problems/gpu/gemm_bf16", best, {});
  const fs::path out = scratch("cuda-hopper");
  auto written = export_run(run, "cuda", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  const std::string cu = slurp(out / "gemm_bf16.cu");
  for (int m = 0; m < 4; ++m) {
    EXPECT_NE(cu.find("err = arc_encode_tensor_map(&maps.map[" + std::to_string(m) +
                      "], "
                      "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, a.in["),
              std::string::npos)
        << m;
  }
  // The output's map is encoded over the caller's output buffer.
  EXPECT_NE(cu.find("err = arc_encode_tensor_map(&maps.map[4], "
                    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, a.out[0]"),
            std::string::npos);
  EXPECT_NE(cu.find("#define EPILOGUE 1"), std::string::npos);
  EXPECT_NE(cu.find("arc_v0::arc_v0_gemm_hopper<<<"), std::string::npos);
  EXPECT_NE(cu.find(", shared, stream>>>(a, maps);"), std::string::npos);
  EXPECT_NE(cu.find("const double sm_count = arc_sm_count();"), std::string::npos);
  EXPECT_NE(cu.find("#define CLUSTER_M 2"), std::string::npos);
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(out, "gemm_bf16", false), "");
}

// A bulk-family best (no tensor maps, a cluster per tile from __cluster_dims__, a shared size
// from max()): the launcher sizes the grid and the shared memory from the axes and nvcc builds it.
TEST(KernelExport, BulkBestSizesItsLaunchAndNvccBuilds) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/gemm_bf16");
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  problem::Candidate best;
  best.base = problem->family("bulk")->default_variant();
  best.base.knobs["SPLIT_K"] = "2";
  best.base.knobs["BLOCK_N"] = "32";
  ASSERT_EQ(problem->constraint_violation(best), "");
  const fs::path run = gpu_run("problems/gpu/gemm_bf16", best, {});
  const fs::path out = scratch("cuda-bulk");
  auto written = export_run(run, "cuda", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  const std::string cu = slurp(out / "gemm_bf16.cu");
  EXPECT_EQ(cu.find("err = arc_encode_tensor_map("), std::string::npos);
  EXPECT_NE(cu.find("#define SPLIT_K 2"), std::string::npos);
  EXPECT_NE(cu.find("arc_v0::arc_v0_bulk_gemm<<<"), std::string::npos) << cu;
  EXPECT_NE(cu.find("arc_max("), std::string::npos);
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no nvcc at " << kNvcc << ": not compiled";
  EXPECT_EQ(nvcc_build(out, "gemm_bf16", false), "");
}

TEST(KernelExport, HostRunIsRefusedWithTheReason) {
  // A host problem's run: nothing CUDA to export.
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/softmax");
  ASSERT_TRUE(problem.ok());
  KernelExportInput in;
  in.problem = &problem.value();
  in.candidate = problem->seed;
  auto r = export_cuda(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected a CUDA problem"), std::string::npos);
  auto bad = export_run(scratch("no-run"), "cuda", scratch("no-out"));
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace arc::replay
