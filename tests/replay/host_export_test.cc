// arcd export --format cpp: a host problem's best candidate (a base and a gate) exported as
// NAME.h + NAME.cpp, compiled alone with the system compiler (no KernelArc include path, so it
// is self-contained), linked with a driver and the problem's own reference, and checked against
// the reference on every workload with the problem's tolerance.
#include "replay/host_export.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "problem/problem.h"
#include "tests/replay/synthetic_run.h"
#include "tests/scratch.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  fs::path p = testing::scratch_path("host-export", name);
  fs::create_directories(p);
  return p;
}

using testing::slurp;

// Runs a shell command, its output into `log`; true when it exits 0.
bool sh(const std::string& cmd, const fs::path& log) {
  return std::system((cmd + " > " + log.string() + " 2>&1").c_str()) == 0;
}

// A driver for problem `p`: every workload's inputs drawn in their declared ranges, the export
// run, the reference run on the same inputs in double, every output compared with the
// problem's tolerance. Prints one line per workload; exits 0 when all match.
std::string driver(const problem::Problem& p, const std::string& name) {
  std::ostringstream d;
  d << "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <vector>\n"
    << "#include \"" << name << ".h\"\n#include \"eval/host_abi.h\"\n"
    << "extern \"C\" int arc_reference(const arc_host_ref_args* a);\n"
    << "static uint64_t state = 88172645463325252ULL;\n"
    << "static double uniform(double lo, double hi) {\n"
    << "  state ^= state << 13; state ^= state >> 7; state ^= state << 17;\n"
    << "  return lo + (hi - lo) * (double)(state >> 11) / 9007199254740992.0;\n}\n"
    << "static int check(const char* workload, const long long* axes, const long long* in_n,\n"
    << "                 const double* lo, const double* hi, const long long* out_n) {\n"
    << "  const int n_in = " << p.inputs.size() << ", n_out = " << p.outputs.size()
    << ", n_axes = " << p.axes.size() << ";\n"
    << "  std::vector<std::vector<float>> in(n_in), out(n_out);\n"
    << "  std::vector<std::vector<double>> in_d(n_in), ref(n_out);\n"
    << "  std::vector<const float*> ip; std::vector<float*> op;\n"
    << "  std::vector<const double*> ipd; std::vector<double*> opd;\n"
    << "  for (int i = 0; i < n_in; ++i) {\n"
    << "    in[i].resize(in_n[i]); in_d[i].resize(in_n[i]);\n"
    << "    for (long long e = 0; e < in_n[i]; ++e) {\n"
    << "      in[i][e] = (float)uniform(lo[i], hi[i]); in_d[i][e] = in[i][e];\n    }\n"
    << "    ip.push_back(in[i].data()); ipd.push_back(in_d[i].data());\n  }\n"
    << "  for (int o = 0; o < n_out; ++o) {\n"
    << "    out[o].assign(out_n[o], NAN); ref[o].assign(out_n[o], 0.0);\n"
    << "    op.push_back(out[o].data()); opd.push_back(ref[o].data());\n  }\n"
    << "  const int rc = " << name << "_run(ip.data(), op.data(), axes);\n"
    << "  if (rc != 0) { printf(\"%s: " << name << "_run returned %d\\n\", workload, rc); "
    << "return 1; }\n"
    << "  int64_t ax[8] = {0};\n  for (int a = 0; a < n_axes; ++a) ax[a] = axes[a];\n"
    << "  const arc_host_ref_args r = {ipd.data(), n_in, opd.data(), n_out, ax, n_axes};\n"
    << "  if (arc_reference(&r) != 0) { printf(\"%s: the reference failed\\n\", workload); "
    << "return 1; }\n"
    << "  for (int o = 0; o < n_out; ++o) {\n    long long matched = 0;\n"
    << "    for (long long e = 0; e < out_n[o]; ++e) {\n"
    << "      const double err = fabs((double)out[o][e] - ref[o][e]);\n"
    << "      if (err <= " << p.tolerance.atol << " + " << p.tolerance.rtol
    << " * fabs(ref[o][e])) ++matched;\n    }\n"
    << "    if ((double)matched < " << p.tolerance.matched_ratio << " * (double)out_n[o]) {\n"
    << "      printf(\"%s: output %d: %lld of %lld within tolerance\\n\", workload, o, matched, "
    << "out_n[o]);\n      return 1;\n    }\n  }\n"
    << "  printf(\"%s: correct (%s)\\n\", workload, " << name << "_plan(axes));\n  return 0;\n}\n"
    << "int main() {\n  int failed = 0;\n";
  for (const auto& w : p.workloads) {
    d << "  {\n    const long long axes[] = {";
    for (size_t a = 0; a < p.axes.size(); ++a) d << (a ? ", " : "") << w.axes.at(p.axes[a]);
    d << "};\n    const long long in_n[] = {";
    for (size_t i = 0; i < p.inputs.size(); ++i) d << (i ? ", " : "") << p.elements(p.inputs[i], w);
    d << "};\n    const double lo[] = {";
    for (size_t i = 0; i < p.inputs.size(); ++i) d << (i ? ", " : "") << p.inputs[i].low;
    d << "}, hi[] = {";
    for (size_t i = 0; i < p.inputs.size(); ++i) d << (i ? ", " : "") << p.inputs[i].high;
    d << "};\n    const long long out_n[] = {";
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      d << (o ? ", " : "") << p.elements(p.outputs[o], w);
    }
    d << "};\n    failed |= check(\"" << w.name << "\", axes, in_n, lo, hi, out_n);\n  }\n";
  }
  d << "  return failed;\n}\n";
  return d.str();
}

// Exports `best` of a host problem with --format cpp, builds it and checks it against the
// reference; `gated`: a workload the gate serves (its line must name variant 1).
void export_build_and_check(const std::string& problem_dir, const problem::Candidate& best,
                            const std::string& gated) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / problem_dir);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  const std::string name = export_name(problem.value());
  const fs::path run =
      testing::synthetic_run(scratch("run-" + name), problem_dir, best, {}, "host: test machine");
  const fs::path out = scratch("cpp-" + name);
  auto written = export_run(run, "cpp", out);
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  ASSERT_EQ(written->size(), 2u);
  const std::string cpp = slurp(out / (name + ".cpp"));
  const std::string h = slurp(out / (name + ".h"));
  EXPECT_NE(h.find("int " + name +
                   "_run(const float* const* inputs, float* const* outputs, "
                   "const long long* axes);"),
            std::string::npos)
      << h;
  EXPECT_NE(cpp.find(best.hash()), std::string::npos);
  EXPECT_EQ(cpp.find("\n#include \"eval/host_abi.h\""), std::string::npos)
      << "the host ABI must be inlined, not included";

  if (!sh("g++ --version", out / "gxx.log")) GTEST_SKIP() << "no g++ on PATH: not compiled";
  // Alone, from its own folder, with the options the run compiled with: self-contained.
  const std::string compile = "cd " + out.string() + " && g++ -O2 -std=c++17 -Wall -Werror -c " +
                              name + ".cpp -o " + name + ".o";
  ASSERT_TRUE(sh(compile, out / "compile.log")) << compile << "\n" << slurp(out / "compile.log");
  std::ofstream(out / "driver.cpp") << driver(problem.value(), name);
  const std::string link = "g++ -O2 -std=c++17 -I" + out.string() + " -I" ARC_SOURCE_DIR " " +
                           (out / "driver.cpp").string() + " " + problem->reference.string() + " " +
                           (out / (name + ".o")).string() + " -o " + (out / "check").string();
  ASSERT_TRUE(sh(link, out / "link.log")) << link << "\n" << slurp(out / "link.log");
  const bool ok = sh((out / "check").string(), out / "run.log");
  const std::string log = slurp(out / "run.log");
  EXPECT_TRUE(ok) << log;
  EXPECT_NE(log.find(gated + ": correct (variant 1: "), std::string::npos) << log;
  std::printf("%s", log.c_str());
}

TEST(HostExport, GatedMatmulCompilesAloneAndMatchesTheReference) {
  problem::Candidate best;
  best.base.family = "blocked";
  best.base.knobs = {{"TILE_M", "32"}, {"VEC", "8"}, {"UNROLL_K", "2"}};
  problem::Variant gate;
  gate.family = "packed";
  gate.knobs = {{"ACC", "double"}, {"TILE_N", "32"}};
  best.gates["m96_n160_k192"] = gate;
  export_build_and_check("problems/host/matmul", best, "m96_n160_k192");
}

TEST(HostExport, GatedSoftmaxCompilesAloneAndMatchesTheReference) {
  problem::Candidate best;
  best.base.family = "online";
  best.base.knobs = {{"VEC", "8"}, {"UNROLL", "2"}};
  problem::Variant gate;
  gate.family = "fused";
  gate.knobs = {{"FUSE_PASSES", "2"}, {"ACC", "double"}};
  best.gates["r2048_c128"] = gate;
  export_build_and_check("problems/host/softmax", best, "r2048_c128");
}

TEST(HostExport, CudaProblemsAreRefusedWithTheReason) {
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/gpu/rowsum_f32");
  ASSERT_TRUE(problem.ok());
  KernelExportInput in;
  in.problem = &problem.value();
  in.candidate = problem->seed;
  auto r = export_cpp(in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--format cpp exports host problems"), std::string::npos);
}

}  // namespace
}  // namespace arc::replay
