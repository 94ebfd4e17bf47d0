// arcd export of problems/gpu/gemm_fp8: the export's cuBLASLt runtime runs bf16, f16 and f32
// products, so a best that is the fp8 cuBLASLt family (its scales and FAST_ACCUM) is refused with
// that reason, and nothing is written.
#include <filesystem>

#include <gtest/gtest.h>

#include "replay/kernel_export.h"
#include "tests/replay/synthetic_run.h"
#include "tests/scratch.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

TEST(KernelExport, Fp8CublasltBestIsRefusedWithTheReason) {
  problem::Candidate best;
  best.base.family = "cublaslt";
  best.base.knobs = {{"HEUR", "1"}, {"FAST_ACCUM", "1"}};
  const fs::path root = testing::scratch_path("export", "fp8");
  fs::create_directories(root);
  const fs::path run =
      testing::synthetic_run(root / "run-gemm_fp8", "problems/gpu/gemm_fp8", best, {});
  const fs::path out = root / "cuda-gemm_fp8";
  for (const char* format : {"cuda", "sol-execbench"}) {
    auto written = export_run(run, format, out);
    ASSERT_FALSE(written.ok()) << format;
    EXPECT_NE(written.status().message().find(
                  "family cublaslt: the export's cuBLASLt runtime runs bf16, f16 and f32 "
                  "products, not fp8_e4m3"),
              std::string::npos)
        << written.status().to_string();
    EXPECT_FALSE(fs::exists(out / "gemm_fp8.cu")) << format;
  }
}

}  // namespace
}  // namespace arc::replay
