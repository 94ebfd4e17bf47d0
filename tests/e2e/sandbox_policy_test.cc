// arcd's sandbox policy (actors/sandbox_policy.h) through the real binary: where no sandbox can
// be had (here: $ARC_BWRAP names no program), a campaign with an agent that writes code is
// refused before anything is written unless the user opts out with --sandbox off, and
// --sandbox on refuses every campaign.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eval/subprocess.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kArcd = fs::path(ARC_BINARY_DIR) / "tools" / "arcd";
const fs::path kProblem = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";

// A campaign with one builtin agent and, when `external`, an exec agent whose script prints
// nothing (its exchanges fail; the builtin agent still runs).
fs::path write_campaign(const std::string& name, bool external) {
  const fs::path dir = testing::scratch_path("sandbox-policy", name);
  fs::create_directories(dir);
  std::ofstream(dir / "agent.sh") << "#!/bin/sh\ncat >/dev/null\nexit 3\n";
  fs::permissions(dir / "agent.sh", fs::perms::owner_all);
  std::string text = "[campaign]\nname = \"" + name + "\"\nproblem = \"" + kProblem.string() +
                     "\"\nseed = 2\nbudget = 3\nmode = \"lockstep\"\nglobal_plateau = 0\n"
                     "[evaluation]\nrounds = 1\nwarmup = 1\nrepetitions = 3\nbuffer_sets = 1\n"
                     "flush_cache = false\ntimeout_s = 20\n"
                     "[[agents]]\nname = \"vectorizer\"\nskill = \"vectorize\"\n";
  if (external) {
    text +=
        "[[agents]]\nname = \"script\"\nskill = \"fusion\"\nbackend = \"exec\"\n"
        "command = [\"./agent.sh\"]\n";
  }
  std::ofstream(dir / "campaign.toml") << text;
  return dir;
}

struct Ran {
  int code = -1;
  std::string output;
};

// arcd run with $ARC_BWRAP pointing nowhere: no sandbox on this "machine".
Ran arcd_without_sandbox(const fs::path& dir, const std::string& sandbox_flag) {
  ::setenv("ARC_BWRAP", "/nonexistent/bwrap", 1);
  std::vector<std::string> argv = {
      kArcd.string(),         "run",    (dir / "campaign.toml").string(), "--run-dir",
      (dir / "run").string(), "--quiet"};
  if (!sandbox_flag.empty()) argv.insert(argv.end(), {"--sandbox", sandbox_flag});
  eval::SubprocessOptions o;
  o.timeout_s = 300;
  auto r = eval::run_subprocess(argv, o);
  ::unsetenv("ARC_BWRAP");
  if (!r) return {};
  return {r->exit_code, r->output};
}

TEST(SandboxPolicy, AnAgentThatWritesCodeIsRefusedWithoutASandbox) {
  const fs::path dir = write_campaign("refused", true);
  Ran r = arcd_without_sandbox(dir, "");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("agent script (backend \"exec\") writes untrusted code"));
  EXPECT_THAT(r.output, HasSubstr("bwrap"));
  EXPECT_THAT(r.output, HasSubstr("--sandbox off"));
  EXPECT_FALSE(fs::exists(dir / "run")) << "a refused campaign wrote its run directory";
}

TEST(SandboxPolicy, OptingOutRunsItUnconfinedWithAWarning) {
  const fs::path dir = write_campaign("opted-out", true);
  Ran r = arcd_without_sandbox(dir, "off");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning: candidates run without a sandbox"));
  EXPECT_TRUE(fs::exists(dir / "run" / "summary.json"));
}

TEST(SandboxPolicy, BuiltinAgentsRunWithAWarningAndOnRefusesEverything) {
  const fs::path dir = write_campaign("builtin", false);
  Ran r = arcd_without_sandbox(dir, "");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning: candidates run without a sandbox (bwrap"));
  const fs::path strict = write_campaign("strict", false);
  Ran s = arcd_without_sandbox(strict, "on");
  EXPECT_EQ(s.code, 2) << s.output;
  EXPECT_THAT(s.output, HasSubstr("--sandbox on: the sandbox is unavailable"));
  EXPECT_FALSE(fs::exists(strict / "run"));
}

}  // namespace
}  // namespace arc
