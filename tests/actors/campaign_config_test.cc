#include "actors/campaign_config.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace arc::actors {
namespace {

namespace fs = std::filesystem;

class CampaignConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("arc-config-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "skills" / "tiling");
    std::ofstream(dir_ / "skills" / "tiling" / "skill.toml") << "name = \"tiling\"\n";
    std::ofstream(dir_ / "problem.toml") << "name = \"p\"\n";
    file_ = dir_ / "campaign.toml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string good() const {
    return "[campaign]\nname = \"c\"\nproblem = \"problem.toml\"\nskills = \"skills\"\n"
           "seed = 3\nbudget = 12\nmode = \"async\"\n"
           "[evaluation]\nrounds = 2\nrepetitions = 7\n"
           "[memory]\nwins = \"unbounded\"\ntraps = 4\n"
           "[[agents]]\nname = \"t1\"\nskill = \"tiling\"\n";
  }
  // Parses `text` and returns the error message ("" when it parsed).
  std::string error_of(const std::string& text) {
    auto r = parse_campaign(text, file_);
    return r.ok() ? "" : r.status().message();
  }

  fs::path dir_, file_;
};

TEST_F(CampaignConfigTest, ParsesEveryField) {
  auto r = parse_campaign(good(), file_);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "c");
  EXPECT_EQ(r->seed, 3u);
  EXPECT_EQ(r->budget, 12u);
  EXPECT_EQ(r->mode, Mode::kAsync);
  EXPECT_EQ(r->evaluation.rounds, 2u);
  EXPECT_EQ(r->evaluation.repetitions, 7u);
  EXPECT_EQ(r->evaluation.warmup, 10u);     // default
  EXPECT_EQ(r->evaluation.timing, "auto");  // default
  EXPECT_EQ(r->wins_bound, 0u);             // unbounded
  EXPECT_EQ(r->traps_bound, 4u);
  ASSERT_EQ(r->agents.size(), 1u);
  EXPECT_EQ(r->agents[0].skill, "tiling");
  EXPECT_EQ(r->problem, fs::weakly_canonical(dir_ / "problem.toml"));
}

TEST_F(CampaignConfigTest, ErrorsNameFileFieldAndExpectation) {
  struct Case {
    std::string from, to, field, expected;
  };
  const std::vector<Case> cases = {
      {"budget = 12", "budget = \"x\"", "campaign.budget", "expected an integer in [1, 1000000]"},
      {"budget = 12", "budget = 0", "campaign.budget",
       "expected an integer in [1, 1000000], got 0"},
      {"mode = \"async\"", "mode = \"fast\"", "campaign.mode", "\"async\" or \"lockstep\""},
      {"name = \"c\"\n", "", "campaign.name", "expected a string"},
      {"problem = \"problem.toml\"", "problem = \"nope.toml\"", "campaign.problem",
       "expected an existing problem.toml"},
      {"rounds = 2", "rounds = 0", "evaluation.rounds", "an integer in [1, 1000]"},
      {"repetitions = 7", "repetitions = 2", "evaluation.repetitions", "an integer in [3, 100000]"},
      {"repetitions = 7", "repetitions = 7\ntiming = \"fast\"", "evaluation.timing",
       "expected \"auto\", \"cuda_events\" or \"cupti\", got \"fast\""},
      {"repetitions = 7", "repetitions = 7\ntiming = 1", "evaluation.timing",
       "expected \"auto\", \"cuda_events\" or \"cupti\", got an integer"},
      {"traps = 4", "traps = -1", "memory.traps", "an integer in [1, 1073741824] or \"unbounded\""},
      {"traps = 4", "traps = 4\n[guard]\nmargin_scope = \"some\"", "guard.margin_scope",
       "expected \"changed\" or \"all\", got \"some\""},
      {"traps = 4", "traps = 4\n[guard]\nslower_workloads = \"maybe\"", "guard.slower_workloads",
       "expected \"revert\" or \"allow\", got \"maybe\""},
      {"skill = \"tiling\"", "skill = \"nosuch\"", "agents[0].skill", "a skill folder"},
      {"name = \"t1\"", "name = \"bad name\"", "agents[0].name", "letters, digits"},
      {"seed = 3", "seed = 3\ncolour = 1", "campaign.colour", "unknown field"},
      {"[[agents]]\nname = \"t1\"\nskill = \"tiling\"\n", "", "agents", "at least one"},
  };
  for (const auto& c : cases) {
    std::string text = good();
    auto pos = text.find(c.from);
    ASSERT_NE(pos, std::string::npos) << c.from;
    text.replace(pos, c.from.size(), c.to);
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find(file_.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + c.field + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
}

TEST_F(CampaignConfigTest, TimingMethodIsParsedAndRoundTrips) {
  for (const char* timing : {"auto", "cuda_events", "cupti"}) {
    std::string text = good();
    text.replace(text.find("repetitions = 7"), 15,
                 std::string("repetitions = 7\ntiming = \"") + timing + "\"");
    auto r = parse_campaign(text, file_);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->evaluation.timing, timing);
    auto again = parse_campaign(campaign_text(*r), file_);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(again->evaluation.timing, timing);
  }
}

TEST_F(CampaignConfigTest, MarginScopeDefaultsToChangedAndRoundTrips) {
  auto def = parse_campaign(good(), file_);
  ASSERT_TRUE(def.ok()) << def.status().to_string();
  EXPECT_EQ(def->margin_scope, "changed");
  std::string text = good();
  text.replace(text.find("traps = 4"), 9, "traps = 4\n[guard]\nmargin_scope = \"all\"");
  auto r = parse_campaign(text, file_);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->margin_scope, "all");
  auto again = parse_campaign(campaign_text(*r), file_);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->margin_scope, "all");
}

TEST_F(CampaignConfigTest, SlowerWorkloadsDefaultsToRevertAndRoundTrips) {
  auto def = parse_campaign(good(), file_);
  ASSERT_TRUE(def.ok()) << def.status().to_string();
  EXPECT_EQ(def->slower_workloads, "revert");
  std::string text = good();
  text.replace(text.find("traps = 4"), 9, "traps = 4\n[guard]\nslower_workloads = \"allow\"");
  auto r = parse_campaign(text, file_);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->slower_workloads, "allow");
  auto again = parse_campaign(campaign_text(*r), file_);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->slower_workloads, "allow");
}

TEST_F(CampaignConfigTest, DuplicateAgentNamesAreRejected) {
  std::string text = good() + "[[agents]]\nname = \"t1\"\nskill = \"tiling\"\n";
  EXPECT_NE(error_of(text).find("'agents[1].name'"), std::string::npos);
}

TEST_F(CampaignConfigTest, SyntaxErrorsGiveALine) {
  const std::string msg = error_of("[campaign\nname = 1\n");
  EXPECT_NE(msg.find(file_.string() + ":1:"), std::string::npos) << msg;
}

}  // namespace
}  // namespace arc::actors
