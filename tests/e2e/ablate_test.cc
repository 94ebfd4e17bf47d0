// arc-replay ablate on the shipped host sweep of softmax (real measurements of this machine
// kind): counterfactual campaigns, their statistics, and byte-identical reports.
#include "replay/ablate.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "problem/candidate.h"
#include "replay/summary.h"

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

TEST(Ablate, CandidatesToReachAGivenTargetWithTheirInterval) {
  auto o = options("t");
  o.configs = {{"one-agent", {"agents=1"}}};
  // Every campaign starts at the baseline's 1.0x: the first candidate reaches any fraction of 1.
  o.target_score = 1.0;
  auto low = run_ablation(o);
  ASSERT_TRUE(low.ok()) << low.status().to_string();
  EXPECT_EQ(low->target, 1.0);
  const ConfigResult& c = low->configs[0];
  ASSERT_EQ(c.to_reach_low.size(), 3u);
  ASSERT_EQ(c.seeds_reaching.size(), 3u);
  for (size_t q = 0; q < 3; ++q) {
    EXPECT_EQ(c.to_reach[q], 1);
    EXPECT_EQ(c.to_reach_low[q], 1);
    EXPECT_EQ(c.to_reach_high[q], 1);
    EXPECT_EQ(c.seeds_reaching[q], 3u);
  }
  const auto j = to_json(low.value());
  EXPECT_EQ(j["target"], 1.0);
  EXPECT_EQ(j["configs"][0]["candidates_to_reach_ci95"]["0.95"], nlohmann::json::parse("[1,1]"));
  EXPECT_EQ(j["configs"][0]["seeds_reaching"]["0.95"], 3);
  EXPECT_NE(to_csv(low.value()).find(",to_99,to_95_low,to_95_high,"), std::string::npos);
  EXPECT_NE(to_table(low.value()).find("1 [1, 1]"), std::string::npos);
  // A target no campaign reaches: censored, and said so.
  o.target_score = 1e6;
  auto high = run_ablation(o);
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(high->configs[0].to_reach[1], -1);
  EXPECT_EQ(high->configs[0].to_reach_high[1], -1);
  EXPECT_EQ(high->configs[0].seeds_reaching[1], 0u);
  EXPECT_TRUE(to_json(high.value())["configs"][0]["candidates_to_reach"]["0.95"].is_null());
  // Exact answers (the recorded medians): the same report twice, and the bests of a seed are
  // scores of recorded medians, the same whatever the resampling would have drawn.
  o.target_score = 0;
  o.exact = true;
  auto e1 = run_ablation(o);
  auto e2 = run_ablation(o);
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ(to_json(e1.value()).dump(), to_json(e2.value()).dump());
  EXPECT_EQ(e1->target, e1->best_known);
  o.exact = false;
  auto resampled = run_ablation(o);
  ASSERT_TRUE(resampled.ok());
  EXPECT_NE(to_json(e1.value())["configs"][0]["best_at_per_seed"],
            to_json(resampled.value())["configs"][0]["best_at_per_seed"]);
  o.target_score = -1;
  EXPECT_FALSE(run_ablation(o).ok());
}

// arc-replay ablate --baseline and --exclude-family: every campaign starts from the recorded
// candidate named by a prefix of its hash (what the campaigns logged as their baseline), and
// each error names the flag and what was expected.
TEST(Ablate, ABaselineOfTheMeasurementsAndAnExcludedFamily) {
  const fs::path sweep = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax";
  auto log = read_run(sweep);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  std::string seed_hash, seed_family, wrong;
  std::map<std::string, std::string> family_of;  // hash -> family, every proposed candidate
  std::map<std::string, bool> correct;           // hash -> every workload OK
  for (const events::Event& e : log.value()) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      auto c = problem::Candidate::from_canonical(p->canonical);
      ASSERT_TRUE(c.ok());
      family_of[p->candidate_hash] = c->base.family;
      if (seed_hash.empty()) {
        seed_hash = p->candidate_hash;  // a sweep proposes the seed first
        seed_family = c->base.family;
      }
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      const auto* p = e.payload.AsCandidateEvaluated();
      bool ok = !p->workloads.empty();
      for (const auto& w : p->workloads) ok &= w->status == fb::WorkloadStatus::OK;
      correct[p->candidate_hash] = ok;
    }
  }
  std::string baseline;  // a correct point of another family than the seed's
  for (const auto& [hash, ok] : correct) {
    if (ok && baseline.empty() && family_of[hash] != seed_family) baseline = hash;
    if (!ok && wrong.empty()) wrong = hash;
  }
  ASSERT_FALSE(baseline.empty());
  ASSERT_FALSE(wrong.empty());

  auto o = options("bl");
  o.configs = {{"one-agent", {"agents=1"}}, {"four-agents", {}}};
  o.exact = true;
  auto plain = run_ablation(o);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(plain->baseline_hash, seed_hash);
  EXPECT_FALSE(to_json(plain.value()).contains("baseline"));
  EXPECT_EQ(to_table(plain.value()).find("baseline"), std::string::npos);

  o.baseline = baseline.substr(0, 12);
  o.excluded_families = {seed_family};
  o.measured_space = true;
  auto moved = run_ablation(o);
  ASSERT_TRUE(moved.ok()) << moved.status().to_string();
  EXPECT_EQ(moved->baseline_hash, baseline);
  const auto j = to_json(moved.value());
  EXPECT_EQ(j["baseline"], baseline);
  EXPECT_EQ(j["excluded_families"], nlohmann::json::array({seed_family}));
  EXPECT_NE(to_table(moved.value())
                .find("baseline " + baseline.substr(0, 12) + "; without " + seed_family),
            std::string::npos);
  for (const auto& c : moved->configs) {
    EXPECT_GT(c.candidates, 0u) << c.name;
    EXPECT_LT(c.unanswered, c.candidates) << c.name;  // the measured space, less a family
  }
  // Scores are speedups over the new baseline: not those over the seed.
  EXPECT_NE(to_json(plain.value())["configs"][0]["best_at_per_seed"],
            j["configs"][0]["best_at_per_seed"]);
  // A full hash in capitals names the same candidate.
  auto upper = o;
  upper.baseline = baseline;
  for (char& ch : upper.baseline) ch = static_cast<char>(std::toupper(ch));
  auto same = run_ablation(upper);
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ(to_json(same.value()).dump(), j.dump());

  auto error = [&o](const std::string& prefix, std::vector<std::string> excluded) {
    auto bad = o;
    bad.baseline = prefix;
    bad.excluded_families = std::move(excluded);
    auto r = run_ablation(bad);
    EXPECT_FALSE(r.ok()) << prefix;
    return r.ok() ? std::string() : r.status().message();
  };
  std::string unknown = "0";
  while (true) {  // a prefix no recorded hash has
    bool taken = false;
    for (const auto& [hash, f] : family_of) taken |= hash.rfind(unknown, 0) == 0;
    if (!taken) break;
    unknown += "0";
  }
  EXPECT_NE(error(unknown, {})
                .find("--baseline '" + unknown +
                      "': expected the hash (or a unique "
                      "prefix) of a candidate the measurements (--from) recorded"),
            std::string::npos);
  EXPECT_NE(error(seed_hash.substr(0, 1), {}).find("ambiguous"), std::string::npos);
  EXPECT_NE(error("xyz", {}).find("--baseline 'xyz': expected a recorded candidate's hash"),
            std::string::npos);
  EXPECT_NE(error(wrong, {}).find("was not measured correct on workload"), std::string::npos);
  EXPECT_NE(error(seed_hash, {seed_family}).find("which --exclude-family excludes"),
            std::string::npos);
  const std::string no_family = error("", {"no-such-family"});
  EXPECT_NE(no_family.find("--exclude-family 'no-such-family': expected a family of softmax ("),
            std::string::npos)
      << no_family;
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
