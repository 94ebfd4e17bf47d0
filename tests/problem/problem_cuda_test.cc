// CUDA problems (docs/problem-format-cuda.md): the shipped problems under problems/gpu, the
// expression functions, launch resolution, and malformed CUDA fields.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "problem/expression.h"
#include "problem/launch.h"
#include "problem/problem.h"
#include "problem/tensor_map.h"

namespace arc::problem {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = ARC_SOURCE_DIR;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// `m` contains each of `parts`, in order.
void expect_in_order(const std::string& m, const std::vector<std::string>& parts) {
  size_t at = 0;
  for (const auto& part : parts) {
    const size_t found = m.find(part, at);
    EXPECT_NE(found, std::string::npos) << "missing '" << part << "' in: " << m;
    if (found != std::string::npos) at = found + part.size();
  }
}

// ---------------------------------------------------------------------------------------------
// Shipped problems

std::vector<fs::path> gpu_problems() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kRoot / "problems/gpu")) {
    if (fs::exists(e.path() / "problem.toml")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CudaShippedProblems, AllLoadAndResolveForEveryWorkload) {
  const auto dirs = gpu_problems();
  ASSERT_EQ(dirs.size(), 10u);
  std::set<std::string> hashes;
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    auto p = load_problem(dir);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->backend, "cuda");
    EXPECT_TRUE(p->compute_dtype == "f32" || p->compute_dtype == "bf16" ||
                p->compute_dtype == "f16" || p->compute_dtype == "fp8_e4m3")
        << p->compute_dtype;
    EXPECT_FALSE(p->reference_launches.empty());
    EXPECT_NE(p->family(p->seed.base.family), nullptr);
    EXPECT_EQ(p->hash.size(), 64u);
    hashes.insert(p->hash);
    for (const auto& t : p->inputs) EXPECT_GT(dtype_bytes(t.dtype), 0) << t.name;
    for (const auto& t : p->outputs) EXPECT_GT(dtype_bytes(t.dtype), 0) << t.name;
    for (const auto& w : p->workloads) {
      SCOPED_TRACE(w.name);
      auto ref = resolve_launches(p->reference_launches, w, {});
      ASSERT_TRUE(ref.ok()) << ref.status().to_string();
      EXPECT_EQ(ref->size(), p->reference_launches.size());
      for (const auto& f : p->families) {
        SCOPED_TRACE(f.name);
        if (!f.library.empty()) {
          EXPECT_EQ(f.library, "cublaslt");
          EXPECT_TRUE(f.launches.empty());
          EXPECT_TRUE(f.source.empty());
          EXPECT_FALSE(f.gemm.a.empty());
          EXPECT_FALSE(f.gemm.d.empty());
          continue;
        }
        ASSERT_FALSE(f.launches.empty());
        EXPECT_TRUE(fs::exists(f.source));
        const auto knobs = f.default_variant().knobs;
        auto r = resolve_launches(f.launches, w, knobs, check_device_names());
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        ASSERT_EQ(r->size(), f.launches.size());
        for (size_t i = 0; i < r->size(); ++i) {
          const ResolvedLaunch& l = (*r)[i];
          EXPECT_EQ(l.kernel, f.launches[i].kernel);
          EXPECT_LE(l.block[0] * l.block[1] * l.block[2], 1024);
          for (int d = 0; d < 3; ++d) {
            EXPECT_GE(l.grid[d], 1);
            EXPECT_GE(l.block[d], 1);
          }
          EXPECT_GE(l.shared, 0);
        }
        auto ws = evaluate_expression(f.workspace, expression_names(w, knobs));
        ASSERT_TRUE(ws.ok()) << ws.status().to_string();
        EXPECT_GE(*ws, 0);
      }
    }
  }
  EXPECT_EQ(hashes.size(), dirs.size());  // every problem has its own identity
}

TEST(CudaShippedProblems, GemmLaunchesResolveToTheExpectedDimensions) {
  auto p = load_problem(kRoot / "problems/gpu/gemm_bf16");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->compute_dtype, "bf16");
  const Family* lib = p->family("cublaslt");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->gemm.a, "x");
  EXPECT_EQ(lib->gemm.b, "w");
  EXPECT_EQ(lib->gemm.c, "");
  EXPECT_EQ(lib->gemm.d, "y");
  EXPECT_EQ(lib->gemm.m, "m");
  EXPECT_EQ(lib->gemm.n, "n");
  EXPECT_EQ(lib->gemm.k, "k");

  const Family* tc = p->family("tensorcore");
  ASSERT_NE(tc, nullptr);
  const Workload* big = p->workload("m4096_n4096_k4096");
  ASSERT_NE(big, nullptr);
  auto r = resolve_launches(tc->launches, *big, tc->default_variant().knobs);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].kernel, "gemm_tc");
  EXPECT_EQ((*r)[0].grid[0], 32 * 32);  // cdiv(4096, 128) * cdiv(4096, 128)
  EXPECT_EQ((*r)[0].grid[1], 1);
  EXPECT_EQ((*r)[0].block[0], 128);
  EXPECT_EQ((*r)[0].shared, 3 * (128 + 128) * 64 * 2);

  const Family* sk = p->family("splitk");
  ASSERT_NE(sk, nullptr);
  EXPECT_EQ(sk->workspace, "GRID_SPLITK * m * n * 4");
  const Workload* skinny = p->workload("m16_n4096_k4096");
  ASSERT_NE(skinny, nullptr);
  const auto knobs = sk->default_variant().knobs;
  auto s = resolve_launches(sk->launches, *skinny, knobs);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].grid[0], 64);  // cdiv(4096, 8 * 256 / 32)
  EXPECT_EQ((*s)[0].grid[1], 8);   // GRID_SPLITK
  EXPECT_EQ((*s)[0].block[0], 256);
  EXPECT_EQ((*s)[0].shared, 16 * (512 + 32) * 2);  // min(64, cdiv(16, 16) * 16) rows
  EXPECT_EQ((*s)[1].kernel, "splitk_reduce");
  EXPECT_EQ((*s)[1].grid[0], 16 * 4096 / 1024);
  auto ws = evaluate_expression(sk->workspace, expression_names(*skinny, knobs));
  ASSERT_TRUE(ws.ok());
  EXPECT_DOUBLE_EQ(*ws, 8.0 * 16 * 4096 * 4);

  auto ref = resolve_launches(p->reference_launches, *skinny, {});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ((*ref)[0].grid[0], 32);  // cdiv(n, 128)
  EXPECT_EQ((*ref)[0].grid[1], 1);   // cdiv(m, 128)
}

TEST(CudaShippedProblems, InPlaceProjectionAliasesTheResidual) {
  auto p = load_problem(kRoot / "problems/gpu/attn_out_proj_bf16");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->outputs.size(), 1u);
  EXPECT_EQ(p->outputs[0].alias, "residual");
  EXPECT_TRUE(p->inputs[0].alias.empty());
  const Family* lib = p->family("cublaslt");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->gemm.c, "residual");
  EXPECT_EQ(lib->gemm.d, "y");
  EXPECT_EQ(lib->gemm.k, "hidden_in");
}

TEST(CudaShippedProblems, ComputeDtypeAsDeclared) {
  for (auto [name, dtype] : {std::pair{"softmax_bf16", "f32"}, std::pair{"rowsum_f32", "f32"},
                             std::pair{"attn_out_proj_bf16", "bf16"}}) {
    auto p = load_problem(kRoot / "problems/gpu" / name);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->compute_dtype, dtype) << name;
  }
}

TEST(CudaDtype, BytesPerElement) {
  EXPECT_EQ(dtype_bytes("f32"), 4);
  EXPECT_EQ(dtype_bytes("bf16"), 2);
  EXPECT_EQ(dtype_bytes("f16"), 2);
  EXPECT_EQ(dtype_bytes("f64"), 8);
  EXPECT_EQ(dtype_bytes("i8"), 1);
  EXPECT_EQ(dtype_bytes("float"), 0);
  EXPECT_EQ(dtype_bytes(""), 0);
}

// ---------------------------------------------------------------------------------------------
// Expression functions

const std::map<std::string, int64_t> kAxes = {{"rows", 256}, {"cols", 1024}, {"K", 3}};

double eval_ok(const std::string& e, const std::map<std::string, int64_t>& names = kAxes) {
  auto r = evaluate_expression(e, names);
  EXPECT_TRUE(r.ok()) << e << ": " << r.status().to_string();
  return r.ok() ? *r : std::nan("");
}

std::string eval_error(const std::string& e) {
  auto r = evaluate_expression(e, kAxes);
  EXPECT_FALSE(r.ok()) << e << " evaluated to " << (r.ok() ? *r : 0.0);
  return r.ok() ? "" : r.status().message();
}

TEST(CudaExpression, Functions) {
  EXPECT_EQ(eval_ok("cdiv(10, 3)"), 4);
  EXPECT_EQ(eval_ok("cdiv(9, 3)"), 3);
  EXPECT_EQ(eval_ok("cdiv(1, 1024)"), 1);
  EXPECT_EQ(eval_ok("cdiv(-7, 2)"), -3);
  EXPECT_EQ(eval_ok("cdiv(rows * cols, 1000)"), 263);  // 262144 / 1000 = 262.144
  EXPECT_EQ(eval_ok("min(3, 5)"), 3);
  EXPECT_EQ(eval_ok("min(5, 3)"), 3);
  EXPECT_EQ(eval_ok("max(3, 5)"), 5);
  EXPECT_EQ(eval_ok("max(-1, -2)"), -1);
  EXPECT_EQ(eval_ok("min(rows, cols)"), 256);
}

TEST(CudaExpression, FunctionsNestAndCombine) {
  EXPECT_EQ(eval_ok("max(cdiv(rows, 100), min(K, 2)) * 2"), 6);
  EXPECT_EQ(eval_ok("cdiv(rows * cols, min(256, max(K, 128)))"), 2048);
  EXPECT_EQ(eval_ok("1 + min(2, 3) * 4"), 9);
  EXPECT_EQ(eval_ok("-max(1, 2)"), -2);
  EXPECT_EQ(eval_ok("  cdiv ( 10 , 3 )  "), 4);
  EXPECT_EQ(eval_ok("min((1 + 2) * 3, 10)"), 9);
  // A name followed by '(' is a call; without it, the same name is an axis.
  EXPECT_EQ(eval_ok("min + min(min, 1)", {{"min", 5}}), 6);
}

TEST(CudaExpression, FunctionErrorsSayWhatIsWrong) {
  expect_in_order(eval_error("floor(rows)"),
                  {"expression \"floor(rows)\"", "unknown function 'floor' at position 1",
                   "cdiv(a, b)", "min(a, b)", "max(a, b)"});
  expect_in_order(eval_error("cdiv(10)"),
                  {"function 'cdiv' at position 1 takes 2 arguments", "got 1"});
  expect_in_order(eval_error("2 * min(1, 2, 3)"),
                  {"function 'min' at position 5 takes 2 arguments", "got 3"});
  expect_in_order(eval_error("max()"), {"function 'max'", "takes 2 arguments", "got 0"});
  expect_in_order(eval_error("cdiv(rows, K - 3)"), {"division by zero in cdiv at position 1"});
  expect_in_order(
      eval_error("cdiv(1 2)"),
      {"expected ',' or ')' in the call of 'cdiv' at position 1", "got '2' at position 8"});
  expect_in_order(eval_error("min(1, 2"), {"in the call of 'min'", "got end of expression"});
  expect_in_order(eval_error("1, 2"), {"unexpected ',' at position 2"});
  expect_in_order(eval_error("min(, 2)"), {"got ',' at position 5"});
  expect_in_order(eval_error("cdiv * 2"), {"unknown axis 'cdiv' at position 1"});
  expect_in_order(eval_error("min(rows, colz)"), {"unknown axis 'colz' at position 11"});
}

TEST(CudaExpression, DeeplyNestedCallsAreAnErrorNotACrash) {
  std::string e;
  for (int i = 0; i < 5000; ++i) e += "min(1, ";
  e += "1";
  for (int i = 0; i < 5000; ++i) e += ")";
  expect_in_order(eval_error(e), {"nested deeper"});
}

TEST(CudaExpressionNames, AxesAndIntegerKnobs) {
  const Workload w{"w", {{"rows", 4}, {"cols", 8}}, {}};
  const auto names = expression_names(
      w, {{"THREADS", "256"}, {"EXP", "fast"}, {"NEG", "-2"}, {"TILE", "128x64"}, {"rows", "99"}});
  EXPECT_EQ(names, (std::map<std::string, int64_t>{
                       {"rows", 4}, {"cols", 8}, {"THREADS", 256}, {"NEG", -2}}));
  EXPECT_EQ(expression_names(w, {}), w.axes);
}

// ---------------------------------------------------------------------------------------------
// resolve_launches

const Workload kWorkload{"w", {{"rows", 1000}, {"cols", 64}}, {}};

Launch launch(std::string kernel, std::vector<std::string> grid, std::vector<std::string> block,
              std::string shared = "0") {
  Launch l;
  l.kernel = std::move(kernel);
  l.grid = std::move(grid);
  l.block = std::move(block);
  l.shared = std::move(shared);
  return l;
}

std::string resolve_error(const std::vector<Launch>& launches,
                          const std::map<std::string, std::string>& knobs = {}) {
  auto r = resolve_launches(launches, kWorkload, knobs);
  EXPECT_FALSE(r.ok()) << "resolved";
  return r.ok() ? "" : r.status().message();
}

TEST(CudaResolveLaunches, ResolvesEveryDimension) {
  const std::vector<Launch> launches = {
      launch("stats", {"cdiv(rows, BLOCK_ROWS)", "2"}, {"32 * BLOCK_ROWS"}, "4 * cols"),
      launch("apply", {"rows"}, {"16", "16", "4"})};
  auto r = resolve_launches(launches, kWorkload, {{"BLOCK_ROWS", "4"}, {"EXP", "fast"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  const ResolvedLaunch& a = (*r)[0];
  EXPECT_EQ(a.kernel, "stats");
  EXPECT_EQ(a.grid[0], 250);
  EXPECT_EQ(a.grid[1], 2);
  EXPECT_EQ(a.grid[2], 1);  // not given: 1
  EXPECT_EQ(a.block[0], 128);
  EXPECT_EQ(a.block[1], 1);
  EXPECT_EQ(a.shared, 256);
  const ResolvedLaunch& b = (*r)[1];
  EXPECT_EQ(b.kernel, "apply");
  EXPECT_EQ(b.grid[0], 1000);
  EXPECT_EQ(b.block[0] * b.block[1] * b.block[2], 1024);
  EXPECT_EQ(b.shared, 0);
  auto none = resolve_launches({}, kWorkload, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CudaResolveLaunches, BlockOver1024Threads) {
  expect_in_order(resolve_error({launch("k", {"1"}, {"32", "64"})}),
                  {"launches[0].block (kernel 'k')", "expected at most 1024 threads per block",
                   "got 32 x 64 x 1 = 2048", "for workload 'w'"});
  expect_in_order(resolve_error({launch("k", {"1"}, {"THREADS"})}, {{"THREADS", "2048"}}),
                  {"launches[0].block[0] (kernel 'k')", "at most 1024", "\"THREADS\" = 2048"});
  expect_in_order(resolve_error({launch("k", {"1"}, {"1", "1", "128"})}),
                  {"launches[0].block[2]", "at most 64", "= 128"});
}

TEST(CudaResolveLaunches, ZeroOrNegativeOrOversizedGrid) {
  expect_in_order(resolve_error({launch("k", {"rows - 1000"}, {"128"})}),
                  {"launches[0].grid[0] (kernel 'k')", "expected a positive integer",
                   "got \"rows - 1000\" = 0", "for workload 'w'"});
  expect_in_order(resolve_error({launch("k", {"-rows"}, {"128"})}),
                  {"launches[0].grid[0]", "positive integer", "= -1000"});
  expect_in_order(resolve_error({launch("k", {"1", "70000"}, {"128"})}),
                  {"launches[0].grid[1]", "at most 65535", "= 70000"});
  expect_in_order(resolve_error({launch("k", {}, {"128"})}),
                  {"launches[0].grid", "1 to 3 expressions", "got 0"});
}

TEST(CudaResolveLaunches, NonIntegerValues) {
  expect_in_order(resolve_error({launch("k", {"rows / 3"}, {"128"})}),
                  {"launches[0].grid[0]", "use cdiv(a, b)", "\"rows / 3\" = 333.333"});
  expect_in_order(resolve_error({launch("k", {"1"}, {"128"}, "cols / 3")}),
                  {"launches[0].shared", "a number of bytes >= 0", "= 21.333"});
}

TEST(CudaResolveLaunches, NonIntegerKnobCannotBeUsed) {
  expect_in_order(resolve_error({launch("k", {"rows"}, {"THREADS"})}, {{"THREADS", "auto"}}),
                  {"launches[0].block[0] (kernel 'k')", "unknown name 'THREADS' at position 1",
                   "knob 'THREADS' has the non-integer value \"auto\"", "names: cols, rows"});
}

TEST(CudaResolveLaunches, NegativeSharedAndLaterLaunchesNamed) {
  expect_in_order(resolve_error({launch("k", {"1"}, {"128"}, "-4")}),
                  {"launches[0].shared (kernel 'k')", "a number of bytes >= 0", "\"-4\" = -4"});
  expect_in_order(
      resolve_error({launch("first", {"1"}, {"128"}), launch("second", {"1"}, {"cols * 32"})}),
      {"launches[1].block[0] (kernel 'second')", "at most 1024", "= 2048"});
}

// ---------------------------------------------------------------------------------------------
// Temporary CUDA problems

const char* kValidCuda = R"toml(name = "tiny_cuda"
kernel_type = "norm"
backend = "cuda"
description = "a test problem"
axes = ["rows", "cols"]
reference = "reference.cu"

[[inputs]]
name = "x"
dtype = "bf16"
shape = ["rows", "cols"]

[[inputs]]
name = "residual"
dtype = "bf16"
shape = ["rows", "cols"]

[[inputs]]
name = "w"
dtype = "bf16"
shape = ["cols", "cols"]

[[outputs]]
name = "y"
dtype = "bf16"
shape = ["rows", "cols"]
alias = "residual"

[cost]
flops = "2 * rows * cols * cols"
bytes = "6 * rows * cols"

[[workloads]]
name = "small"
axes = { rows = 4, cols = 256 }

[[workloads]]
name = "large"
axes = { rows = 1000, cols = 4096 }

[[reference_launches]]
kernel = "ref_kernel"
grid = ["rows"]
block = [256]

[[families]]
name = "lib"
library = "cublaslt"
description = "cuBLASLt"
gemm = { a = "x", b = "w", c = "residual", d = "y", m = "rows", n = "cols", k = "cols" }

[[families.knobs]]
name = "HEUR"
values = ["0", "1", "7"]

[[families.knobs]]
name = "TILE"
values = ["auto", "128x256"]

[[families]]
name = "rowwise"
source = "families/rowwise.cu"
workspace = "rows * 4"

[[families.knobs]]
name = "THREADS"
values = ["128", "256", "1024"]
default = "256"

[[families.knobs]]
name = "VEC"
values = [1, 2, 4, 8]
default = "4"

[[families.knobs]]
name = "EXP"
values = ["accurate", "fast"]

[[families.launches]]
kernel = "rowwise_stats"
grid = ["cdiv(rows, 4)", 2]
block = ["THREADS"]
shared = "THREADS * VEC * 4"

[[families.launches]]
kernel = "rowwise_apply"
grid = ["cdiv(rows * cols, THREADS * VEC)"]
block = ["min(THREADS, 512)", 2]

[seed]
family = "rowwise"
)toml";

const char* kValidHost = R"toml(name = "tiny_host"
kernel_type = "reduction"
backend = "host"
axes = ["rows", "cols"]
reference = "reference.cpp"

[[inputs]]
name = "x"
dtype = "f32"
shape = ["rows", "cols"]

[[outputs]]
name = "y"
dtype = "f32"
shape = ["rows"]

[cost]
flops = "rows * cols"
bytes = "4 * rows * cols"

[[workloads]]
name = "small"
axes = { rows = 4, cols = 8 }

[[families]]
name = "naive"
source = "families/naive.cpp"

[seed]
family = "naive"
)toml";

class TempCudaProblem : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("arc_problem_cuda_test_" + std::to_string(::getpid()) +
                                        "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    write_file(dir_ / "reference.cu", "// reference\n");
    write_file(dir_ / "reference.cpp", "// reference\n");
    write_file(dir_ / "families/rowwise.cu", "// rowwise\n");
    write_file(dir_ / "families/naive.cpp", "// naive\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Result<Problem> load(const std::string& text) {
    write_file(dir_ / "problem.toml", text);
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
  static std::string with(const std::string& from, const std::string& to) {
    return edit(kValidCuda, from, to);
  }
  static std::string host_with(const std::string& from, const std::string& to) {
    return edit(kValidHost, from, to);
  }

  // The load fails, and the message names the file, then each of `parts` in order.
  void expect_error(const std::string& text, const std::vector<std::string>& parts) {
    auto p = load(text);
    ASSERT_FALSE(p.ok()) << "loaded a malformed problem; expected an error naming "
                         << (parts.empty() ? "" : parts[0]);
    const std::string& m = p.status().message();
    EXPECT_EQ(m.find((dir_ / "problem.toml").string()), 0u) << m;
    expect_in_order(m, parts);
  }

  fs::path dir_;
};

TEST_F(TempCudaProblem, ValidCudaProblemLoadsEveryField) {
  auto p = load(kValidCuda);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->backend, "cuda");
  EXPECT_EQ(p->compute_dtype, "bf16");  // default: the first input's dtype
  ASSERT_EQ(p->reference_launches.size(), 1u);
  EXPECT_EQ(p->reference_launches[0].kernel, "ref_kernel");
  EXPECT_EQ(p->reference_launches[0].block, (std::vector<std::string>{"256"}));  // an integer
  EXPECT_EQ(p->reference_launches[0].shared, "0");                               // the default
  EXPECT_EQ(p->outputs[0].alias, "residual");

  ASSERT_EQ(p->families.size(), 2u);
  const Family& lib = p->families[0];
  EXPECT_EQ(lib.library, "cublaslt");
  EXPECT_TRUE(lib.source.empty());
  EXPECT_TRUE(lib.launches.empty());
  EXPECT_EQ(lib.workspace, "0");
  EXPECT_EQ(lib.gemm.a, "x");
  EXPECT_EQ(lib.gemm.b, "w");
  EXPECT_EQ(lib.gemm.c, "residual");
  EXPECT_EQ(lib.gemm.d, "y");
  EXPECT_EQ(lib.gemm.k, "cols");

  const Family& rw = p->families[1];
  EXPECT_TRUE(rw.library.empty());
  EXPECT_EQ(rw.workspace, "rows * 4");
  ASSERT_EQ(rw.launches.size(), 2u);
  EXPECT_EQ(rw.launches[0].grid, (std::vector<std::string>{"cdiv(rows, 4)", "2"}));
  EXPECT_EQ(rw.launches[0].shared, "THREADS * VEC * 4");
  EXPECT_EQ(rw.launches[1].shared, "0");

  auto r = resolve_launches(rw.launches, p->workloads[0], rw.default_variant().knobs);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].grid[0], 1);
  EXPECT_EQ((*r)[0].grid[1], 2);
  EXPECT_EQ((*r)[0].block[0], 256);
  EXPECT_EQ((*r)[0].shared, 256 * 4 * 4);
  EXPECT_EQ((*r)[1].grid[0], 1);  // cdiv(4 * 256, 256 * 4)
  EXPECT_EQ((*r)[1].block[0], 256);
  EXPECT_EQ((*r)[1].block[1], 2);
}

TEST_F(TempCudaProblem, ExplicitComputeDtypeAndHashCoversLaunches) {
  auto p = load(with("backend = \"cuda\"\n", "backend = \"cuda\"\ncompute_dtype = \"f32\"\n"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->compute_dtype, "f32");
  auto a = load(kValidCuda);
  auto b = load(with("block = [\"THREADS\"]", "block = [\"min(THREADS, 256)\"]"));
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
  EXPECT_NE(a->hash, b->hash);
}

TEST_F(TempCudaProblem, BadComputeDtype) {
  expect_error(with("backend = \"cuda\"\n", "backend = \"cuda\"\ncompute_dtype = \"f64\"\n"),
               {"field 'compute_dtype'", "expected one of \"f32\", \"bf16\", \"f16\", \"fp8_e4m3\"",
                "got \"f64\""});
  expect_error(with("name = \"x\"\ndtype = \"bf16\"", "name = \"x\"\ndtype = \"i8\""),
               {"field 'compute_dtype'", "the first input's dtype, is not one of them",
                "got nothing (inputs[0].dtype = \"i8\")"});
}

TEST_F(TempCudaProblem, ReferenceLaunchesRequired) {
  std::string text = kValidCuda;
  const size_t at = text.find("[[reference_launches]]");
  text.erase(at, text.find("[[families]]") - at);
  expect_error(text, {"field 'reference_launches'",
                      "expected at least one [[reference_launches]] entry", "got nothing"});
}

TEST_F(TempCudaProblem, ReferenceLaunchFailsForAWorkload) {
  expect_error(with("grid = [\"rows\"]", "grid = [\"rows - 4\"]"),
               {"field 'reference_launches[0].grid[0]'", "expected a positive integer",
                "got \"rows - 4\" = 0 for workload 'small'"});
  auto p = load(with("grid = [\"rows\"]", "grid = [\"rows - 4\"]"));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message().find("at knobs"), std::string::npos);  // the reference has none
}

TEST_F(TempCudaProblem, AliasMustNameAMatchingInput) {
  expect_error(with("alias = \"residual\"", "alias = \"resid\""),
               {"field 'outputs[0].alias'", "expected the name of an input (x, residual, w)",
                "got \"resid\""});
  expect_error(with("alias = \"residual\"", "alias = \"w\""),
               {"field 'outputs[0].alias'", "expected an input of this output's shape [rows, cols]",
                "got \"w\" of shape [cols, cols]"});
  expect_error(
      with("name = \"residual\"\ndtype = \"bf16\"", "name = \"residual\"\ndtype = \"f16\""),
      {"field 'outputs[0].alias'", "expected an input of this output's dtype \"bf16\"",
       "got \"residual\" of dtype \"f16\""});
  expect_error(with("alias = \"residual\"", "alias = 3"),
               {"field 'outputs[0].alias'", "expected the name of an input", "got 3"});
}

TEST_F(TempCudaProblem, TwoOutputsMayNotAliasOneInput) {
  expect_error(with("[cost]",
                    "[[outputs]]\nname = \"z\"\ndtype = \"bf16\"\nshape = [\"rows\", \"cols\"]\n"
                    "alias = \"residual\"\n\n[cost]"),
               {"field 'outputs[1].alias'", "expected an input no other output aliases",
                "got \"residual\", already the alias of outputs[0] (\"y\")"});
}

TEST_F(TempCudaProblem, LaunchKernelMustBeAnIdentifier) {
  expect_error(with("kernel = \"rowwise_stats\"", "kernel = \"rowwise-stats\""),
               {"field 'families[1].launches[0].kernel'", "C identifier", "got \"rowwise-stats\""});
  expect_error(with("kernel = \"rowwise_apply\"\n", ""),
               {"field 'families[1].launches[1].kernel'", "got nothing"});
}

TEST_F(TempCudaProblem, LaunchDimensionsAreOneToThreeExpressions) {
  const std::string grid = "grid = [\"cdiv(rows, 4)\", 2]";
  expect_error(with(grid, "grid = [1, 2, 3, 4]"),
               {"field 'families[1].launches[0].grid'",
                "expected an array of 1 to 3 expressions (x, y, z)", "got 4 entries"});
  expect_error(with(grid, "grid = []"), {"field 'families[1].launches[0].grid'", "got []"});
  expect_error(with(grid, "grid = \"rows\""),
               {"field 'families[1].launches[0].grid'", "got \"rows\""});
  expect_error(with(grid, "grid = [2.5]"),
               {"field 'families[1].launches[0].grid[0]'",
                "expected an expression (a string or an integer)", "got 2.5"});
  expect_error(with(grid, "grid = [\"rows\", \" \"]"),
               {"field 'families[1].launches[0].grid[1]'", "got \" \""});
  expect_error(with("block = [\"THREADS\"]\n", ""), {"field 'families[1].launches[0].block'",
                                                     "expected an array of 1 to 3", "got nothing"});
  expect_error(with("shared = \"THREADS * VEC * 4\"", "shared = true"),
               {"field 'families[1].launches[0].shared'", "a byte count", "got true"});
}

TEST_F(TempCudaProblem, UnknownLaunchField) {
  expect_error(
      with("shared = \"THREADS * VEC * 4\"", "threads = 4"),
      {"field 'families[1].launches[0].threads'", "unknown field", "kernel, grid, block, shared"});
}

TEST_F(TempCudaProblem, SourceFamilyNeedsSourceAndLaunches) {
  expect_error(
      with("[seed]", "[[families]]\nname = \"bare\"\nsource = \"families/rowwise.cu\"\n\n[seed]"),
      {"field 'families[2].launches'", "expected at least one [[families.launches]] entry",
       "got nothing"});
  expect_error(
      with("source = \"families/rowwise.cu\"\n", ""),
      {"field 'families[1].source'", "expected the family's source template", "got nothing"});
  expect_error(with("name = \"rowwise\"\n", "name = \"rowwise\"\ngemm = { a = \"x\" }\n"),
               {"field 'families[1].gemm'", "expected no 'gemm' without library = \"cublaslt\"",
                "got a table"});
}

TEST_F(TempCudaProblem, LibraryFamilyHasNoSourceLaunchesOrWorkspace) {
  expect_error(with("library = \"cublaslt\"\n",
                    "library = \"cublaslt\"\nsource = \"families/rowwise.cu\"\n"),
               {"field 'families[0].source'", "expected no 'source' in a library family",
                "got \"families/rowwise.cu\""});
  expect_error(with("library = \"cublaslt\"\n", "library = \"cublaslt\"\nworkspace = \"0\"\n"),
               {"field 'families[0].workspace'", "expected no 'workspace' in a library family"});
  expect_error(with("[[families.knobs]]\nname = \"HEUR\"",
                    "[[families.launches]]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\n\n"
                    "[[families.knobs]]\nname = \"HEUR\""),
               {"field 'families[0].launches'", "expected no 'launches' in a library family",
                "got an array"});
}

TEST_F(TempCudaProblem, OnlyCublasltIsALibrary) {
  expect_error(with("library = \"cublaslt\"", "library = \"cublas\""),
               {"field 'families[0].library'", "expected \"cublaslt\"", "got \"cublas\""});
  expect_error(with("library = \"cublaslt\"", "library = 1"),
               {"field 'families[0].library'", "expected \"cublaslt\"", "got 1"});
}

TEST_F(TempCudaProblem, LibraryFamilyNeedsAGemm) {
  const std::string gemm =
      "gemm = { a = \"x\", b = \"w\", c = \"residual\", d = \"y\", m = \"rows\", n = \"cols\", "
      "k = \"cols\" }\n";
  expect_error(with(gemm, ""), {"field 'families[0].gemm'",
                                "expected a table gemm = { a, b, c, d, m, n, k }", "got nothing"});
  expect_error(with(gemm, "gemm = \"x @ w\"\n"), {"field 'families[0].gemm'", "got \"x @ w\""});
  expect_error(with("c = \"residual\", d = \"y\"", "c = \"residual\", e = \"y\""),
               {"field 'families[0].gemm.e'", "unknown field", "a, b, c, d, m, n, k"});
}

TEST_F(TempCudaProblem, GemmNamesTensorsAndAxes) {
  expect_error(with("a = \"x\"", "a = \"xx\""),
               {"field 'families[0].gemm.a'", "expected the name of an input (x, residual, w)",
                "got \"xx\""});
  expect_error(with("d = \"y\"", "d = \"x\""),
               {"field 'families[0].gemm.d'", "expected the name of an output (y)", "got \"x\""});
  expect_error(with("c = \"residual\"", "c = \"y\""),
               {"field 'families[0].gemm.c'", "an input", "or \"\" (none)", "got \"y\""});
  expect_error(with("m = \"rows\"", "m = \"batch\""),
               {"field 'families[0].gemm.m'", "expected a declared axis (one of rows, cols)",
                "got \"batch\""});
  expect_error(with(", k = \"cols\" }", " }"),
               {"field 'families[0].gemm.k'", "expected a declared axis", "got nothing"});
}

TEST_F(TempCudaProblem, GemmShapesAndDtypes) {
  expect_error(with("a = \"x\"", "a = \"w\""),
               {"field 'families[0].gemm.a'", "expected a tensor of shape [m, k] = [rows, cols]",
                "got \"w\" of shape [cols, cols]"});
  expect_error(with("b = \"w\"", "b = \"x\""),
               {"field 'families[0].gemm.b'", "expected a tensor of shape [n, k] = [cols, cols]",
                "got \"x\" of shape [rows, cols]"});
  expect_error(with("name = \"w\"\ndtype = \"bf16\"", "name = \"w\"\ndtype = \"f16\""),
               {"field 'families[0].gemm.b'", "expected a tensor of gemm.a's dtype \"bf16\"",
                "got \"w\" of dtype \"f16\""});
  // y aliases residual: with no c the library would not accumulate over it.
  expect_error(
      with("c = \"residual\"", "c = \"\""),
      {"field 'families[0].gemm.d'", "aliases gemm.c", "got \"y\", an alias of \"residual\""});
}

TEST_F(TempCudaProblem, LibraryKnobsAreCublasltConfigurations) {
  expect_error(with("name = \"TILE\"", "name = \"TILES\""),
               {"field 'families[0].knobs[1].name'", "expected a cuBLASLt knob (HEUR, TILE",
                "got \"TILES\""});
  expect_error(with("values = [\"auto\", \"128x256\"]", "values = [\"auto\", \"128x\"]"),
               {"field 'families[0].knobs[1].values[1]'",
                "expected \"auto\" or a CTA tile MxN such as \"128x256\"", "got \"128x\""});
  expect_error(
      with("values = [\"0\", \"1\", \"7\"]", "values = [\"0\", \"1\", \"8\"]"),
      {"field 'families[0].knobs[0].values[2]'", "expected an integer from 0 to 7", "got \"8\""});
}

TEST_F(TempCudaProblem, ExpressionFormIsCheckedWithItsField) {
  expect_error(
      with("shared = \"THREADS * VEC * 4\"", "shared = \"ceil(THREADS)\""),
      {"field 'families[1].launches[0].shared'",
       "expected an arithmetic expression over the axes (rows, cols), the family's integer "
       "knobs (THREADS, VEC) and the device's sm_count",
       "got \"ceil(THREADS)\"", "unknown function 'ceil' at position 1"});
  expect_error(with("grid = [\"cdiv(rows, 4)\", 2]", "grid = [\"cdiv(rows, 4)\", \"2 *\"]"),
               {"field 'families[1].launches[0].grid[1]'", "got \"2 *\"", "got end of expression"});
  expect_error(with("workspace = \"rows * 4\"", "workspace = \"rows * ROWS\""),
               {"field 'families[1].workspace'", "got \"rows * ROWS\"",
                "unknown name 'ROWS' at position 8"});
}

TEST_F(TempCudaProblem, NonIntegerKnobInExpression) {
  expect_error(with("block = [\"THREADS\"]", "block = [\"EXP\"]"),
               {"field 'families[1].launches[0].block[0]'", "unknown name 'EXP' at position 1",
                "knob 'EXP' has non-integer values (\"accurate\", \"fast\") and cannot appear in "
                "an expression"});
}

TEST_F(TempCudaProblem, KnobExtremesAreChecked) {
  // The last value of THREADS: a block of 2048 threads.
  expect_error(
      with("values = [\"128\", \"256\", \"1024\"]", "values = [\"128\", \"256\", \"2048\"]"),
      {"field 'families[1].launches[0].block[0]'", "expected a positive integer of at most 1024",
       "got \"THREADS\" = 2048 for workload 'small' at knobs EXP=accurate, THREADS=2048, "
       "VEC=4"});
  // The first value of VEC: cdiv by zero.
  expect_error(with("values = [1, 2, 4, 8]", "values = [0, 1, 2, 4, 8]"),
               {"field 'families[1].launches[1].grid[0]'",
                "expected an expression that evaluates for this workload",
                "got \"cdiv(rows * cols, THREADS * VEC)\"", "division by zero in cdiv",
                "for workload 'small' at knobs EXP=accurate, THREADS=256, VEC=0"});
}

TEST_F(TempCudaProblem, LaunchValuesAreCheckedForEveryWorkload) {
  expect_error(with("\"cdiv(rows, 4)\"", "\"rows - 4\""),
               {"field 'families[1].launches[0].grid[0]'", "expected a positive integer",
                "got \"rows - 4\" = 0 for workload 'small' at knobs"});
  // Only the second workload fails: a block y of cols / 128 is 2 for 'small' (512 threads) and
  // 32 for 'large' (8192 threads).
  expect_error(
      with("block = [\"min(THREADS, 512)\", 2]", "block = [\"min(THREADS, 512)\", \"cols / 128\"]"),
      {"field 'families[1].launches[1].block'", "expected at most 1024 threads per block",
       "got 256 x 32 x 1 = 8192 for workload 'large'"});
  expect_error(with("\"cdiv(rows, 4)\"", "\"rows / 3\""),
               {"field 'families[1].launches[0].grid[0]'", "use cdiv(a, b)",
                "got \"rows / 3\" = 1.333", "for workload 'small'"});
  expect_error(with("shared = \"THREADS * VEC * 4\"", "shared = \"-1\""),
               {"field 'families[1].launches[0].shared'", "expected a number of bytes >= 0",
                "got \"-1\" = -1 for workload 'small'"});
}

TEST_F(TempCudaProblem, NegativeWorkspace) {
  expect_error(with("workspace = \"rows * 4\"", "workspace = \"rows * 4 - 100\""),
               {"field 'families[1].workspace'",
                "expected a number of bytes: an integer in [0, 1099511627776]",
                "got \"rows * 4 - 100\" = -84 for workload 'small'"});
  expect_error(
      with("workspace = \"rows * 4\"", "workspace = \"rows * 1099511627776\""),
      {"field 'families[1].workspace'",
       "expected a number of bytes: an integer in [0, 1099511627776]", "for workload 'small'"});
  expect_error(with("workspace = \"rows * 4\"", "workspace = 2.5"),
               {"field 'families[1].workspace'", "a byte count", "got 2.5"});
}

// ---------------------------------------------------------------------------------------------
// Family constraints and tensor maps

constexpr const char* kMaps = R"toml(
[[families.tensor_maps]]
tensor = "x"
box = ["VEC * 2", "64"]
swizzle = 128

[[families.tensor_maps]]
tensor = "y"
box = [1, 64]
l2_promotion = 256
oob_fill = "nan"
)toml";

std::string with_maps(const std::string& base, const std::string& maps) {
  std::string s = base;
  const size_t at = s.find("\n[seed]");
  s.insert(at, maps);
  return s;
}

TEST_F(TempCudaProblem, TensorMapsResolvePerWorkloadInnermostFirst) {
  auto p = load(with_maps(kValidCuda, kMaps));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const Family& f = p->families[1];
  ASSERT_EQ(f.tensor_maps.size(), 2u);
  EXPECT_EQ(f.tensor_maps[0].tensor, "x");
  EXPECT_EQ(f.tensor_maps[1].oob_fill, "nan");
  auto knobs = f.default_variant().knobs;  // THREADS 256, VEC 4
  auto maps = resolve_tensor_maps(*p, f, p->workloads[1], knobs, check_device_names());
  ASSERT_TRUE(maps.ok()) << maps.status().to_string();
  ASSERT_EQ(maps->size(), 2u);
  const ResolvedTensorMap& x = (*maps)[0];
  EXPECT_FALSE(x.output);
  EXPECT_EQ(x.index, 0);
  EXPECT_EQ(x.dims, (std::vector<uint64_t>{4096, 1000}));  // cols, rows
  EXPECT_EQ(x.strides, (std::vector<uint64_t>{4096 * 2}));
  EXPECT_EQ(x.box, (std::vector<uint32_t>{64, 8}));  // 64 along cols, VEC * 2 rows
  EXPECT_EQ(x.element_strides, (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(x.swizzle, 128u);
  EXPECT_EQ(x.l2_promotion, 128u);
  const ResolvedTensorMap& y = (*maps)[1];
  EXPECT_TRUE(y.output);
  EXPECT_EQ(y.index, 0);
  EXPECT_EQ(y.l2_promotion, 256u);
  EXPECT_TRUE(y.nan_fill);
}

TEST_F(TempCudaProblem, TensorMapsBreakingTmaRulesAreRefusedNamingTheField) {
  expect_error(with_maps(kValidCuda, edit(kMaps, "\"64\"", "\"THREADS * 2\"")),
               {"field 'families[1].tensor_maps[0].box[1]'", "an integer from 1 to 256",
                "\"THREADS * 2\" = 512"});
  expect_error(with_maps(kValidCuda, edit(kMaps, "\"64\"", "\"THREADS / 64\"")),
               {"field 'families[1].tensor_maps[0].box[1]'",
                "an innermost box of a multiple of 16 bytes", "4 elements of 2 bytes"});
  expect_error(with_maps(kValidCuda, edit(kMaps, "swizzle = 128", "swizzle = 32")),
               {"field 'families[1].tensor_maps[0].box[1]'", "at most the swizzle span (32 bytes)",
                "128 bytes"});
  expect_error(with_maps(kValidCuda, edit(kMaps, "swizzle = 128", "swizzle = 48")),
               {"field 'families[1].tensor_maps[0].swizzle'", "0, 32, 64 or 128"});
  expect_error(with_maps(kValidCuda, edit(kMaps, "tensor = \"x\"", "tensor = \"z\"")),
               {"field 'families[1].tensor_maps[0].tensor'", "an input or output", "got \"z\""});
  expect_error(with_maps(kValidCuda, edit(kMaps, "box = [1, 64]", "box = [64]")),
               {"field 'families[1].tensor_maps[1].box'", "2 extents", "got 1"});
  expect_error(with_maps(kValidCuda, edit(kMaps, "oob_fill = \"nan\"", "oob_fill = \"one\"")),
               {"field 'families[1].tensor_maps[1].oob_fill'", "\"zero\" or \"nan\""});
  expect_error(with_maps(kValidCuda, edit(kMaps, "box = [1, 64]", "box = [1, \"BLOCK\"]")),
               {"field 'families[1].tensor_maps[1].box[1]'", "unknown name 'BLOCK'"});
  // Rows of an odd number of bf16 elements are not 16-byte strides.
  expect_error(with_maps(edit(kValidCuda, "axes = { rows = 1000, cols = 4096 }",
                              "axes = { rows = 1000, cols = 4095 }"),
                         kMaps),
               {"field 'families[1].tensor_maps[0].tensor'", "multiples of 16 bytes", "8190 bytes",
                "for workload 'large'"});
  // A library family has no kernels to take maps.
  expect_error(edit(kValidCuda, "[[families]]\nname = \"rowwise\"",
                    "[[families.tensor_maps]]\ntensor = \"x\"\nbox = [1, 8]\n\n"
                    "[[families]]\nname = \"rowwise\""),
               {"field 'families[0].tensor_maps'", "no 'tensor_maps' in a library family"});
}

TEST_F(TempCudaProblem, SmCountNamesTheDeviceInLaunchExpressions) {
  auto p = load(edit(kValidCuda, "grid = [\"cdiv(rows, 4)\", 2]",
                     "grid = [\"min(cdiv(rows, 4), sm_count)\", 2]"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const Family& f = p->families[1];
  auto r =
      resolve_launches(f.launches, p->workloads[1], f.default_variant().knobs, {{"sm_count", 114}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].grid[0], 114);  // min(250, 114)
  auto r2 = resolve_launches(f.launches, p->workloads[1], f.default_variant().knobs,
                             check_device_names());
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)[0].grid[0], kCheckSmCount);
  // The reference's launches have no device names.
  expect_error(edit(kValidCuda, "grid = [\"rows\"]", "grid = [\"sm_count\"]"),
               {"field 'reference_launches[0].grid[0]'", "unknown name 'sm_count'"});
}

TEST_F(TempCudaProblem, FamilyConstraintsBoundTheSpace) {
  const std::string constrained =
      edit(kValidCuda, "workspace = \"rows * 4\"",
           "workspace = \"rows * 4\"\nconstraints = [\"THREADS * VEC <= 2048\", \"VEC != 2\"]");
  auto p = load(constrained);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const Family& f = p->families[1];
  EXPECT_EQ(f.constraints.size(), 2u);
  auto at = [&](const std::string& threads, const std::string& vec) {
    auto k = f.default_variant().knobs;
    k["THREADS"] = threads;
    k["VEC"] = vec;
    return f.constraint_violation(k, p->integer_params());
  };
  EXPECT_EQ(at("256", "8"), "");
  expect_in_order(at("1024", "4"),
                  {"family rowwise's constraint \"THREADS * VEC <= 2048\" does not hold",
                   "THREADS=1024", "VEC=4"});
  EXPECT_NE(at("128", "2"), "");
  Candidate c;
  c.base = f.default_variant();
  EXPECT_EQ(p->constraint_violation(c), "");
  c.gates["large"] = f.default_variant();
  c.gates["large"].knobs["VEC"] = "2";
  expect_in_order(p->constraint_violation(c),
                  {"the variant for workload large", "\"VEC != 2\" does not hold"});
  // Knob extremes outside the constraints are not checked as launches (THREADS = 1024 with
  // VEC = 4 would be excluded anyway), and the defaults must satisfy them.
  expect_error(edit(constrained, "\"VEC != 2\"", "\"VEC != 4\""),
               {"field 'families[1].constraints'", "constraints the default knob values satisfy",
                "\"VEC != 4\" does not hold"});
  expect_error(edit(constrained, "\"VEC != 2\"", "\"EXP == 1\""),
               {"field 'families[1].constraints[1]'", "unknown knob 'EXP'"});
  expect_error(edit(constrained, "[seed]\nfamily = \"rowwise\"",
                    "[seed]\nfamily = \"rowwise\"\nknobs = { VEC = 2 }"),
               {"field 'seed.knobs'", "knob values the family's constraints allow",
                "\"VEC != 2\" does not hold"});
}

TEST(CudaShippedProblems, HopperFamilySpaceIsLargeAndItsConstraintsHoldAtTheDefaults) {
  for (const char* name : {"gemm_bf16", "attn_out_proj_bf16"}) {
    auto p = load_problem(kRoot / "problems/gpu" / name);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const Family* f = p->family("hopper");
    ASSERT_NE(f, nullptr) << name;
    uint64_t combinations = 1;
    for (const auto& k : f->knobs) combinations *= k.values.size();
    EXPECT_GE(combinations, 10000u);
    EXPECT_EQ(f->tensor_maps.size(), 5u);  // x and w as A and as B, y for the TMA store
    EXPECT_EQ(f->constraint_violation(f->default_variant().knobs, p->integer_params()), "");
    // Three consumers of 64 rows each cannot split a 128-row tile.
    auto k = f->default_variant().knobs;
    k["CONSUMERS"] = "3";
    EXPECT_NE(f->constraint_violation(k, p->integer_params()), "");
    // Ping-pong: a consumer holds a whole 128 x 256 tile (256 floats a thread: too many), a
    // 128 x 128 one fits; with three consumers each owns whole tiles, so 128 rows are fine.
    auto pp = f->default_variant().knobs;
    pp["PINGPONG"] = "1";
    EXPECT_NE(f->constraint_violation(pp, p->integer_params()), "");
    pp["BLOCK_N"] = "128";
    EXPECT_EQ(f->constraint_violation(pp, p->integer_params()), "");
    pp["CONSUMERS"] = "1";  // ping-pong needs two consumers
    EXPECT_NE(f->constraint_violation(pp, p->integer_params()), "");
    pp["CONSUMERS"] = "3";
    pp["BLOCK_N"] = "64";
    EXPECT_EQ(f->constraint_violation(pp, p->integer_params()), "");
    // The TMA-store epilogue: whole 64-column sub-tiles, not transposed, its buffers counted.
    auto epi = f->default_variant().knobs;
    epi["BLOCK_N"] = "128";
    epi["STAGES"] = "7";  // 7 x 32 KiB fit alone, not with two consumers' 16 KiB of buffers
    EXPECT_EQ(f->constraint_violation(epi, p->integer_params()), "");
    epi["EPILOGUE"] = "1";
    EXPECT_NE(f->constraint_violation(epi, p->integer_params()), "");
    epi["STAGES"] = "6";
    EXPECT_EQ(f->constraint_violation(epi, p->integer_params()), "");
    epi["SWAP_AB"] = "1";
    EXPECT_NE(f->constraint_violation(epi, p->integer_params()), "");
    epi["SWAP_AB"] = "0";
    epi["BLOCK_N"] = "96";
    EXPECT_NE(f->constraint_violation(epi, p->integer_params()), "");
    // Two blocks per SM halve the registers: the default 128 x 256 tile no longer fits, nor do
    // 7 stages of 64 x 64 tiles (half an SM's shared memory).
    auto two = f->default_variant().knobs;
    two["OCCUPANCY"] = "2";
    EXPECT_NE(f->constraint_violation(two, p->integer_params()), "");
    two["BLOCK_M"] = "64";
    two["BLOCK_N"] = "64";
    two["CONSUMERS"] = "1";
    EXPECT_EQ(f->constraint_violation(two, p->integer_params()), "");
    two["STAGES"] = "7";
    EXPECT_NE(f->constraint_violation(two, p->integer_params()), "");
    for (const auto& w : p->workloads) {
      auto maps = resolve_tensor_maps(*p, *f, w, f->default_variant().knobs, check_device_names());
      ASSERT_TRUE(maps.ok()) << maps.status().to_string();
      EXPECT_EQ((*maps)[0].box, (std::vector<uint32_t>{64, 128}));  // an atom of K by BLOCK_M
      EXPECT_EQ((*maps)[1].box, (std::vector<uint32_t>{64, 256}));  // by BLOCK_N
      EXPECT_EQ((*maps)[0].swizzle, 128u);
      EXPECT_EQ((*maps)[4].box, (std::vector<uint32_t>{64, 64}));  // y's 64 x 64 sub-tiles
      EXPECT_EQ((*maps)[4].swizzle, 128u);
      EXPECT_TRUE((*maps)[4].output);
      auto l = resolve_launches(f->launches, w, f->default_variant().knobs, check_device_names());
      ASSERT_TRUE(l.ok()) << l.status().to_string();
      EXPECT_LE((*l)[0].grid[0], kCheckSmCount);  // persistent: at most one block per SM
      EXPECT_EQ((*l)[0].block[0], 384);
      // Not persistent: one block per tile, or per two tiles when two consumers ping-pong.
      auto one = f->default_variant().knobs;
      one["PERSIST"] = "0";
      one["BLOCK_N"] = "128";
      auto two = one;
      two["PINGPONG"] = "1";
      auto l1 = resolve_launches(f->launches, w, one, check_device_names());
      auto l2 = resolve_launches(f->launches, w, two, check_device_names());
      ASSERT_TRUE(l1.ok() && l2.ok());
      EXPECT_EQ((*l2)[0].grid[0], ((*l1)[0].grid[0] + 1) / 2);
      EXPECT_EQ((*l2)[0].shared, (*l1)[0].shared);
      one["EPILOGUE"] = "1";
      auto l3 = resolve_launches(f->launches, w, one, check_device_names());
      ASSERT_TRUE(l3.ok());
      EXPECT_EQ((*l3)[0].shared, (*l1)[0].shared + 2 * 16384);  // two consumers' buffers
      // Two blocks per SM: a persistent grid of up to twice the SMs.
      auto occ = f->default_variant().knobs;
      occ["OCCUPANCY"] = "2";
      occ["BLOCK_M"] = "64";
      occ["BLOCK_N"] = "64";
      occ["CONSUMERS"] = "1";
      ASSERT_EQ(f->constraint_violation(occ, p->integer_params()), "");
      auto single = occ;
      single["OCCUPANCY"] = "1";
      auto every = occ;  // not persistent: one block per tile
      every["PERSIST"] = "0";
      auto lo = resolve_launches(f->launches, w, occ, check_device_names());
      auto ls = resolve_launches(f->launches, w, single, check_device_names());
      auto lt = resolve_launches(f->launches, w, every, check_device_names());
      ASSERT_TRUE(lo.ok() && ls.ok() && lt.ok());
      const int64_t tiles = (*lt)[0].grid[0];
      EXPECT_EQ((*lo)[0].grid[0], std::min<int64_t>(tiles, 2 * kCheckSmCount));
      EXPECT_EQ((*ls)[0].grid[0], std::min<int64_t>(tiles, kCheckSmCount));
    }
  }
}

TEST_F(TempCudaProblem, KnobMayNotShadowAnAxis) {
  expect_error(with("name = \"EXP\"", "name = \"cols\""),
               {"field 'families[1].knobs[2].name'", "not also an axis name", "got \"cols\""});
}

TEST_F(TempCudaProblem, CudaFieldsAreRejectedOnTheHostBackend) {
  ASSERT_TRUE(load(kValidHost).ok()) << load(kValidHost).status().to_string();
  expect_error(host_with("backend = \"host\"\n", "backend = \"host\"\ncompute_dtype = \"f32\"\n"),
               {"field 'compute_dtype'", "expected no 'compute_dtype' with backend = \"host\"",
                "got \"f32\""});
  expect_error(host_with("[[families]]",
                         "[[reference_launches]]\nkernel = \"r\"\ngrid = [1]\nblock = [1]\n\n"
                         "[[families]]"),
               {"field 'reference_launches'", "expected no 'reference_launches' with backend",
                "got an array"});
  expect_error(
      host_with("shape = [\"rows\"]", "shape = [\"rows\"]\nalias = \"x\""),
      {"field 'outputs[0].alias'", "expected no 'alias' with backend = \"host\"", "got \"x\""});
  expect_error(host_with("source = \"families/naive.cpp\"\n",
                         "source = \"families/naive.cpp\"\nworkspace = \"0\"\n"),
               {"field 'families[0].workspace'", "expected no 'workspace' with backend"});
  expect_error(host_with("source = \"families/naive.cpp\"\n",
                         "source = \"families/naive.cpp\"\nlibrary = \"cublaslt\"\n"),
               {"field 'families[0].library'", "expected no 'library' with backend"});
  expect_error(
      host_with("[seed]",
                "[[families.launches]]\nkernel = \"k\"\ngrid = [1]\nblock = [1]\n\n[seed]"),
      {"field 'families[0].launches'", "expected no 'launches' with backend"});
}

}  // namespace
}  // namespace arc::problem
