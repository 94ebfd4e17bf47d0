// Params and shared sources (problem.toml's [params] and include_dirs) reach what the host
// evaluator compiles: the reference and a family that use both compile and agree, the
// shared source's text is part of the compile key, and a source that needs it fails without it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "eval/host_compiler.h"
#include "eval/host_evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "problem/problem.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class SharedSources : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/arc-shared-sources-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    write(root_ / "common" / "ops" / "affine.h",
          "#pragma once\n// y = SCALE x + SHIFT, the params of the problem.\n"
          "template <typename T> inline T affine(T x) { return T(SCALE) * x + T(SHIFT); }\n");
    write(root_ / "affine" / "problem.toml", R"(name = "affine"
kernel_type = "elementwise"
backend = "host"
axes = ["n"]
reference = "reference.cc"
include_dirs = ["../common"]

[params]
SCALE = 3
SHIFT = 0.5

[[inputs]]
name = "x"
dtype = "f32"
shape = ["n"]

[[outputs]]
name = "y"
dtype = "f32"
shape = ["n"]

[tolerance]
atol = 1e-6
rtol = 1e-6

[cost]
flops = "2 * n"
bytes = "8 * n"

[[workloads]]
name = "n4k"
axes = { n = 4096 }

[[families]]
name = "loop"
source = "loop.cc"

[seed]
family = "loop"
)");
    write(root_ / "affine" / "reference.cc",
          "#include \"eval/host_abi.h\"\n#include \"ops/affine.h\"\n"
          "extern \"C\" int arc_reference(const arc_host_ref_args* a) {\n"
          "  for (int64_t i = 0; i < a->axes[0]; ++i) a->outputs[0][i] = "
          "affine(a->inputs[0][i]);\n  return 0;\n}\n");
    write(root_ / "affine" / "loop.cc",
          "#include \"eval/host_abi.h\"\n#include \"ops/affine.h\"\n"
          "extern \"C\" int arc_kernel(const arc_host_args* a) {\n"
          "  for (int64_t i = 0; i < a->axes[0]; ++i) a->outputs[0][i] = "
          "affine(a->inputs[0][i]);\n  return 0;\n}\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(SharedSources, ParamsAndSharedSourcesReachTheReferenceAndTheFamilies) {
  auto p = problem::load_problem(root_ / "affine");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->headers.count("ops/affine.h"), 1u);
  HostEvaluatorOptions o;
  o.cache_dir = root_ / "cache";
  o.worker_path = fs::path(ARC_BINARY_DIR) / "tools" / "arc-eval";
  o.include_root = ARC_SOURCE_DIR;
  HostEvaluator ev(*p, o);
  const problem::Candidate c = p->seed;
  auto compiled = ev.compile(c, c.hash());
  ASSERT_TRUE(compiled.ok) << (compiled.variants.empty() ? "" : compiled.variants[0]->error);
  EXPECT_THAT(compiled.variants[0]->options, HasSubstr("-DSCALE=3"));
  EXPECT_THAT(compiled.variants[0]->options, HasSubstr("-DSHIFT=0.5"));
  EvalRequest req;
  req.candidate = c;
  req.candidate_hash = c.hash();
  req.input_seed = 7;
  req.settings.rounds = 1;
  req.settings.repetitions = 3;
  auto r = ev.evaluate(req, compiled);
  ASSERT_EQ(r.workloads.size(), 1u);
  EXPECT_EQ(r.workloads[0]->status, fb::WorkloadStatus::OK) << r.workloads[0]->error;
  EXPECT_LE(r.workloads[0]->max_abs_error, 1e-6);  // float beside the double reference
}

TEST_F(SharedSources, TheSharedTextIsPartOfTheCompileKey) {
  HostCompilerOptions o;
  o.cache_dir = root_ / "cache";
  o.include_root = ARC_SOURCE_DIR;
  HostCompiler compiler(o);
  const std::string src = "#include \"k.h\"\nextern \"C\" int arc_value() { return K; }\n";
  auto a = compiler.compile_text(src, {}, {{"k.h", "#define K 1\n"}});
  auto b = compiler.compile_text(src, {}, {{"k.h", "#define K 2\n"}});
  auto again = compiler.compile_text(src, {}, {{"k.h", "#define K 1\n"}});
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_NE(a.key, b.key);
  EXPECT_EQ(again.key, a.key);
  EXPECT_TRUE(again.cached);
  auto none = compiler.compile_text(src, {});
  EXPECT_FALSE(none.ok);
  EXPECT_THAT(none.error, HasSubstr("k.h"));
  auto escape = compiler.compile_text(src, {}, {{"../k.h", "#define K 1\n"}});
  EXPECT_FALSE(escape.ok);
  EXPECT_THAT(escape.error, HasSubstr("not a relative path inside its folder"));
}

}  // namespace
}  // namespace arc::eval
