// The model skill end to end, on the shipped host sweep of softmax (every point of the space,
// real measurements of the development machine kind): a campaign with a model agent runs
// through the whole pipeline against the replay evaluator, its model proposes, it never
// repeats a configuration, and `arc-replay verify` re-derives every proposal; ablations swap
// agents into the model skill and back.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "actors/campaign_runner.h"
#include "eval/evaluators.h"
#include "replay/ablate.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

const fs::path kSoftmax = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax";
const fs::path kSweep = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax";

// The shipped softmax campaign with its precision agent started in the model skill.
fs::path model_campaign(const fs::path& dir) {
  std::string text = testing::slurp(kSoftmax / "campaign.toml");
  auto replace = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  replace("problem = \"problem.toml\"",
          "problem = \"" + (kSoftmax / "problem.toml").string() + "\"");
  replace("skill = \"precision\"", "skill = \"model\"");
  fs::create_directories(dir);
  const fs::path file = dir / "campaign.toml";
  std::ofstream(file) << text;
  return file;
}

TEST(ModelSkill, AReplayedCampaignWithAModelAgentRunsAndVerifies) {
  const fs::path dir = testing::scratch_path("model-skill", "run");
  auto config = actors::load_campaign(model_campaign(dir.parent_path() / "campaign"));
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  actors::RunOptions o;
  o.run_dir = dir;
  o.budget = 80;
  o.seed = 3;
  eval::EvaluatorChoice choice;
  choice.kind = "replay";
  choice.replay_logs = {kSweep};
  choice.resample_seed = 3;
  o.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  auto prepared = actors::prepare_campaign(std::move(config.value()), o);
  ASSERT_TRUE(prepared.ok()) << prepared.status().to_string();
  auto run = actors::run_campaign(std::move(prepared.value()), o);
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  auto log = replay::read_run(dir);
  ASSERT_TRUE(log.ok()) << log.status().to_string();

  std::map<std::string, uint32_t> moves;  // the model agent's, by kind
  std::set<std::string> configurations;   // the model agent's, ungated
  uint32_t drafts = 0;
  for (const auto& e : log.value()) {
    if (e.payload.type == fb::Payload::StrategyDrafted) {
      drafts += e.payload.AsStrategyDrafted()->agent == "precise" ? 1 : 0;
    }
    if (e.payload.type != fb::Payload::CandidateProposed) continue;
    const auto* p = e.payload.AsCandidateProposed();
    if (p->agent != "precise") continue;
    EXPECT_EQ(p->skill, "model") << "an opt-in skill is kept";
    const std::string kind = p->move.rfind("model:", 0) == 0
                                 ? p->move.substr(0, p->move.find(':', 6))
                                 : p->move.substr(0, p->move.find(':'));
    ++moves[kind];
    auto c = problem::Candidate::from_canonical(p->canonical);
    ASSERT_TRUE(c.ok());
    if (c->gates.empty()) {
      EXPECT_TRUE(configurations.insert(c->base.key()).second) << "repeated " << p->move;
    }
  }
  EXPECT_EQ(drafts, 0u);
  EXPECT_GT(moves["model:ei"], 0u) << "the model proposes once the campaign has 8 evaluations";
  const replay::CampaignSummary s = replay::summarize(log.value());
  EXPECT_TRUE(s.stopped);
  EXPECT_GT(s.best_score, 1.0);

  const replay::VerifyReport v = replay::verify_run(dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
  EXPECT_GT(v.proposals, moves["model:ei"]);
}

replay::AblationOptions ablation(const std::string& tag) {
  replay::AblationOptions o;
  o.base_campaign = kSoftmax / "campaign.toml";
  o.measurements = {kSweep};
  o.seeds = 2;
  o.budgets = {20, 40};
  o.bootstrap = 200;
  o.work_dir = testing::scratch_path("model-ablate", tag);
  return o;
}

TEST(ModelSkill, AblationsSwapAgentsIntoTheModelSkillAndNameBadChanges) {
  auto o = ablation("swap");
  o.configs = {{"shipped", {}},
               {"with-model", {"skill.precise=model"}},
               {"all-model", {"agents=2", "skill=model"}}};
  auto r = replay::run_ablation(o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->configs.size(), 3u);
  for (const auto& c : r->configs) {
    SCOPED_TRACE(c.name);
    EXPECT_GT(c.candidates, 0u);
    EXPECT_EQ(c.unanswered_gated, 0u);
    EXPECT_GT(c.geomean_at.back(), 1.0);
  }
  EXPECT_EQ(r->configs[1].changes, std::vector<std::string>{"skill.precise=model"});
  // Byte-identical when run again.
  auto again = replay::run_ablation([&] {
    auto a = ablation("swap-again");
    a.configs = o.configs;
    return a;
  }());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(replay::to_csv(r.value()), replay::to_csv(again.value()));

  auto bad = ablation("bad");
  bad.configs = {{"x", {"skill.nobody=model"}}};
  auto no_agent = replay::run_ablation(bad);
  ASSERT_FALSE(no_agent.ok());
  EXPECT_NE(no_agent.status().message().find("'skill.nobody=model'"), std::string::npos);
  EXPECT_NE(no_agent.status().message().find("expected an agent of the campaign (vectorizer"),
            std::string::npos)
      << no_agent.status().message();
  bad.configs = {{"x", {"skill=no-such-skill"}}};
  auto no_skill = replay::run_ablation(bad);
  ASSERT_FALSE(no_skill.ok());
  EXPECT_NE(no_skill.status().message().find("expected a skill folder under"), std::string::npos)
      << no_skill.status().message();
  EXPECT_NE(no_skill.status().message().find("got \"no-such-skill\""), std::string::npos);
}

}  // namespace
}  // namespace arc
