// Every family of the shipped GPU problems (problems/gpu/) compiles with NVRTC for sm_90a at
// its defaults and with each knob at its first and last value (the others at their defaults),
// every kernel its launches name is in the cubin, and every reference compiles. Settings outside
// the family's constraints are not in the search space and are skipped; any other knob extreme
// may be refused only by one of the family's own static_asserts (a declared constraint such as
// "warp tile too large for THREADS", which agents then see as a COMPILE_ERROR naming it); the
// defaults must compile. No GPU needed.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cuda/nvrtc.h"
#include "problem/problem.h"
#include "tests/cuda/hopper_cases.h"
#include "tests/cuda/paths.h"

namespace arc::eval {

using problem::load_problem;
namespace {

using arc::test_paths::source_dir;

namespace fs = std::filesystem;

std::vector<fs::path> gpu_problems() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(source_dir() / "problems" / "gpu")) {
    if (fs::exists(e.path() / "problem.toml")) out.push_back(e.path());
  }
  out.push_back(source_dir() / "tests" / "data" / "gpu" / "faults");
  std::sort(out.begin(), out.end());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A compiler over a fresh cache, removed afterwards: the tests check the compiler, not an
// earlier run's files. `compiler` is empty when no cache folder could be made.
struct FreshCompiler {
  FreshCompiler() {
    char tmpl[] = "/tmp/arc-families-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    dir = tmpl;
    cuda::CompilerOptions o;
    o.cache_dir = dir;
    o.include_root = source_dir();
    compiler.emplace(o);
  }
  ~FreshCompiler() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
  FreshCompiler(const FreshCompiler&) = delete;
  FreshCompiler& operator=(const FreshCompiler&) = delete;
  fs::path dir;
  std::optional<cuda::Compiler> compiler;
};

class ShippedGpuFamilies : public ::testing::TestWithParam<fs::path> {};

TEST_P(ShippedGpuFamilies, CompileAtDefaultsAndKnobExtremes) {
  auto problem = load_problem(GetParam());
  ASSERT_TRUE(problem) << problem.status().to_string();
  ASSERT_EQ(problem->backend, "cuda");
  FreshCompiler fresh;
  ASSERT_TRUE(fresh.compiler);
  cuda::Compiler& compiler = *fresh.compiler;

  std::vector<cuda::Compiler::Job> jobs;
  std::vector<std::string> what;
  std::vector<std::set<std::string>> kernels;
  std::vector<bool> is_default;
  jobs.push_back({read(problem->reference), problem->reference.string(), problem->param_defines(),
                  &problem->headers});
  what.push_back("reference");
  std::set<std::string> ref_kernels;
  for (const auto& l : problem->reference_launches) ref_kernels.insert(l.kernel);
  kernels.push_back(ref_kernels);
  is_default.push_back(true);
  int families = 0;
  for (const auto& f : problem->families) {
    if (!f.library.empty()) continue;
    ++families;
    const std::string text = read(f.source);
    std::set<std::string> names;
    for (const auto& l : f.launches) names.insert(l.kernel);
    std::vector<std::map<std::string, std::string>> settings;
    std::map<std::string, std::string> defaults;
    for (const auto& k : f.knobs) defaults[k.name] = k.default_value;
    settings.push_back(defaults);
    for (const auto& k : f.knobs) {
      for (const std::string& v : {k.values.front(), k.values.back()}) {
        if (v == k.default_value) continue;
        auto s = defaults;
        s[k.name] = v;
        settings.push_back(s);
      }
    }
    for (const auto& s : settings) {
      // A setting the family's constraints exclude is not in the search space.
      if (!f.constraint_violation(s, problem->integer_params()).empty()) continue;
      std::string label = f.name + "{";
      for (const auto& [k, v] : s) label += k + "=" + v + ",";
      label += "}";
      problem::Variant v;
      v.knobs = s;
      jobs.push_back({text, f.source.string(), problem->defines_for(v), &problem->headers});
      what.push_back(label);
      kernels.push_back(names);
      is_default.push_back(s == defaults);
    }
  }
  // A problem whose only families are library families (gemm_fp8) checks its reference alone.
  int library = 0;
  for (const auto& f : problem->families) library += f.library.empty() ? 0 : 1;
  EXPECT_GT(families + library, 0);
  auto cubins = compiler.compile_all(jobs);
  ASSERT_EQ(cubins.size(), jobs.size());
  for (size_t i = 0; i < cubins.size(); ++i) {
    if (!cubins[i].ok && !is_default[i]) {
      // Refused by a declared constraint only: every error line is a static assertion.
      std::istringstream lines(cubins[i].error);
      std::string line;
      int errors = 0, asserts = 0;
      while (std::getline(lines, line)) {
        if (line.find("error:") == std::string::npos) continue;
        ++errors;
        if (line.find("static assertion failed with \"") != std::string::npos) ++asserts;
      }
      EXPECT_TRUE(errors > 0 && errors == asserts)
          << problem->name << " " << what[i] << ": " << cubins[i].error;
      std::printf("refused by the family's constraint: %s %s\n", problem->name.c_str(),
                  what[i].c_str());
      continue;
    }
    EXPECT_TRUE(cubins[i].ok) << problem->name << " " << what[i] << ": " << cubins[i].error;
    if (!cubins[i].ok) continue;
    std::set<std::string> have;
    for (const auto& k : cubins[i].kernels) {
      have.insert(k.name);
      EXPECT_LE(k.registers, 255) << what[i] << " " << k.name;
    }
    for (const auto& want : kernels[i]) {
      EXPECT_TRUE(have.count(want)) << problem->name << " " << what[i] << ": no kernel " << want
                                    << " in the cubin (ptxas report:\n"
                                    << cubins[i].log << ")";
    }
  }
}

// The sm_90 variants the GPU tests run (tests/cuda/hopper_cases.h) are inside their problems'
// search spaces and compile for sm_90a without spills and without the wgmma serialization ptxas
// falls back to when registers of an in-flight wgmma are touched (its C7514 notice).
TEST(HopperCases, AreInTheSearchSpaceAndCompileWithPipelinedWgmma) {
  FreshCompiler fresh;
  ASSERT_TRUE(fresh.compiler);
  cuda::Compiler& compiler = *fresh.compiler;
  std::map<std::string, problem::Problem> problems;
  std::vector<cuda::Compiler::Job> jobs;
  std::vector<std::string> what;
  std::set<std::string> seen;
  auto cases = test_cases::hopper_mechanisms();
  for (const auto& more :
       {test_cases::hopper_pairs(), test_cases::bulk_mechanisms(), test_cases::bulk_pairs()})
    for (const auto& c : more) cases.push_back(c);
  std::vector<std::string> texts;
  texts.reserve(cases.size());
  for (const auto& c : cases) {
    if (problems.count(c.problem) == 0) {
      auto p = load_problem(source_dir() / "problems" / "gpu" / c.problem);
      ASSERT_TRUE(p) << p.status().to_string();
      problems.emplace(c.problem, std::move(*p));
    }
    const problem::Problem& p = problems.at(c.problem);
    const problem::Family* f = p.family(c.family);
    ASSERT_NE(f, nullptr) << c.problem << " " << c.family;
    problem::Variant v = f->default_variant();
    for (const auto& [k, value] : c.knobs) {
      ASSERT_TRUE(v.knobs.count(k)) << c.problem << ": no knob " << k;
      v.knobs[k] = value;
    }
    EXPECT_EQ(f->constraint_violation(v.knobs, p.integer_params()), "")
        << c.problem << " " << v.key();
    if (!seen.insert(c.problem + " " + c.family + " " + v.key()).second) continue;
    texts.push_back(read(f->source));
    jobs.push_back({texts.back(), f->source.string(), p.defines_for(v), &p.headers});
    what.push_back(c.problem + " " + c.family + " " + v.key());
  }
  auto cubins = compiler.compile_all(jobs);
  ASSERT_EQ(cubins.size(), jobs.size());
  for (size_t i = 0; i < cubins.size(); ++i) {
    ASSERT_TRUE(cubins[i].ok) << what[i] << ": " << cubins[i].error;
    EXPECT_EQ(cubins[i].log.find("C7514"), std::string::npos) << what[i] << ":\n" << cubins[i].log;
    EXPECT_EQ(cubins[i].log.find("serialized"), std::string::npos) << what[i] << ":\n"
                                                                   << cubins[i].log;
    ASSERT_EQ(cubins[i].kernels.size(), 1u) << what[i];
    EXPECT_EQ(cubins[i].kernels[0].spill_store_bytes, 0) << what[i] << ":\n" << cubins[i].log;
    EXPECT_EQ(cubins[i].kernels[0].spill_load_bytes, 0) << what[i];
  }
  std::printf("%zu sm_90 variants compiled\n", jobs.size());
}

INSTANTIATE_TEST_SUITE_P(Gpu, ShippedGpuFamilies, ::testing::ValuesIn(gpu_problems()),
                         [](const auto& info) { return info.param.filename().string(); });

}  // namespace
}  // namespace arc::eval
