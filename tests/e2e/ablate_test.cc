// arc-replay ablate on the shipped host sweep of softmax (real measurements of this machine
// kind): counterfactual campaigns, their statistics, and byte-identical reports.
#include "replay/ablate.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

AblationOptions options(const std::string& tag) {
  AblationOptions o;
  o.base_campaign = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";
  o.measurements = {fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax"};
  o.seeds = 3;
  o.budgets = {10, 20};
  o.bootstrap = 500;
  o.configs = {{"four-agents", {}}, {"one-agent", {"agents=1"}}};
  o.work_dir = fs::temp_directory_path() / ("arc-ablate-" + std::to_string(::getpid()) + tag);
  return o;
}

TEST(Ablate, ReportsPerConfigurationStatisticsAndIsReproducible) {
  auto r1 = run_ablation(options("a"));
  ASSERT_TRUE(r1.ok()) << r1.status().to_string();
  const AblationReport& r = r1.value();
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_GT(r.best_known, 1.5);  // the sweep holds candidates over 1.5x the seed
  for (const auto& c : r.configs) {
    ASSERT_EQ(c.best_at.size(), 3u);  // one row per seed
    ASSERT_EQ(c.geomean_at.size(), 2u);
    EXPECT_GE(c.geomean_at[1], c.geomean_at[0]);  // best-so-far never falls
    EXPECT_GT(c.geomean_at[1], 1.0);
    EXPECT_LE(c.ratio_low, c.ratio);
    EXPECT_GE(c.ratio_high, c.ratio);
    EXPECT_GE(c.gsd, 1.0);
    EXPECT_EQ(c.to_reach.size(), 3u);
    EXPECT_GT(c.candidates, 0u);
    // Gated candidates (the shape-gate agent's) are composed from the sweep's points.
    EXPECT_EQ(c.unanswered_gated, 0u) << c.name;
    EXPECT_LE(c.unanswered_gated, c.unanswered);
  }
  EXPECT_NE(to_csv(r).find(",unanswered,unanswered_gated\n"), std::string::npos);
  EXPECT_EQ(to_json(r)["configs"][0]["unanswered_gated"], 0);
  EXPECT_DOUBLE_EQ(r.configs[0].ratio, 1.0);  // the reference against itself
  auto r2 = run_ablation(options("b"));
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(to_json(r1.value()).dump(2), to_json(r2.value()).dump(2));
  EXPECT_EQ(to_csv(r1.value()), to_csv(r2.value()));
  // One campaign at a time with RocksDB logs on disk, read back: the same report as parallel
  // campaigns with in-memory logs.
  auto serial = options("d");
  serial.jobs = 1;
  serial.logs_on_disk = true;
  auto r3 = run_ablation(serial);
  ASSERT_TRUE(r3.ok()) << r3.status().to_string();
  EXPECT_EQ(to_json(r1.value()).dump(2), to_json(r3.value()).dump(2));
  EXPECT_EQ(to_csv(r1.value()), to_csv(r3.value()));
  auto parallel = options("e");
  parallel.jobs = 3;
  auto r4 = run_ablation(parallel);
  ASSERT_TRUE(r4.ok()) << r4.status().to_string();
  EXPECT_EQ(to_json(r1.value()).dump(2), to_json(r4.value()).dump(2));
  EXPECT_NE(to_table(r).find("one-agent"), std::string::npos);
  ASSERT_EQ(r.curves.size(), 2u);
  EXPECT_EQ(r.curves[1].size(), 3u);
  const std::string svg = plot_ablation_svg(r, "ablation");
  EXPECT_NE(svg.find(">four-agents (3)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">one-agent (3)</text>"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Ablate, BadChangesAreNamed) {
  auto o = options("c");
  o.configs = {{"broken", {"agents=9"}}};
  auto r = run_ablation(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("agents=9"), std::string::npos);
  auto c = parse_ablation_config("x:wins=unbounded,drafting=false");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->changes.size(), 2u);
  EXPECT_FALSE(parse_ablation_config(":a=1").ok());
}

}  // namespace
}  // namespace arc::replay
