// NVRTC compilation without a GPU: options, the cache, resources from ptxas, errors.
#include "cuda/nvrtc.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "cuda/runtime_kernels.h"
#include "tests/cuda/paths.h"

namespace arc::cuda {
namespace {

using arc::test_paths::source_dir;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/arc-nvrtc-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    CompilerOptions o;
    o.cache_dir = dir_;
    o.include_root = source_dir();
    o.jobs = 2;
    compiler_ = std::make_unique<Compiler>(o);
  }
  void TearDown() override {
    compiler_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::unique_ptr<Compiler> compiler_;
};

constexpr const char* kKernel = R"(
#include "arc_cuda.h"
#ifndef SCALE
#define SCALE 2
#endif
ARC_KERNEL twice(arc_args a) {
  __shared__ float tile[256];
  const long long i = blockIdx.x * 256ll + threadIdx.x;
  tile[threadIdx.x] = static_cast<const float*>(a.in[0])[i] * SCALE;
  __syncthreads();
  static_cast<float*>(a.out[0])[i] = tile[255 - threadIdx.x];
}
)";

TEST_F(NvrtcTest, CompilesForSm90aWithRecordedOptionsAndResources) {
  Cubin c = compiler_->compile(kKernel, "twice.cu", {{"SCALE", "3"}});
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_FALSE(c.cached);
  EXPECT_EQ(c.key.size(), 64u);
  EXPECT_TRUE(fs::exists(c.path));
  EXPECT_GT(fs::file_size(c.path), 0u);
  EXPECT_THAT(c.options, HasSubstr("--gpu-architecture=sm_90a"));
  EXPECT_THAT(c.options, HasSubstr("-DSCALE=3"));
  EXPECT_THAT(c.options, HasSubstr("-std=c++17"));
  EXPECT_THAT(compiler_->toolchain(), HasSubstr("NVRTC 13."));
  ASSERT_EQ(c.kernels.size(), 1u) << c.log;
  EXPECT_EQ(c.kernels[0].name, "twice");
  EXPECT_GT(c.kernels[0].registers, 0);
  EXPECT_EQ(c.kernels[0].shared_static_bytes, 1024);
  EXPECT_EQ(c.kernels[0].spill_store_bytes, 0);
  EXPECT_EQ(compiler_->cubin_path(c.key), c.path);
}

TEST_F(NvrtcTest, TheSecondCompileIsACacheHitAndOtherDefinesAreNot) {
  Cubin a = compiler_->compile(kKernel, "twice.cu", {{"SCALE", "3"}});
  Cubin b = compiler_->compile(kKernel, "twice.cu", {{"SCALE", "3"}});
  Cubin c = compiler_->compile(kKernel, "twice.cu", {{"SCALE", "4"}});
  ASSERT_TRUE(a.ok && b.ok && c.ok);
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(b.seconds, 0);
  EXPECT_EQ(b.kernels.size(), 1u);  // resources survive the cache
  EXPECT_FALSE(c.cached);
  EXPECT_NE(a.key, c.key);
  // A fresh compiler on the same folder (another process, another run) hits too.
  CompilerOptions o;
  o.cache_dir = dir_;
  o.include_root = source_dir();
  Compiler again(o);
  EXPECT_TRUE(again.compile(kKernel, "twice.cu", {{"SCALE", "4"}}).cached);
}

TEST_F(NvrtcTest, ACompileErrorCarriesNvrtcsMessageAndIsCachedToo) {
  Cubin c =
      compiler_->compile("ARC_KERNEL broken(arc_args a) { undeclared_name = 1; }", "broken.cu", {});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("undeclared_name"));
  EXPECT_THAT(c.error, HasSubstr("broken.cu"));
  Cubin again =
      compiler_->compile("ARC_KERNEL broken(arc_args a) { undeclared_name = 1; }", "broken.cu", {});
  EXPECT_FALSE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.error, c.error);
}

TEST_F(NvrtcTest, SharedSourcesAreHeadersAndPartOfTheKey) {
  const std::string src =
      "#include \"arc_cuda.h\"\n#include \"io/k.h\"\n"
      "ARC_KERNEL put(arc_args a) { static_cast<float*>(a.out[0])[0] = K; }\n";
  Cubin a = compiler_->compile(src, "put.cu", {}, {{"io/k.h", "#pragma once\n#define K 1.0f\n"}});
  Cubin b = compiler_->compile(src, "put.cu", {}, {{"io/k.h", "#pragma once\n#define K 2.0f\n"}});
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_NE(a.key, b.key);
  Cubin none = compiler_->compile(src, "put.cu", {});
  EXPECT_FALSE(none.ok);
  EXPECT_THAT(none.error, HasSubstr("io/k.h"));
  Cubin shadow = compiler_->compile(src, "put.cu", {}, {{"arc_cuda.h", "// not the ABI\n"}});
  EXPECT_FALSE(shadow.ok);
  EXPECT_THAT(shadow.error, HasSubstr("may not be named arc_cuda.h"));
}

TEST_F(NvrtcTest, ParallelCompilesReturnInOrder) {
  std::vector<Compiler::Job> jobs;
  for (int s = 1; s <= 4; ++s)
    jobs.push_back({kKernel, "twice.cu", {{"SCALE", std::to_string(s)}}});
  jobs.push_back({"this is not C++", "bad.cu", {}});
  auto out = compiler_->compile_all(jobs);
  ASSERT_EQ(out.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(out[i].ok) << out[i].error;
    EXPECT_THAT(out[i].options, HasSubstr("-DSCALE=" + std::to_string(i + 1)));
  }
  EXPECT_FALSE(out[4].ok);
}

TEST_F(NvrtcTest, TheWorkersRuntimeKernelsCompile) {
  Cubin c = compiler_->compile(runtime_kernels_source(), "runtime", {});
  ASSERT_TRUE(c.ok) << c.error;
  std::vector<std::string> names;
  for (const auto& k : c.kernels) names.push_back(k.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("arc_fill", "arc_compare", "arc_digest",
                                                     "arc_copy", "arc_flush"));
}

TEST(PtxasReport, ParsesRegistersSpillsSharedAndBarriers) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm_tc' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm_tc\n"
      "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1040 bytes smem, 904 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'reduce' for 'sm_90a'\n"
      "ptxas info    : Function properties for reduce\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, 904 bytes cmem[0]\n";
  auto k = parse_ptxas_report(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "gemm_tc");
  EXPECT_EQ(k[0].registers, 168);
  EXPECT_EQ(k[0].stack_bytes, 16);
  EXPECT_EQ(k[0].spill_store_bytes, 8);
  EXPECT_EQ(k[0].spill_load_bytes, 12);
  EXPECT_EQ(k[0].shared_static_bytes, 1040);
  EXPECT_EQ(k[0].barriers, 1);
  EXPECT_EQ(k[1].name, "reduce");
  EXPECT_EQ(k[1].registers, 24);
  EXPECT_EQ(k[1].shared_static_bytes, 0);
  EXPECT_EQ(k[1].barriers, 0);
}

TEST_F(NvrtcTest, IncludingAFileOutsideTheSharedSourcesAndToolkitIsRefusedUnread) {
  // NVRTC runs inside arcd: an #include of any file arcd may read would quote its first tokens
  // into the compile log. The screen refuses such a source before NVRTC sees it, whatever the
  // spelling, and still lets the toolkit's headers and the shared sources through.
  const fs::path secret =
      fs::temp_directory_path() / ("arc-nvrtc-secret-" + std::to_string(::getpid()) + ".h");
  std::ofstream(secret) << "TOKEN_SECRET_4711 first line\n";
  for (const std::string& spelling :
       {"#include \"" + secret.string() + "\"\n", "#  include <" + secret.string() + ">\n",
        "#\\\ninclude \"" + secret.string() + "\"\n",
        "# /* c */ include \"" + secret.string() + "\"\n",
        std::string("#define F \"x.h\"\n#include F\n"),
        std::string("#include \"../../../../../../etc/hostname\"\n"),
        std::string("#include_next \"secret.h\"\n")}) {
    Cubin c = compiler_->compile(spelling + kKernel, "hostile.cu", {{"SCALE", "3"}});
    EXPECT_FALSE(c.ok) << spelling;
    EXPECT_THAT(c.error, HasSubstr("is not allowed")) << spelling;
    EXPECT_THAT(c.error + c.log, Not(HasSubstr("TOKEN_SECRET_4711"))) << spelling;
  }
  Cubin fine =
      compiler_->compile("#include <cuda_bf16.h>\n#include \"io/k.h\"\n" + std::string(kKernel),
                         "fine.cu", {{"SCALE", "3"}}, {{"io/k.h", "#pragma once\n"}});
  EXPECT_TRUE(fine.ok) << fine.error;
  std::error_code ec;
  fs::remove(secret, ec);
}

}  // namespace
}  // namespace arc::cuda
