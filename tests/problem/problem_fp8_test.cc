// fp8 GEMM problems (docs/problem-format-cuda.md, "Library families"): the shipped gemm_fp8, and
// the gemm table's fp8 rules: a and b in fp8 e4m3 with a bf16, f16 or f32 output, optional
// a_scale / b_scale naming scalar f32 inputs, FAST_ACCUM for fp8 operands only; every error names
// the file, the field and what was expected.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "problem/problem.h"

namespace arc::problem {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = ARC_SOURCE_DIR;

// gemm_fp8: e4m3 operands, scalar f32 scales that reach cuBLASLt through the gemm table and
// every other kernel as inputs 2 and 3, a bf16 output, the fp8 GEMM peak for the SOL bound.
TEST(ShippedFp8Gemm, CarriesItsScalesToTheLibraryAndTheKernels) {
  auto p = load_problem(kRoot / "problems/gpu/gemm_fp8");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->compute_dtype, "fp8_e4m3");
  ASSERT_EQ(p->inputs.size(), 4u);
  EXPECT_EQ(p->inputs[0].dtype, "fp8_e4m3");
  EXPECT_EQ(p->inputs[1].dtype, "fp8_e4m3");
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(p->inputs[i].dtype, "f32");
    EXPECT_TRUE(p->inputs[i].shape.empty());
    // Drawn anew every round, never 1: a kernel that ignores a scale fails.
    EXPECT_GT(p->inputs[i].low, 0.0);
    EXPECT_LT(p->inputs[i].high, 1.0);
  }
  ASSERT_EQ(p->outputs.size(), 1u);
  EXPECT_EQ(p->outputs[0].dtype, "bf16");
  const Family* lib = p->family("cublaslt");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->gemm.a_scale, "scale_x");
  EXPECT_EQ(lib->gemm.b_scale, "scale_w");
  ASSERT_NE(lib->knob("FAST_ACCUM"), nullptr);
  EXPECT_EQ(lib->knob("FAST_ACCUM")->default_value, "0");
  EXPECT_EQ(p->seed.base.family, "cublaslt");
  const Workload* big = p->workload("m8192_n8192_k8192");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(p->elements(p->inputs[2], *big), 1);
  auto bytes = p->bytes(*big);
  ASSERT_TRUE(bytes.ok());
  EXPECT_DOUBLE_EQ(*bytes, 8192.0 * 8192 * 4 + 8);  // x and w one byte, y two, the scales
  for (const char* w : {"m16_n4096_k4096", "m128_n8192_k8192", "m4096_n4096_k4096"}) {
    EXPECT_NE(p->workload(w), nullptr) << w;
  }
}

// An fp8 GEMM with per-tensor scales (the shape of problems/gpu/gemm_fp8).
constexpr const char* kValidFp8 = R"toml(name = "tiny_fp8"
kernel_type = "gemm"
backend = "cuda"
axes = ["m", "n", "k"]
reference = "reference.cu"

[[inputs]]
name = "x"
dtype = "fp8_e4m3"
shape = ["m", "k"]

[[inputs]]
name = "w"
dtype = "fp8_e4m3"
shape = ["n", "k"]

[[inputs]]
name = "sx"
dtype = "f32"
shape = []
low = 0.5
high = 1.0

[[inputs]]
name = "sw"
dtype = "f32"
shape = []
low = 0.5
high = 1.0

[[outputs]]
name = "y"
dtype = "bf16"
shape = ["m", "n"]

[cost]
flops = "2 * m * n * k"
bytes = "m * k + n * k + 2 * m * n"

[[workloads]]
name = "small"
axes = { m = 16, n = 64, k = 128 }

[[reference_launches]]
kernel = "ref_kernel"
grid = ["n"]
block = [256]

[[families]]
name = "lib"
library = "cublaslt"
gemm = { a = "x", b = "w", d = "y", m = "m", n = "n", k = "k", a_scale = "sx", b_scale = "sw" }

[[families.knobs]]
name = "FAST_ACCUM"
values = ["0", "1"]

[seed]
family = "lib"
)toml";

// A bf16 GEMM of the same shape, for what fp8 operands alone may use.
constexpr const char* kBf16 = R"toml(name = "tiny_bf16"
kernel_type = "gemm"
backend = "cuda"
axes = ["m", "n", "k"]
reference = "reference.cu"

[[inputs]]
name = "x"
dtype = "bf16"
shape = ["m", "k"]

[[inputs]]
name = "w"
dtype = "bf16"
shape = ["n", "k"]

[[outputs]]
name = "y"
dtype = "bf16"
shape = ["m", "n"]

[cost]
flops = "2 * m * n * k"
bytes = "2 * (m * k + n * k + m * n)"

[[workloads]]
name = "small"
axes = { m = 16, n = 64, k = 128 }

[[reference_launches]]
kernel = "ref_kernel"
grid = ["n"]
block = [256]

[[families]]
name = "lib"
library = "cublaslt"
gemm = { a = "x", b = "w", d = "y", m = "m", n = "n", k = "k" }

[[families.knobs]]
name = "HEUR"
values = ["0", "1"]

[[families.knobs]]
name = "TILE"
values = ["auto", "128x256"]

[seed]
family = "lib"
)toml";

class Fp8Problem : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("arc_problem_fp8_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "reference.cu") << "// reference\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Result<Problem> load(const std::string& text) {
    std::ofstream(dir_ / "problem.toml", std::ios::trunc) << text;
    return load_problem(dir_);
  }

  // `base` with the first occurrence of `from` replaced by `to`.
  static std::string edit(const std::string& base, const std::string& from, const std::string& to) {
    std::string s = base;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << "fixture text lacks: " << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  }
  static std::string fp8_with(const std::string& from, const std::string& to) {
    return edit(kValidFp8, from, to);
  }
  static std::string bf16_with(const std::string& from, const std::string& to) {
    return edit(kBf16, from, to);
  }

  // The load fails, and the message names the file, then each of `parts` in order.
  void expect_error(const std::string& text, const std::vector<std::string>& parts) {
    auto p = load(text);
    ASSERT_FALSE(p.ok()) << "loaded a malformed problem; expected an error naming "
                         << (parts.empty() ? "" : parts[0]);
    const std::string& m = p.status().message();
    EXPECT_EQ(m.find((dir_ / "problem.toml").string()), 0u) << m;
    size_t at = 0;
    for (const auto& part : parts) {
      const size_t found = m.find(part, at);
      EXPECT_NE(found, std::string::npos) << "missing '" << part << "' in: " << m;
      if (found != std::string::npos) at = found + part.size();
    }
  }

  fs::path dir_;
};

TEST_F(Fp8Problem, LoadsWithScalesAndAWiderOutput) {
  auto p = load(kValidFp8);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->compute_dtype, "fp8_e4m3");  // the first input's dtype
  const Family& lib = p->families[0];
  EXPECT_EQ(lib.gemm.a_scale, "sx");
  EXPECT_EQ(lib.gemm.b_scale, "sw");
  // Scales are optional (a factor of 1), and an f32 or f16 output works as well as bf16.
  auto plain = load(fp8_with(", a_scale = \"sx\", b_scale = \"sw\"", ""));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_TRUE(plain->families[0].gemm.a_scale.empty());
  auto f32 = load(fp8_with("name = \"y\"\ndtype = \"bf16\"", "name = \"y\"\ndtype = \"f32\""));
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
}

TEST_F(Fp8Problem, ScalesNameScalarF32Inputs) {
  expect_error(fp8_with("a_scale = \"sx\"", "a_scale = \"scale\""),
               {"field 'families[0].gemm.a_scale'",
                "expected the name of a scalar f32 input (shape []) that multiplies the product "
                "(scalar f32 inputs: sx, sw)",
                "got \"scale\""});
  expect_error(fp8_with("b_scale = \"sw\"", "b_scale = \"w\""),
               {"field 'families[0].gemm.b_scale'", "expected the name of a scalar f32 input",
                "got \"w\" of dtype \"fp8_e4m3\" and shape [n, k]"});
  expect_error(fp8_with("name = \"sw\"\ndtype = \"f32\"", "name = \"sw\"\ndtype = \"bf16\""),
               {"field 'families[0].gemm.b_scale'", "(scalar f32 inputs: sx)",
                "got \"sw\" of dtype \"bf16\" and shape []"});
  expect_error(
      fp8_with("a_scale = \"sx\"", "a_scale = 2"),
      {"field 'families[0].gemm.a_scale'", "expected the name of a scalar f32 input", "got 2"});
}

TEST_F(Fp8Problem, ScalesAndFastAccumulationAreForFp8OperandsOnly) {
  // A scale on a bf16 product is an error, never silently ignored.
  expect_error(
      bf16_with("k = \"k\" }", "k = \"k\", a_scale = \"x\" }"),
      {"field 'families[0].gemm.a_scale'", "expected no 'a_scale' unless gemm.a is \"fp8_e4m3\"",
       "got \"x\" with gemm.a \"x\" of dtype \"bf16\""});
  expect_error(
      bf16_with("name = \"TILE\"", "name = \"FAST_ACCUM\""),
      {"field 'families[0].knobs[1].name'", "FAST_ACCUM needs gemm.a of dtype \"fp8_e4m3\"",
       "got \"FAST_ACCUM\" with gemm.a of dtype \"bf16\""});
  expect_error(fp8_with("values = [\"0\", \"1\"]", "values = [\"0\", \"2\"]"),
               {"field 'families[0].knobs[0].values[1]'", "expected \"0\" or \"1\"", "got \"2\""});
}

TEST_F(Fp8Problem, OperandAndOutputDtypes) {
  expect_error(fp8_with("name = \"w\"\ndtype = \"fp8_e4m3\"", "name = \"w\"\ndtype = \"bf16\""),
               {"field 'families[0].gemm.b'",
                "expected a tensor of gemm.a's dtype \"fp8_e4m3\" (a and b share one)",
                "got \"w\" of dtype \"bf16\""});
  expect_error(fp8_with("name = \"y\"\ndtype = \"bf16\"", "name = \"y\"\ndtype = \"fp8_e4m3\""),
               {"field 'families[0].gemm.d'",
                "expected a tensor of dtype \"bf16\", \"f16\", \"f32\" (an fp8 product's output)",
                "got \"y\" of dtype \"fp8_e4m3\""});
  // e5m2 x e5m2 is no product cuBLASLt runs.
  expect_error(edit(fp8_with("dtype = \"fp8_e4m3\"\nshape = [\"m\", \"k\"]",
                             "dtype = \"fp8_e5m2\"\nshape = [\"m\", \"k\"]"),
                    "backend = \"cuda\"\n", "backend = \"cuda\"\ncompute_dtype = \"f32\"\n"),
               {"field 'families[0].gemm.a'",
                "expected a tensor of dtype \"bf16\", \"f16\", \"f32\", \"fp8_e4m3\"",
                "got \"x\" of dtype \"fp8_e5m2\""});
  expect_error(
      fp8_with("name = \"tiny_fp8\"\n", "name = \"tiny_fp8\"\ncompute_dtype = \"fp8_e5m2\"\n"),
      {"field 'compute_dtype'", "expected one of \"f32\", \"bf16\", \"f16\", \"fp8_e4m3\"",
       "got \"fp8_e5m2\""});
}

}  // namespace
}  // namespace arc::problem
