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
     "expected an integer in [1, 1000000]"},
    {"BudgetZero", File::kCampaign, "budget = 40", "budget = 0", "campaign.budget",
     "expected an integer in [1, 1000000]"},
    {"BudgetHuge", File::kCampaign, "budget = 40", "budget = 1000001", "campaign.budget",
     "expected an integer in [1, 1000000], got 1000001"},
    {"BudgetAFloat", File::kCampaign, "budget = 40", "budget = 40.5", "campaign.budget",
     "expected an integer in [1, 1000000], got a float (40.5)"},
    {"SeedNotAnInteger", File::kCampaign, "seed = 1", "seed = \"one\"", "campaign.seed",
     "an integer in [0, 18446744073709551615]"},
    {"SeedNegative", File::kCampaign, "seed = 1", "seed = -1", "campaign.seed",
     "expected an integer in [0, 18446744073709551615], got -1"},
    {"SeedBeyondTomlIntegers", File::kCampaign, "seed = 1", "seed = 18446744073709551615",
     "campaign.toml:6:", "TOML syntax error"},
    {"GlobalPlateauHuge", File::kCampaign, "global_plateau = 24", "global_plateau = 2000000",
     "campaign.global_plateau", "0 (never) or an integer in [1, 1000000]"},
    {"GlobalPlateauNegative", File::kCampaign, "global_plateau = 24", "global_plateau = -1",
     "campaign.global_plateau", "0 (never) or an integer in [1, 1000000]"},
    {"UnknownMode", File::kCampaign, "mode = \"lockstep\"", "mode = \"sideways\"", "campaign.mode",
     "\"async\" or \"lockstep\""},
    {"UnknownDurability", File::kCampaign, "durability = \"sync\"", "durability = \"maybe\"",
     "campaign.durability", "\"sync\" or \"batch\""},
    {"MissingProblemFile", File::kCampaign, "problem = \"problem.toml\"",
     "problem = \"nowhere.toml\"", "campaign.problem", "an existing problem.toml"},
    {"UnknownCampaignField", File::kCampaign, "seed = 1", "seed = 1\ncolour = \"blue\"",
     "campaign.colour", "unknown field"},
    {"RoundsZero", File::kCampaign, "rounds = 3", "rounds = 0", "evaluation.rounds",
     "an integer in [1, 1000]"},
    {"RoundsHuge", File::kCampaign, "rounds = 3", "rounds = 1001", "evaluation.rounds",
     "an integer in [1, 1000]"},
    {"WarmupNegative", File::kCampaign, "warmup = 2", "warmup = -2", "evaluation.warmup",
     "an integer in [0, 100000]"},
    {"WarmupHuge", File::kCampaign, "warmup = 2", "warmup = 100001", "evaluation.warmup",
     "an integer in [0, 100000]"},
    {"TooFewRepetitions", File::kCampaign, "repetitions = 10", "repetitions = 1",
     "evaluation.repetitions", "an integer in [3, 100000]"},
    {"RepetitionsHuge", File::kCampaign, "repetitions = 10", "repetitions = 4294967296",
     "evaluation.repetitions", "an integer in [3, 100000], got 4294967296"},
    {"BufferSetsZero", File::kCampaign, "buffer_sets = 2", "buffer_sets = 0",
     "evaluation.buffer_sets", "an integer in [1, 64]"},
    {"BufferSetsHuge", File::kCampaign, "buffer_sets = 2", "buffer_sets = 65",
     "evaluation.buffer_sets", "an integer in [1, 64]"},
    {"MemoryLimitTooSmall", File::kCampaign, "memory_limit_mb = 2048", "memory_limit_mb = 63",
     "evaluation.memory_limit_mb", "0 (no limit) or an integer in [64, 16777216]"},
    {"MemoryLimitHuge", File::kCampaign, "memory_limit_mb = 2048", "memory_limit_mb = 16777217",
     "evaluation.memory_limit_mb", "0 (no limit) or an integer in [64, 16777216]"},
    {"UnknownTimingMethod", File::kCampaign, "repetitions = 10",
     "repetitions = 10\ntiming = \"stopwatch\"", "evaluation.timing",
     "expected \"auto\", \"cuda_events\" or \"cupti\""},
    {"TimeoutNotANumber", File::kCampaign, "timeout_s = 20", "timeout_s = \"soon\"",
     "evaluation.timeout_s", "a number of seconds in [0.1, 86400]"},
    {"TimeoutInfinite", File::kCampaign, "timeout_s = 20", "timeout_s = inf",
     "evaluation.timeout_s", "a number of seconds in [0.1, 86400], got inf"},
    {"TimeoutNaN", File::kCampaign, "timeout_s = 20", "timeout_s = nan", "evaluation.timeout_s",
     "a number of seconds in [0.1, 86400]"},
    {"TimeoutHuge", File::kCampaign, "timeout_s = 20", "timeout_s = 1e300", "evaluation.timeout_s",
     "a number of seconds in [0.1, 86400], got 1e+300"},
    {"TimeoutTooSmall", File::kCampaign, "timeout_s = 20", "timeout_s = 1e-9",
     "evaluation.timeout_s", "a number of seconds in [0.1, 86400], got 1e-09"},
    {"NegativeMargin", File::kCampaign, "margin = 0.02", "margin = -0.5", "guard.margin",
     "a number in [0, 1)"},
    {"MarginOne", File::kCampaign, "margin = 0.02", "margin = 1", "guard.margin",
     "a number in [0, 1), got 1"},
    {"SolMarginZero", File::kCampaign, "margin = 0.02", "margin = 0.02\nsol_margin = 0",
     "guard.sol_margin", "a number in (0, 1], got 0"},
    {"SolMarginAboveOne", File::kCampaign, "margin = 0.02", "margin = 0.02\nsol_margin = 1.5",
     "guard.sol_margin", "a number in (0, 1]"},
    {"PairsNegative", File::kCampaign, "margin = 0.02", "margin = 0.02\npairs = -1", "guard.pairs",
     "0 (unpaired decisions) or an integer in [1, 1000], got -1"},
    {"PairsHuge", File::kCampaign, "margin = 0.02", "margin = 0.02\npairs = 1001", "guard.pairs",
     "0 (unpaired decisions) or an integer in [1, 1000]"},
    {"PairBandOne", File::kCampaign, "margin = 0.02", "margin = 0.02\npair_band = 1",
     "guard.pair_band", "a number in [0, 1), got 1"},
    {"PairConfidenceHalf", File::kCampaign, "margin = 0.02", "margin = 0.02\npair_confidence = 0.5",
     "guard.pair_confidence", "a number in (0.5, 1), got 0.5"},
    {"PairRepetitionsTwo", File::kCampaign, "margin = 0.02", "margin = 0.02\npair_repetitions = 2",
     "guard.pair_repetitions", "an integer in [3, 100000], got 2"},
    {"WinsNeitherCountNorUnbounded", File::kCampaign, "wins = 16", "wins = \"lots\"", "memory.wins",
     "an integer in [1, 1073741824] or \"unbounded\""},
    {"WinsHuge", File::kCampaign, "wins = 16", "wins = 1073741825", "memory.wins",
     "an integer in [1, 1073741824] or \"unbounded\""},
    {"TrapsZero", File::kCampaign, "traps = 16", "traps = 0", "memory.traps",
     "an integer in [1, 1073741824] or \"unbounded\""},
    {"PlateauWindowZero", File::kCampaign, "window = 8", "window = 0", "plateau.window",
     "an integer in [1, 1000000]"},
    {"PlateauWindowHuge", File::kCampaign, "window = 8", "window = 1000001", "plateau.window",
     "an integer in [1, 1000000]"},
    // [llm] and [exec] are checked whenever present.
    {"LlmTemperatureTooHigh", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntemperature = 2.5\n[guard]",
     "llm.temperature", "a number in [0, 2], got 2.5"},
    {"LlmMaxTokensZero", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_tokens = 0\n[guard]",
     "llm.max_tokens", "an integer in [1, 1048576]"},
    {"LlmMaxTokensHuge", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_tokens = 1048577\n[guard]",
     "llm.max_tokens", "an integer in [1, 1048576]"},
    {"LlmTimeoutZero", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntimeout_s = 0\n[guard]",
     "llm.timeout_s", "a number of seconds in [0.1, 86400]"},
    {"LlmTimeoutInfinite", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntimeout_s = inf\n[guard]",
     "llm.timeout_s", "a number of seconds in [0.1, 86400]"},
    {"LlmRetriesHuge", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nretries = 21\n[guard]",
     "llm.retries", "an integer in [0, 20]"},
    {"LlmRetriesNegative", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nretries = -1\n[guard]",
     "llm.retries", "an integer in [0, 20]"},
    {"LlmBackoffNegative", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nbackoff_s = -1\n[guard]",
     "llm.backoff_s", "a number of seconds in [0, 600]"},
    {"LlmConcurrencyZero", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nconcurrency = 0\n[guard]",
     "llm.concurrency", "an integer in [1, 256]"},
    {"LlmConcurrencyHuge", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nconcurrency = 257\n[guard]",
     "llm.concurrency", "an integer in [1, 256]"},
    {"LlmMaxFailuresZero", File::kCampaign, "[guard]",
     "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_failures = 0\n[guard]",
     "llm.max_failures", "an integer in [1, 1000]"},
    {"ExecTimeoutHuge", File::kCampaign, "[guard]",
     "[exec]\ncommand = [\"/bin/true\"]\ntimeout_s = 86401\n[guard]", "exec.timeout_s",
     "a number of seconds in [0.1, 86400], got 86401"},
    {"ExecMaxFailuresHuge", File::kCampaign, "[guard]",
     "[exec]\ncommand = [\"/bin/true\"]\nmax_failures = 1001\n[guard]", "exec.max_failures",
     "an integer in [1, 1000]"},
    // An exec agent's program is looked for when the campaign starts, not at its first exchange.
    {"ExecCommandMissing", File::kCampaign, "backend = \"builtin\"",
     "backend = \"exec\"\ncommand = [\"./no-such-agent.sh\"]", "agents[0].command",
     "expected an executable program, got"},
    {"ExecCommandNotInPath", File::kCampaign, "backend = \"builtin\"",
     "backend = \"exec\"\n\n[exec]\ncommand = [\"no-such-agent-program\"]\n", "exec.command",
     "\"no-such-agent-program\" (not found in PATH)"},
    {"ExecCommandNotExecutable", File::kCampaign, "backend = \"builtin\"",
     "backend = \"exec\"\ncommand = [\"./problem.toml\", \"--fast\"]", "agents[0].command",
     "problem.toml is not executable"},
    {"ExecCommandADirectory", File::kCampaign, "backend = \"builtin\"",
     "backend = \"exec\"\ncommand = [\"./families\"]", "agents[0].command", "is a directory"},
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
     "axes = { rows = 256, cols = -3 }", "workloads[1].axes.cols",
     "an integer in [1, 1099511627776]"},
    {"AxisValueHuge", File::kProblem, "axes = { rows = 256, cols = 1024 }",
     "axes = { rows = 256, cols = 2199023255552 }", "workloads[1].axes.cols",
     "an integer in [1, 1099511627776]", Command::kCheck},
    {"AxisExpressionHuge", File::kProblem, "axes = { rows = 256, cols = 1024 }",
     "axes = { rows = 256, cols = \"rows * 1099511627776\" }", "workloads[1].axes.cols",
     "an integer in [1, 1099511627776]", Command::kCheck},
    {"InputLowHuge", File::kProblem, "low = -4.0", "low = -1e31", "inputs[0].low",
     "a number in [-1e+30, 1e+30], got -1e+31", Command::kCheck},
    {"InputHighInfinite", File::kProblem, "high = 4.0", "high = inf", "inputs[0].high",
     "a number in [-1e+30, 1e+30], got inf", Command::kCheck},
    {"NormalStdDevZero", File::kProblem, "init = \"uniform\"\nlow = -4.0\nhigh = 4.0",
     "init = \"normal\"\nlow = 0.0\nhigh = 0.0", "inputs[0].high",
     "a standard deviation (init = \"normal\"): a number in (0, 1e+30]", Command::kCheck},
    {"AtolHuge", File::kProblem, "atol = 1e-6", "atol = 1e7", "tolerance.atol",
     "a number in [0, 1e+06], got 1e+07", Command::kCheck},
    {"RtolAboveHalf", File::kProblem, "rtol = 1e-4", "rtol = 0.75", "tolerance.rtol",
     "a number in [0, 0.5], got 0.75", Command::kCheck},
    {"MatchedRatioZero", File::kProblem, "matched_ratio = 1.0", "matched_ratio = 0",
     "tolerance.matched_ratio", "a number in (0, 1], got 0"},
    {"IntegerParamBeyondDoubles", File::kProblem, "reference = \"reference.cpp\"",
     "reference = \"reference.cpp\"\n[params]\nBIG = 9007199254740993", "params.BIG",
     "an integer in [-9007199254740992, 9007199254740992]", Command::kCheck},
    {"MissingAxisValue", File::kProblem, "axes = { rows = 256, cols = 1024 }",
     "axes = { rows = 256 }", "workloads[1].axes.cols", "got nothing"},
    {"UnknownDtype", File::kProblem, "dtype = \"f32\"", "dtype = \"f128\"", "inputs[0].dtype",
     "expected \"f32\"", Command::kCheck},
    {"ShapeOverAnUnknownAxis", File::kProblem, "shape = [\"rows\", \"cols\"]",
     "shape = [\"rows\", \"depth\"]", "inputs[0].shape[1]", "a declared axis", Command::kCheck},
    {"UnknownInit", File::kProblem, "init = \"uniform\"", "init = \"gaussian\"", "inputs[0].init",
     "\"uniform\" or \"normal\""},
    {"NegativeAtol", File::kProblem, "atol = 1e-6", "atol = -1.0", "tolerance.atol",
     "a number in [0, 1e+06]", Command::kCheck},
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

// Numeric flags of arcd, arc-replay and arc-bench: out of range, negative, overflowing, junk or
// empty values exit 2 naming the flag and its range, before anything is run or written.
struct BadFlag {
  const char* name;
  // The command after the tools folder; {campaign}, {problem} and {run} stand for the shipped
  // softmax campaign, its problem folder and a run directory that must not appear.
  const char* command;
  const char* flag;
  const char* expected;
};

std::ostream& operator<<(std::ostream& os, const BadFlag& c) { return os << c.name; }

constexpr const char* kSeedExpected = "expected an integer in [0, 18446744073709551615], got";
constexpr const char* kBudgetExpected = "expected an integer in [1, 1000000], got";

const BadFlag kFlagCases[] = {
    {"SeedNegative", "arcd run {campaign} --run-dir {run} --seed -1", "--seed", kSeedExpected},
    {"SeedTwoToTheSixtyFour", "arcd run {campaign} --run-dir {run} --seed 18446744073709551616",
     "--seed", kSeedExpected},
    {"SeedJunk", "arcd run {campaign} --run-dir {run} --seed 12abc", "--seed", kSeedExpected},
    {"SeedEmpty", "arcd run {campaign} --run-dir {run} --seed ''", "--seed", kSeedExpected},
    {"SeedSigned", "arcd run {campaign} --run-dir {run} --seed +7", "--seed", kSeedExpected},
    {"SeedHex", "arcd run {campaign} --run-dir {run} --seed 0x10", "--seed", kSeedExpected},
    {"SeedWithSpace", "arcd run {campaign} --run-dir {run} --seed ' 7'", "--seed", kSeedExpected},
    {"BudgetZeroFlag", "arcd run {campaign} --run-dir {run} --budget 0", "--budget",
     kBudgetExpected},
    {"BudgetHugeFlag", "arcd run {campaign} --run-dir {run} --budget 4294967296", "--budget",
     kBudgetExpected},
    {"BudgetNegativeFlag", "arcd run {campaign} --run-dir {run} --budget -5", "--budget",
     kBudgetExpected},
    {"BudgetFloatFlag", "arcd run {campaign} --run-dir {run} --budget 2.5", "--budget",
     kBudgetExpected},
    {"ResampleNegative", "arcd run {campaign} --run-dir {run} --evaluator replay --resample -1",
     "--resample", kSeedExpected},
    {"SweepSampleJunk", "arcd sweep {problem} --run-dir {run} --sample 10x", "--sample",
     "expected 0 (all) or an integer in [1, 10000000], got"},
    {"SweepSeedOverflow", "arcd sweep {problem} --run-dir {run} --seed 99999999999999999999",
     "--seed", kSeedExpected},
    {"ConfirmRoundsZero", "arcd confirm {run} --rounds 0", "--rounds",
     "expected an integer in [1, 1000], got"},
    {"ConfirmRoundsHuge", "arcd confirm {run} --rounds 1001", "--rounds",
     "expected an integer in [1, 1000], got"},
    {"AblateSeedsZero", "arc-replay ablate {campaign} --from {problem} --work-dir {run} --seeds 0",
     "--seeds", "expected an integer in [1, 100000], got"},
    {"AblateBudgetsNegative",
     "arc-replay ablate {campaign} --from {problem} --work-dir {run} --budgets 25,-1", "--budgets",
     kBudgetExpected},
    {"AblateJobsHuge", "arc-replay ablate {campaign} --from {problem} --work-dir {run} --jobs 1025",
     "--jobs", "expected 0 (one per core) or an integer in [1, 1024], got"},
    {"BenchRoundsZero", "arc-bench --work-dir {run} --rounds 0", "--rounds",
     "expected an integer in [1, 1000], got"},
    {"BenchAppendsNegative", "arc-bench --work-dir {run} --appends -1", "--appends",
     "expected an integer in [1, 100000000], got"},
    {"BenchCandidatesJunk", "arc-bench --work-dir {run} --candidates many", "--candidates",
     kBudgetExpected},
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

class BadFlagTable : public ::testing::TestWithParam<BadFlag> {};

TEST_P(BadFlagTable, ExitsTwoNamingFlagAndRangeAndWritesNothing) {
  const BadFlag& c = GetParam();
  const fs::path problem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax";
  const fs::path run_dir = scratch_root() / (std::string(c.name) + "-run");
  std::string command = replace_all(c.command, "{campaign}", (problem / "campaign.toml").string());
  command = replace_all(command, "{problem}", problem.string());
  command = replace_all(command, "{run}", run_dir.string());
  std::string out;
  const int rc = run_cli(command, &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find(std::string(c.flag) + ": " + c.expected), std::string::npos)
      << "flag '" << c.flag << "' and '" << c.expected << "' not said: " << out;
  EXPECT_FALSE(fs::exists(run_dir)) << "a run directory was written";
  std::printf("%-30s %s", c.name, out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cli, BadFlagTable, ::testing::ValuesIn(kFlagCases),
                         [](const ::testing::TestParamInfo<BadFlag>& i) {
                           return std::string(i.param.name);
                         });

TEST(BadFlagTable, TheLargestSeedIsTaken) {
  // 2^64-1 is a seed like any other: only what lies outside [0, 2^64-1] is refused.
  const fs::path problem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax";
  const fs::path run_dir = scratch_root() / "largest-seed-run";
  std::string out;
  const int rc = run_cli("arcd run " + (problem / "campaign.toml").string() + " --run-dir " +
                             run_dir.string() + " --seed 18446744073709551615 --budget 1 --quiet",
                         &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("18446744073709551615"), std::string::npos) << out;
  fs::remove_all(run_dir);
}

// A campaign path that is not a readable file says what it is, naming the path.
TEST(BadInputTable, DirectoryAsCampaignFileExitsTwoNamingIt) {
  const fs::path dir = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax";
  const fs::path run_dir = scratch_root() / "directory-run";
  std::string out;
  const int rc = run_cli("arcd run " + dir.string() + " --run-dir " + run_dir.string(), &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find(dir.string() + ": expected a campaign file, got a directory"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("did you mean " + (dir / "campaign.toml").string()), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(run_dir));
}

TEST(BadInputTable, SymlinkLoopAsCampaignFileExitsTwoNamingIt) {
  const fs::path dir = scratch_root() / "symlink-loop";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink(dir / "b.toml", dir / "a.toml");
  fs::create_symlink(dir / "a.toml", dir / "b.toml");
  const fs::path run_dir = scratch_root() / "symlink-loop-run";
  std::string out;
  const int rc =
      run_cli("arcd run " + (dir / "a.toml").string() + " --run-dir " + run_dir.string(), &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find((dir / "a.toml").string() + ": cannot read the campaign file"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("symlink loop"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(run_dir));
  fs::remove_all(dir);
}

// README.md: arc-replay verify exits 0 verified, 1 divergence, 2 no such run, 3 damaged log.
TEST(BadInputTable, VerifyOfNoRunExitsTwoAndOfAnUnreadableLogThree) {
  std::string out;
  EXPECT_EQ(run_cli("arc-replay verify " + (scratch_root() / "nowhere").string(), &out), 2) << out;
  EXPECT_NE(out.find("NO SUCH RUN"), std::string::npos) << out;
  const fs::path not_a_run = scratch_root() / "not-a-run";
  fs::create_directories(not_a_run);
  out.clear();
  EXPECT_EQ(run_cli("arc-replay verify " + not_a_run.string(), &out), 2) << out;
  const fs::path lost_log = scratch_root() / "lost-log";
  fs::create_directories(lost_log / "log");
  out.clear();
  EXPECT_EQ(run_cli("arc-replay verify " + lost_log.string(), &out), 3) << out;
  EXPECT_NE(out.find("DAMAGED LOG"), std::string::npos) << out;
  fs::remove_all(not_a_run);
  fs::remove_all(lost_log);
}

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
