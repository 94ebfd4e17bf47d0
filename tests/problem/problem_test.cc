// load_problem on the shipped problems and on malformed ones, and the expression evaluator.
#include "problem/problem.h"

#include <atomic>
#include <cmath>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "problem/expression.h"
#include "problem/launch.h"

namespace arc::problem {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = ARC_SOURCE_DIR;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// ---------------------------------------------------------------------------------------------
// Shipped problems

TEST(ShippedProblems, SoftmaxLoads) {
  auto p = load_problem(kRoot / "problems/host/softmax");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->name, "softmax");
  EXPECT_EQ(p->kernel_type, "softmax");
  EXPECT_EQ(p->backend, "host");
  EXPECT_EQ(p->axes, (std::vector<std::string>{"rows", "cols"}));
  ASSERT_EQ(p->inputs.size(), 1u);
  EXPECT_EQ(p->inputs[0].low, -4.0);
  EXPECT_EQ(p->inputs[0].high, 4.0);
  ASSERT_EQ(p->outputs.size(), 1u);
  EXPECT_EQ(p->workloads.size(), 4u);
  EXPECT_TRUE(p->dir.is_absolute());
  EXPECT_EQ(p->file, p->dir / "problem.toml");
  EXPECT_TRUE(p->reference.is_absolute());
  EXPECT_TRUE(fs::exists(p->reference));
  for (const auto& f : p->families) {
    EXPECT_TRUE(f.source.is_absolute()) << f.name;
    EXPECT_TRUE(fs::exists(f.source)) << f.name;
  }
  EXPECT_EQ(p->seed.base.family, "naive");
  EXPECT_TRUE(p->seed.gates.empty());
  const Family* fused = p->family("fused");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(fused->knob("EXP"), nullptr);
  EXPECT_EQ(fused->knob("EXP")->values, (std::vector<std::string>{"std", "fast"}));
  EXPECT_EQ(fused->knob("EXP")->default_value, "std");
  EXPECT_EQ(fused->knob("NOPE"), nullptr);
  const Variant d = fused->default_variant();
  EXPECT_EQ(d.family, "fused");
  EXPECT_EQ(d.knobs.size(), fused->knobs.size());
  const Workload* w = p->workload("r256_c1024");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(p->workload("nope"), nullptr);
  EXPECT_DOUBLE_EQ(*p->flops(*w), 5.0 * 256 * 1024);
  EXPECT_DOUBLE_EQ(*p->bytes(*w), 8.0 * 256 * 1024);
  EXPECT_EQ(p->elements(p->inputs[0], *w), 256 * 1024);
  EXPECT_EQ(p->hash.size(), 64u);
}

TEST(ShippedProblems, MatmulLoads) {
  auto p = load_problem(kRoot / "problems/host/matmul/problem.toml");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->kernel_type, "gemm");
  EXPECT_EQ(p->axes, (std::vector<std::string>{"M", "N", "K"}));
  EXPECT_EQ(p->inputs.size(), 2u);
  EXPECT_EQ(p->workloads.size(), 4u);
  EXPECT_EQ(p->families.size(), 4u);
  EXPECT_EQ(p->seed.base.family, "naive");
  const Workload* w = p->workload("m96_n160_k192");
  ASSERT_NE(w, nullptr);
  EXPECT_DOUBLE_EQ(*p->flops(*w), 2.0 * 96 * 160 * 192);
  EXPECT_DOUBLE_EQ(*p->bytes(*w), 4.0 * (96 * 192 + 192 * 160 + 96 * 160));
  EXPECT_EQ(p->elements(p->inputs[0], *w), 96 * 192);
  EXPECT_EQ(p->elements(p->inputs[1], *w), 192 * 160);
  EXPECT_EQ(p->elements(p->outputs[0], *w), 96 * 160);
}

TEST(ShippedProblems, FolderAndFileGiveTheSameProblem) {
  auto a = load_problem(kRoot / "problems/host/softmax");
  auto b = load_problem(kRoot / "problems/host/softmax/problem.toml");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->hash, b->hash);
  auto c = load_problem(kRoot / "problems/host/matmul");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->hash, c->hash);
}

TEST(ShippedProblems, SeedsAreTheirBaselineFamilies) {
  for (const char* name : {"softmax", "matmul"}) {
    auto p = load_problem(kRoot / "problems/host" / name);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const Family* f = p->family(p->seed.base.family);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(p->seed.base, f->default_variant()) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Temporary problems

const char* kValid = R"(name = "tiny"
kernel_type = "softmax"
backend = "host"
description = "a test problem"
axes = ["rows", "cols"]
reference = "reference.cpp"

[[inputs]]
name = "x"
dtype = "f32"
shape = ["rows", "cols"]
init = "uniform"
low = -2.0
high = 2.0

[[outputs]]
name = "y"
dtype = "f32"
shape = ["rows", "cols"]

[tolerance]
atol = 1e-6
rtol = 1e-4
matched_ratio = 1.0

[cost]
flops = "5 * rows * cols"
bytes = "8 * rows * cols"

[[workloads]]
name = "small"
axes = { rows = 4, cols = 8 }

[[workloads]]
name = "medium"
axes = { rows = 16, cols = 32 }

[[workloads]]
name = "large"
axes = { rows = 64, cols = 128 }

[[families]]
name = "naive"
source = "families/naive.cpp"
description = "plain"

[[families.knobs]]
name = "UNROLL"
values = ["1", "2", 4]
default = "2"

[[families.knobs]]
name = "ACC"
values = ["float", "double"]

[[families]]
name = "other"
source = "families/other.cpp"

[seed]
family = "naive"
knobs = { ACC = "double" }
)";

class TempProblem : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("arc_problem_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    write_file(dir_ / "reference.cpp", "// reference\n");
    write_file(dir_ / "families/naive.cpp", "// naive\n");
    write_file(dir_ / "families/other.cpp", "// other\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Result<Problem> load(const std::string& text) {
    write_file(dir_ / "problem.toml", text);
    return load_problem(dir_);
  }

  // kValid with the first occurrence of `from` replaced by `to`.
  static std::string with(const std::string& from, const std::string& to) {
    std::string s = kValid;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << "fixture text lacks: " << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  }

  // The load fails, and the message names the file, then each of `parts` in order.
  void expect_error(const std::string& text, const std::vector<std::string>& parts) {
    auto p = load(text);
    ASSERT_FALSE(p.ok()) << "loaded a malformed problem; expected an error naming "
                         << (parts.empty() ? "" : parts[0]);
    const std::string& m = p.status().message();
    EXPECT_NE(m.find((dir_ / "problem.toml").string()), std::string::npos) << m;
    size_t at = 0;
    for (const auto& part : parts) {
      const size_t found = m.find(part, at);
      EXPECT_NE(found, std::string::npos) << "missing '" << part << "' in: " << m;
      if (found != std::string::npos) at = found + part.size();
    }
  }

  fs::path dir_;
};

TEST_F(TempProblem, ValidProblemLoadsWithSeedDefaultsFilledIn) {
  auto p = load(kValid);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->dir, fs::absolute(dir_).lexically_normal());
  EXPECT_EQ(p->families.size(), 2u);
  const Knob* unroll = p->families[0].knob("UNROLL");
  ASSERT_NE(unroll, nullptr);
  EXPECT_EQ(unroll->values, (std::vector<std::string>{"1", "2", "4"}));  // 4 was an integer
  EXPECT_EQ(unroll->default_value, "2");
  EXPECT_EQ(p->families[0].knob("ACC")->default_value, "float");  // first value by default
  EXPECT_EQ(p->seed.base.family, "naive");
  EXPECT_EQ(p->seed.base.knobs,
            (std::map<std::string, std::string>{{"ACC", "double"}, {"UNROLL", "2"}}));
  EXPECT_EQ(p->families[1].source, fs::absolute(dir_ / "families/other.cpp").lexically_normal());
  EXPECT_TRUE(p->families[1].knobs.empty());
}

TEST_F(TempProblem, OptionalFieldsTakeTheirDefaults) {
  std::string text = with("backend = \"host\"\n", "");
  text = text.substr(0, text.find("[tolerance]")) + text.substr(text.find("[cost]"));
  auto p = load(text);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->backend, "host");
  EXPECT_EQ(p->tolerance.atol, Tolerance{}.atol);
  EXPECT_EQ(p->tolerance.matched_ratio, 1.0);
}

TEST_F(TempProblem, HashCoversEveryReferencedFile) {
  auto a = load(kValid);
  ASSERT_TRUE(a.ok());
  auto same = load(kValid);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(a->hash, same->hash);
  write_file(dir_ / "families/other.cpp", "// other, edited\n");
  auto b = load(kValid);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->hash, b->hash);
  write_file(dir_ / "reference.cpp", "// reference, edited\n");
  auto c = load(kValid);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(b->hash, c->hash);
  auto d = load(with("a test problem", "another description"));
  ASSERT_TRUE(d.ok());
  EXPECT_NE(c->hash, d->hash);
}

TEST_F(TempProblem, MissingFileIsNotFound) {
  auto p = load_problem(dir_ / "nope");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kNotFound);
  auto q = load_problem(dir_);  // a folder without problem.toml
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("problem.toml"), std::string::npos);
}

TEST_F(TempProblem, TomlSyntaxErrorNamesFileAndLine) {
  expect_error(with("axes = [\"rows\", \"cols\"]", "axes = [\"rows\", \"cols\""),
               {"problem.toml:", "TOML syntax error"});
}

TEST_F(TempProblem, MissingRequiredField) {
  expect_error(with("name = \"tiny\"\n", ""), {"field 'name'", "expected", "got nothing"});
}

TEST_F(TempProblem, UnknownFieldIsRejected) {
  expect_error(with("description =", "descripton ="),
               {"field 'descripton'", "unknown field", "description"});
}

TEST_F(TempProblem, EmptyKernelType) {
  expect_error(with("kernel_type = \"softmax\"", "kernel_type = \"\""),
               {"field 'kernel_type'", "expected a non-empty kernel type", "got \"\""});
}

TEST_F(TempProblem, BadBackend) {
  expect_error(with("backend = \"host\"", "backend = \"tpu\""),
               {"field 'backend'", "expected \"host\" or \"cuda\"", "got \"tpu\""});
}

TEST_F(TempProblem, EmptyAxes) {
  expect_error(with("axes = [\"rows\", \"cols\"]", "axes = []"),
               {"field 'axes'", "expected a non-empty array of axis names", "got []"});
}

TEST_F(TempProblem, DuplicateAxis) {
  expect_error(with("axes = [\"rows\", \"cols\"]", "axes = [\"rows\", \"rows\"]"),
               {"field 'axes[1]'", "expected a name no other axis has", "got \"rows\" again"});
}

TEST_F(TempProblem, ShapeUsesUndeclaredAxis) {
  expect_error(with("shape = [\"rows\", \"cols\"]", "shape = [\"rows\", \"colz\"]"),
               {"field 'inputs[0].shape[1]'", "expected a declared axis (one of rows, cols)",
                "got \"colz\""});
}

TEST_F(TempProblem, HostDtypeMustBeF32) {
  expect_error(with("dtype = \"f32\"", "dtype = \"f16\""),
               {"field 'inputs[0].dtype'", "expected \"f32\"", "got \"f16\""});
}

TEST_F(TempProblem, BadInitAndRange) {
  expect_error(
      with("init = \"uniform\"", "init = \"gaussian\""),
      {"field 'inputs[0].init'", "expected \"uniform\" or \"normal\"", "got \"gaussian\""});
  expect_error(with("low = -2.0", "low = 3.0"),
               {"field 'inputs[0].high'", "expected a number greater than low"});
}

TEST_F(TempProblem, WorkloadAxisNotAnInteger) {
  // The example from docs/problem-format.md, verbatim.
  expect_error(with("rows = 64, cols = 128", "rows = 64, cols = 1.5"),
               {"field 'workloads[2].axes.cols': expected an integer in [1, 1099511627776], or an "
                "expression",
                "got 1.5"});
  // A string is an expression over the other axes; a name that is none is reported.
  expect_error(with("rows = 64, cols = 128", "rows = 64, cols = \"abc\""),
               {"field 'workloads[2].axes.cols'", "got \"abc\"", "unknown axis 'abc'"});
}

TEST_F(TempProblem, WorkloadAxisNotPositive) {
  expect_error(
      with("rows = 4, cols = 8", "rows = 0, cols = 8"),
      {"field 'workloads[0].axes.rows'", "expected an integer in [1, 1099511627776]", "got 0"});
  expect_error(
      with("rows = 4, cols = 8", "rows = 4.5, cols = 8"),
      {"field 'workloads[0].axes.rows'", "expected an integer in [1, 1099511627776]", "got 4.5"});
}

TEST_F(TempProblem, WorkloadMissingAxis) {
  expect_error(with("rows = 16, cols = 32", "rows = 16"),
               {"field 'workloads[1].axes.cols'", "expected an integer in [1, 1099511627776]",
                "got nothing"});
}

TEST_F(TempProblem, WorkloadUnknownAxis) {
  expect_error(with("rows = 16, cols = 32", "rows = 16, cols = 32, depth = 2"),
               {"field 'workloads[1].axes.depth'", "unknown axis", "rows, cols"});
}

TEST_F(TempProblem, DuplicateWorkloadName) {
  expect_error(with("name = \"medium\"", "name = \"small\""),
               {"field 'workloads[1].name'", "expected a name no other workload has",
                "got \"small\" again"});
}

TEST_F(TempProblem, NoWorkloads) {
  std::string text = kValid;
  for (size_t at; (at = text.find("[[workloads]]")) != std::string::npos;) {
    text.erase(at, text.find("\n\n", at) + 2 - at);
  }
  expect_error(text, {"field 'workloads'", "expected at least one [[workloads]] entry"});
}

TEST_F(TempProblem, NegativeTolerance) {
  expect_error(with("atol = 1e-6", "atol = -1e-6"),
               {"field 'tolerance.atol'", "expected a number in [0, 1e+06]", "got -1e-06"});
  expect_error(
      with("rtol = 1e-4", "rtol = \"tight\""),
      {"field 'tolerance.rtol'", "expected a number in [0, 0.5]", "got a string (\"tight\")"});
}

TEST_F(TempProblem, MatchedRatioOutOfRange) {
  expect_error(with("matched_ratio = 1.0", "matched_ratio = 0.0"),
               {"field 'tolerance.matched_ratio'", "expected a number in (0, 1]", "got 0"});
  expect_error(with("matched_ratio = 1.0", "matched_ratio = 1.5"),
               {"field 'tolerance.matched_ratio'", "expected a number in (0, 1]", "got 1.5"});
}

TEST_F(TempProblem, CostExpressionWithBadToken) {
  expect_error(with("\"5 * rows * cols\"", "\"5 * rows ^ cols\""),
               {"field 'cost.flops'", "expected an arithmetic expression",
                "got \"5 * rows ^ cols\"", "'^'"});
}

TEST_F(TempProblem, CostExpressionWithUndeclaredAxis) {
  expect_error(
      with("\"8 * rows * cols\"", "\"8 * rows * colz\""),
      {"field 'cost.bytes'", "expected an arithmetic expression over the axes (rows, cols)",
       "unknown axis 'colz'"});
}

TEST_F(TempProblem, CostMissing) {
  expect_error(with("bytes = \"8 * rows * cols\"\n", ""),
               {"field 'cost.bytes'", "expected an arithmetic expression", "got nothing"});
}

TEST_F(TempProblem, MissingReferenceFile) {
  expect_error(with("reference = \"reference.cpp\"", "reference = \"ref.cpp\""),
               {"field 'reference'", "expected an existing file relative to", "got \"ref.cpp\""});
}

TEST_F(TempProblem, MissingFamilySource) {
  expect_error(
      with("families/other.cpp", "families/gone.cpp"),
      {"field 'families[1].source'", "expected an existing file", "\"families/gone.cpp\""});
}

TEST_F(TempProblem, DuplicateFamilyName) {
  expect_error(
      with("name = \"other\"", "name = \"naive\""),
      {"field 'families[1].name'", "expected a name no other family has", "got \"naive\" again"});
}

TEST_F(TempProblem, EmptyKnobValues) {
  expect_error(
      with("values = [\"1\", \"2\", 4]", "values = []"),
      {"field 'families[0].knobs[0].values'", "expected a non-empty array of values", "got []"});
}

TEST_F(TempProblem, KnobDefaultNotInValues) {
  expect_error(with("default = \"2\"", "default = \"8\""),
               {"field 'families[0].knobs[0].default'", "expected one of the knob's values",
                "\"1\", \"2\", \"4\"", "got \"8\""});
}

TEST_F(TempProblem, KnobNameNotAnIdentifier) {
  expect_error(with("name = \"UNROLL\"", "name = \"UN-ROLL\""),
               {"field 'families[0].knobs[0].name'", "expected a knob name that is a C identifier",
                "got \"UN-ROLL\""});
  expect_error(with("name = \"UNROLL\"", "name = \"1UNROLL\""),
               {"field 'families[0].knobs[0].name'", "C identifier"});
}

TEST_F(TempProblem, DuplicateKnobValueAndName) {
  expect_error(with("values = [\"1\", \"2\", 4]", "values = [\"1\", \"2\", 2]"),
               {"field 'families[0].knobs[0].values[2]'", "expected a value not already listed"});
  expect_error(with("name = \"ACC\"", "name = \"UNROLL\""),
               {"field 'families[0].knobs[1].name'", "no other knob", "got \"UNROLL\" again"});
}

TEST_F(TempProblem, KnobValueWithSpaces) {
  expect_error(with("values = [\"float\", \"double\"]", "values = [\"float\", \"long double\"]"),
               {"field 'families[0].knobs[1].values[1]'", "without spaces", "got \"long double\""});
}

TEST_F(TempProblem, SeedFamilyUnknown) {
  expect_error(
      with("family = \"naive\"", "family = \"fast\""),
      {"field 'seed.family'", "expected the name of a family (naive, other)", "got \"fast\""});
}

TEST_F(TempProblem, SeedMissing) {
  std::string text = kValid;
  text = text.substr(0, text.find("[seed]"));
  expect_error(text, {"field 'seed'", "expected a table [seed]", "got nothing"});
}

TEST_F(TempProblem, SeedKnobValueInvalid) {
  expect_error(with("ACC = \"double\"", "ACC = \"half\""),
               {"field 'seed.knobs.ACC'", "expected one of \"float\", \"double\"", "got \"half\""});
}

TEST_F(TempProblem, SeedKnobUnknown) {
  expect_error(with("ACC = \"double\"", "VEC = \"4\""),
               {"field 'seed.knobs.VEC'", "family 'naive' has no such knob", "UNROLL, ACC"});
}

TEST_F(TempProblem, WrongTypes) {
  expect_error(with("axes = [\"rows\", \"cols\"]", "axes = \"rows\""),
               {"field 'axes'", "expected a non-empty array", "got \"rows\""});
  expect_error(with("[[outputs]]\nname = \"y\"", "[[outputs]]\nname = 7"),
               {"field 'outputs[0].name'", "expected a tensor name", "got 7"});
  expect_error(std::string("inputs2 = 1\n") + kValid, {"field 'inputs2'", "unknown field"});
}

TEST_F(TempProblem, DuplicateTensorName) {
  expect_error(
      with("[[outputs]]\nname = \"y\"", "[[outputs]]\nname = \"x\""),
      {"field 'outputs[0].name'", "expected a name no other tensor has", "got \"x\" again"});
}

// ---------------------------------------------------------------------------------------------
// Expressions

const std::map<std::string, int64_t> kAxes = {{"rows", 256}, {"cols", 1024}, {"K", 3}};

double eval_ok(const std::string& e) {
  auto r = evaluate_expression(e, kAxes);
  EXPECT_TRUE(r.ok()) << e << ": " << r.status().to_string();
  return r.ok() ? *r : std::nan("");
}

std::string eval_error(const std::string& e) {
  auto r = evaluate_expression(e, kAxes);
  EXPECT_FALSE(r.ok()) << e << " evaluated to " << (r.ok() ? *r : 0.0);
  return r.ok() ? "" : r.status().message();
}

TEST(Expression, Arithmetic) {
  EXPECT_DOUBLE_EQ(eval_ok("5 * rows * cols"), 5.0 * 256 * 1024);
  EXPECT_DOUBLE_EQ(eval_ok("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(eval_ok("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(eval_ok("10 - 4 - 3"), 3);  // left associative
  EXPECT_DOUBLE_EQ(eval_ok("64 / 4 / 2"), 8);
  EXPECT_DOUBLE_EQ(eval_ok("-K + 10"), 7);
  EXPECT_DOUBLE_EQ(eval_ok("--K"), 3);
  EXPECT_DOUBLE_EQ(eval_ok("-(K * 2)"), -6);
  EXPECT_DOUBLE_EQ(eval_ok("rows * -2"), -512);
  EXPECT_DOUBLE_EQ(eval_ok("2.5 * K"), 7.5);
  EXPECT_DOUBLE_EQ(eval_ok(".5 * 4"), 2);
  EXPECT_DOUBLE_EQ(eval_ok("1e3 + 2.5E-1"), 1000.25);
  EXPECT_DOUBLE_EQ(eval_ok("  4 * ( rows + cols )  "), 4.0 * 1280);
  EXPECT_DOUBLE_EQ(eval_ok("4 * (rows * K + K * cols + rows * cols)"),
                   4.0 * (256 * 3 + 3 * 1024 + 256 * 1024));
  EXPECT_DOUBLE_EQ(eval_ok("7"), 7);
}

TEST(Expression, ErrorsNameTheBadToken) {
  EXPECT_NE(eval_error("5 * rows +").find("got end of expression"), std::string::npos);
  EXPECT_NE(eval_error("(rows + 1").find("expected ')' to close '(' at position 1"),
            std::string::npos);
  EXPECT_NE(eval_error("rows $ 2").find("unexpected character '$' at position 6"),
            std::string::npos);
  EXPECT_NE(eval_error("rows * colz").find("unknown axis 'colz' at position 8"), std::string::npos);
  EXPECT_NE(eval_error("rows / (K - 3)").find("division by zero"), std::string::npos);
  EXPECT_NE(eval_error("").find("got end of expression"), std::string::npos);
  EXPECT_NE(eval_error("2 3").find("unexpected '3' at position 3"), std::string::npos);
  EXPECT_NE(eval_error("rows)").find("unexpected ')' at position 5"), std::string::npos);
  EXPECT_NE(eval_error("* rows").find("got '*' at position 1"), std::string::npos);
  EXPECT_NE(eval_error("1e400").find("out of range"), std::string::npos);
  EXPECT_NE(eval_error("1e300 * 1e300").find("not finite"), std::string::npos);
  // Every error quotes the expression.
  EXPECT_NE(eval_error("rows +").find("expression \"rows +\""), std::string::npos);
}

TEST(Expression, DeepNestingIsAnErrorNotACrash) {
  std::string e(10000, '(');
  e += "1";
  e += std::string(10000, ')');
  EXPECT_NE(eval_error(e).find("nested deeper"), std::string::npos);
  std::string minus(10000, '-');
  EXPECT_NE(eval_error(minus + "1").find("nested deeper"), std::string::npos);
}

TEST(ProblemElements, ScalarsAndMissingAxes) {
  Problem p;
  Workload w{"w", {{"a", 3}, {"b", 5}}, {}};
  TensorSpec scalar;
  EXPECT_EQ(p.elements(scalar, w), 1);
  TensorSpec t;
  t.shape = {"a", "b", "a"};
  EXPECT_EQ(p.elements(t, w), 45);
  t.shape = {"a", "c"};
  EXPECT_EQ(p.elements(t, w), 0);
}

}  // namespace
}  // namespace arc::problem

// ---------------------------------------------------------------------------------------------
// Format v2: shape and axis expressions, constraints, params, shared include folders

namespace arc::problem {
namespace {

TEST_F(TempProblem, ShapesAndWorkloadAxesMayBeExpressions) {
  std::string text =
      with("shape = [\"rows\", \"cols\"]\ninit", "shape = [\"rows\", \"2 * cols\"]\ninit");
  text = text.replace(text.find("rows = 16, cols = 32"), 20, "rows = \"cols / 2\", cols = 32");
  auto p = load(text);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const Workload* w = p->workload("medium");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->axes.at("rows"), 16);
  EXPECT_EQ(p->elements(p->inputs[0], *w), 16 * 64);
  EXPECT_EQ(p->elements(p->outputs[0], *w), 16 * 32);
}

TEST_F(TempProblem, AxisExpressionsThatCannotResolveAreNamed) {
  expect_error(with("rows = 16, cols = 32", "rows = \"cols\", cols = \"rows\""),
               {"field 'workloads[1].axes.", "without cycles", "unknown axis"});
  expect_error(with("rows = 16, cols = 32", "rows = \"cols / 3\", cols = 32"),
               {"field 'workloads[1].axes.rows'", "\"cols / 3\" = 10.66"});
  expect_error(with("shape = [\"rows\", \"cols\"]\ninit", "shape = [\"rows\", \"cols - 8\"]\ninit"),
               {"field 'workloads[0].axes'", "tensor 'x'", "\"cols - 8\" = 0"});
  expect_error(
      with("shape = [\"rows\", \"cols\"]\ninit", "shape = [\"rows\", \"2 * depth\"]\ninit"),
      {"field 'inputs[0].shape[1]'", "unknown axis 'depth'"});
}

TEST_F(TempProblem, ConstraintsHoldForEveryWorkloadOrNameTheWorkload) {
  const std::string ok = with("reference = \"reference.cpp\"",
                              "reference = \"reference.cpp\"\nconstraints = [\"cols % 8 == 0\", "
                              "\"rows <= cols && rows >= 4\"]");
  auto p = load(ok);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->constraints.size(), 2u);
  std::string bad = ok;
  bad.replace(bad.find("rows = 16, cols = 32"), 20, "rows = 16, cols = 36");
  expect_error(bad, {"field 'workloads[1].axes'", "constraints[0] \"cols % 8 == 0\" does not",
                     "rows = 16, cols = 36"});
  expect_error(with("reference = \"reference.cpp\"",
                    "reference = \"reference.cpp\"\nconstraints = [\"cols %% 8\"]"),
               {"field 'constraints[0]'", "\"cols %% 8\""});
}

TEST_F(TempProblem, ParamsBecomeDefinesAndIntegerParamsJoinExpressions) {
  auto p = load(with("reference = \"reference.cpp\"",
                     "reference = \"reference.cpp\"\n[params]\neps = 1e-5\ngroups = 4\nneg = -0.5\n"
                     "flag = true\n") +
                "");
  // [params] must precede the arrays of tables; the fixture's order puts it right after
  // `reference`, which is a top-level key, so this is valid TOML.
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const auto defines = p->param_defines();
  EXPECT_EQ(defines.at("eps"), "1e-05");
  EXPECT_EQ(defines.at("groups"), "4");
  EXPECT_EQ(defines.at("neg"), "(-0.5)");
  EXPECT_EQ(defines.at("flag"), "1");
  const Workload* w = p->workload("small");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->constants.at("groups"), 4);
  EXPECT_EQ(w->constants.count("eps"), 0u);  // not an integer: not in expressions
  Variant v;
  v.family = "naive";
  v.knobs = {{"UNROLL", "2"}};
  const auto all = p->defines_for(v);
  EXPECT_EQ(all.at("UNROLL"), "2");
  EXPECT_EQ(all.at("eps"), "1e-05");
}

TEST_F(TempProblem, ParamsAreCheckedForNamesAndValues) {
  expect_error(
      with("reference = \"reference.cpp\"", "reference = \"reference.cpp\"\n[params]\nrows = 2\n"),
      {"field 'params.rows'", "a name no axis has"});
  expect_error(with("reference = \"reference.cpp\"",
                    "reference = \"reference.cpp\"\n[params]\neps = \"small\"\n"),
               {"field 'params.eps'", "a finite number"});
  expect_error(with("reference = \"reference.cpp\"",
                    "reference = \"reference.cpp\"\n[params]\nUNROLL = 2\n"),
               {"field 'families[0].knobs[0].name'", "a name no parameter has"});
}

TEST_F(TempProblem, IncludeFoldersAreReadAndCountInTheHash) {
  write_file(dir_ / "../arc_shared_include_test" / "vec.h", "#define VEC 4\n");
  write_file(dir_ / "../arc_shared_include_test" / "sub/io.h", "// io\n");
  const std::string text = with("reference = \"reference.cpp\"",
                                "reference = \"reference.cpp\"\n"
                                "include_dirs = [\"../arc_shared_include_test\"]");
  auto p = load(text);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->headers.size(), 2u);
  EXPECT_EQ(p->headers.at("vec.h"), "#define VEC 4\n");
  EXPECT_EQ(p->headers.at("sub/io.h"), "// io\n");
  write_file(dir_ / "../arc_shared_include_test" / "vec.h", "#define VEC 8\n");
  auto q = load(text);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  EXPECT_NE(p->hash, q->hash) << "a shared source's content is part of the problem's identity";
  fs::remove_all(dir_ / "../arc_shared_include_test");
  expect_error(text, {"field 'include_dirs[0]'", "an existing folder"});
}

}  // namespace
}  // namespace arc::problem
