// The bad-input table: malformed campaign.toml and problem.toml files through the command line
// (`arcd run`, `arcd check`). Every case exits 2, names the file, the field and what was
// expected, and writes nothing: no run directory, no new file beside the input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace arc {
namespace {

namespace fs = std::filesystem;

enum class File { kCampaign, kProblem };
enum class Command { kRun, kCheck };

struct BadInput {
  const char* name;  // the test's name
  File file;         // which file the edit applies to
  const char* from;  // text replaced (must occur in the shipped softmax file) ...
  const char* to;    // ... by this
  const char* field;
  const char* expected;  // what the message says was expected
  Command command = Command::kRun;
};

std::ostream& operator<<(std::ostream& os, const BadInput& c) { return os << c.name; }

// The shipped softmax problem and campaign (problems/host/softmax) with one edit each.
const BadInput kCases[] = {
    // campaign.toml
    {"BudgetNotANumber", File::kCampaign, "budget = 40", "budget = \"forty\"", "campaign.budget",
     "expected a positive integer"},
    {"BudgetZero", File::kCampaign, "budget = 40", "budget = 0", "campaign.budget",
     "expected a positive integer"},
    {"SeedNotAnInteger", File::kCampaign, "seed = 1", "seed = \"one\"", "campaign.seed",
     "a non-negative integer"},
    {"UnknownMode", File::kCampaign, "mode = \"lockstep\"", "mode = \"sideways\"", "campaign.mode",
     "\"async\" or \"lockstep\""},
    {"UnknownDurability", File::kCampaign, "durability = \"sync\"", "durability = \"maybe\"",
     "campaign.durability", "\"sync\" or \"batch\""},
    {"MissingProblemFile", File::kCampaign, "problem = \"problem.toml\"",
     "problem = \"nowhere.toml\"", "campaign.problem", "an existing problem.toml"},
    {"UnknownCampaignField", File::kCampaign, "seed = 1", "seed = 1\ncolour = \"blue\"",
     "campaign.colour", "unknown field"},
    {"RoundsZero", File::kCampaign, "rounds = 3", "rounds = 0", "evaluation.rounds",
     "positive integer"},
    {"TooFewRepetitions", File::kCampaign, "repetitions = 10", "repetitions = 1",
     "evaluation.repetitions", "an integer >= 3"},
    {"UnknownTimingMethod", File::kCampaign, "repetitions = 10",
     "repetitions = 10\ntiming = \"stopwatch\"", "evaluation.timing",
     "expected \"auto\", \"cuda_events\" or \"cupti\""},
    {"TimeoutNotANumber", File::kCampaign, "timeout_s = 20", "timeout_s = \"soon\"",
     "evaluation.timeout_s", "a positive number of seconds"},
    {"TimeoutInfinite", File::kCampaign, "timeout_s = 20", "timeout_s = inf",
     "evaluation.timeout_s", "a positive number of seconds in [0.1, 86400]"},
    {"TimeoutTooSmall", File::kCampaign, "timeout_s = 20", "timeout_s = 1e-9",
     "evaluation.timeout_s", "a positive number of seconds in [0.1, 86400]"},
    {"NegativeMargin", File::kCampaign, "margin = 0.02", "margin = -0.5", "guard.margin",
     "a number in [0, 1)"},
    {"WinsNeitherCountNorUnbounded", File::kCampaign, "wins = 16", "wins = \"lots\"", "memory.wins",
     "a positive integer or \"unbounded\""},
    {"PlateauWindowZero", File::kCampaign, "window = 8", "window = 0", "plateau.window",
     "positive integer"},
    {"UnknownSkill", File::kCampaign, "skill = \"vectorize\"", "skill = \"telepathy\"",
     "agents[0].skill", "a skill folder"},
    {"UnknownAgentBackend", File::kCampaign, "backend = \"builtin\"", "backend = \"oracle\"",
     "agents[0].backend", "builtin"},
    {"AgentNameWithSpaces", File::kCampaign, "name = \"vectorizer\"", "name = \"vec torizer\"",
     "agents[0].name", "letters, digits"},
    {"CampaignTomlSyntax", File::kCampaign, "budget = 40", "budget = [40", "campaign.toml:8:1",
     "TOML syntax error"},
    // problem.toml, through `arcd run` (the campaign's problem) and `arcd check`
    {"NegativeAxisValue", File::kProblem, "axes = { rows = 256, cols = 1024 }",
     "axes = { rows = 256, cols = -3 }", "workloads[1].axes.cols", "positive integer"},
    {"MissingAxisValue", File::kProblem, "axes = { rows = 256, cols = 1024 }",
     "axes = { rows = 256 }", "workloads[1].axes.cols", "got nothing"},
    {"UnknownDtype", File::kProblem, "dtype = \"f32\"", "dtype = \"f128\"", "inputs[0].dtype",
     "expected \"f32\"", Command::kCheck},
    {"ShapeOverAnUnknownAxis", File::kProblem, "shape = [\"rows\", \"cols\"]",
     "shape = [\"rows\", \"depth\"]", "inputs[0].shape[1]", "a declared axis", Command::kCheck},
    {"UnknownInit", File::kProblem, "init = \"uniform\"", "init = \"gaussian\"", "inputs[0].init",
     "\"uniform\" or \"normal\""},
    {"NegativeAtol", File::kProblem, "atol = 1e-6", "atol = -1.0", "tolerance.atol",
     "a number >= 0", Command::kCheck},
    {"MatchedRatioAboveOne", File::kProblem, "matched_ratio = 1.0", "matched_ratio = 1.5",
     "tolerance.matched_ratio", "a number in (0, 1]", Command::kCheck},
    {"CostExpressionCutShort", File::kProblem, "flops = \"5 * rows * cols\"",
     "flops = \"5 * rows *\"", "cost.flops", "an arithmetic expression"},
    {"CostOverAnUnknownName", File::kProblem, "bytes = \"8 * rows * cols\"",
     "bytes = \"8 * rows * depth\"", "cost.bytes", "unknown axis 'depth'", Command::kCheck},
    {"MissingFamilySource", File::kProblem, "source = \"families/naive.cpp\"",
     "source = \"families/nowhere.cpp\"", "families[0].source", "an existing file"},
    {"KnobDefaultNotAmongValues", File::kProblem, "default = \"1\"", "default = \"3\"",
     "families[1].knobs[0].default", "one of the knob's values", Command::kCheck},
    {"UnknownBackend", File::kProblem, "backend = \"host\"", "backend = \"fpga\"", "backend",
     "\"host\" or \"cuda\"", Command::kCheck},
    {"MissingReference", File::kProblem, "reference = \"reference.cpp\"",
     "reference = \"nowhere.cpp\"", "reference", "an existing file"},
    {"KernelTypeNotAString", File::kProblem, "kernel_type = \"softmax\"", "kernel_type = 3",
     "kernel_type", "a kernel type such as", Command::kCheck},
    {"ProblemTomlSyntax", File::kProblem, "name = \"softmax\"", "name = \"softmax",
     "problem.toml:3:16", "TOML syntax error", Command::kCheck},
};

fs::path scratch_root() {
  static const fs::path root =
      fs::temp_directory_path() / ("arc-bad-input-" + std::to_string(::getpid()));
  return root;
}

int run_cli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(ARC_BINARY_DIR) + "/tools/" + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return WEXITSTATUS(::pclose(p));
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files.insert(e.path().string());
  return files;
}

class BadInputTable : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTable, ExitsTwoNamingFileFieldAndExpectationAndWritesNothing) {
  const BadInput& c = GetParam();
  const fs::path dir = scratch_root() / c.name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(fs::path(ARC_SOURCE_DIR) / "problems/host/softmax", dir, fs::copy_options::recursive);
  const fs::path file = dir / (c.file == File::kCampaign ? "campaign.toml" : "problem.toml");
  {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos)
        << "the shipped " << file.filename() << " has no '" << c.from << "'";
    text.replace(at, std::string(c.from).size(), c.to);
    std::ofstream(file, std::ios::trunc) << text;
  }
  const std::set<std::string> before = listing(dir);
  const fs::path run_dir = scratch_root() / (std::string(c.name) + "-run");
  std::string out;
  const int rc = c.command == Command::kRun
                     ? run_cli("arcd run " + (dir / "campaign.toml").string() + " --run-dir " +
                                   run_dir.string(),
                               &out)
                     : run_cli("arcd check " + dir.string(), &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find(file.string()), std::string::npos) << "file not named: " << out;
  EXPECT_NE(out.find(c.field), std::string::npos) << "field '" << c.field << "' not named: " << out;
  EXPECT_NE(out.find(c.expected), std::string::npos)
      << "expectation '" << c.expected << "' not said: " << out;
  EXPECT_FALSE(fs::exists(run_dir)) << "a run directory was written";
  EXPECT_EQ(listing(dir), before) << "a file was written beside the input";
  std::printf("%-30s %s", c.name, out.c_str());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadInput>& i) {
                           return std::string(i.param.name);
                         });

TEST(BadInputTable, HasAtLeastTwentyFiveCases) { EXPECT_GE(std::size(kCases), 25u); }

TEST(BadInputTable, MissingCampaignFileExitsTwoNamingIt) {
  const fs::path run_dir = scratch_root() / "missing-run";
  std::string out;
  const int rc = run_cli(
      "arcd run " + (scratch_root() / "nowhere.toml").string() + " --run-dir " + run_dir.string(),
      &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find((scratch_root() / "nowhere.toml").string()), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(run_dir));
}

}  // namespace
}  // namespace arc
