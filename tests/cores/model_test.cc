// The model move's parts: the surrogate (actors/surrogate.h), the search space and its features
// (actors/search_space.h), the pick (actors/model_move.h), and a builtin agent in a skill with
// the model move (actors/agent_core.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "actors/agent_core.h"
#include "actors/model_move.h"
#include "actors/search_space.h"
#include "actors/surrogate.h"
#include "base/rng.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::evaluation;
using testing::proposal;

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mb += b[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// A separable function of four features in [0, 1]; the last one does not matter.
double separable(const double* x) {
  return 4 * (x[0] - 0.3) * (x[0] - 0.3) + 2 * std::abs(x[1] - 0.7) + 0.5 * x[2];
}

Samples draw(size_t rows, uint64_t seed) {
  Samples s;
  s.features = 4;
  Xoshiro256 rng(seed);
  for (size_t i = 0; i < rows; ++i) {
    double x[4];
    // Knob-like: each feature takes one of 8 levels.
    for (double& v : x) v = static_cast<double>(rng.next() % 8) / 7.0;
    s.add(x, separable(x));
  }
  return s;
}

TEST(Surrogate, PredictionsOfASeparableFunctionCorrelateWithTheTruth) {
  const Samples train = draw(80, 1);
  const Samples test = draw(400, 2);
  const Surrogate model = Surrogate::fit(train, 7);
  EXPECT_EQ(model.features(), 4u);
  EXPECT_EQ(model.trees(), 8u * 16u);
  std::vector<double> predicted;
  for (size_t i = 0; i < test.rows(); ++i) {
    predicted.push_back(model.predict(&test.x[i * 4]).mean);
  }
  const double r = pearson(predicted, test.y);
  std::printf("surrogate: Pearson r = %.3f on 400 unseen points (80 observations)\n", r);
  EXPECT_GT(r, 0.85);
  // The training rows themselves are fitted closely.
  double worst = 0;
  for (size_t i = 0; i < train.rows(); ++i) {
    worst = std::max(worst, std::abs(model.predict(&train.x[i * 4]).mean - train.y[i]));
  }
  EXPECT_LT(worst, 0.5);
}

TEST(Surrogate, IsAFunctionOfItsSamplesAndSeed) {
  const Samples train = draw(40, 3);
  const Surrogate a = Surrogate::fit(train, 11), b = Surrogate::fit(train, 11);
  const Surrogate c = Surrogate::fit(train, 12);
  const Samples test = draw(50, 4);
  bool differs = false;
  for (size_t i = 0; i < test.rows(); ++i) {
    const Prediction pa = a.predict(&test.x[i * 4]), pb = b.predict(&test.x[i * 4]);
    EXPECT_EQ(pa.mean, pb.mean);  // bit for bit
    EXPECT_EQ(pa.stddev, pb.stddev);
    const Prediction pc = c.predict(&test.x[i * 4]);
    differs |= pc.mean != pa.mean || pc.stddev != pa.stddev;
  }
  EXPECT_TRUE(differs) << "another seed resamples other bootstraps";
  // Many rows at once: the same predictions, bit for bit.
  std::vector<Prediction> batch(test.rows());
  a.predict(test.x.data(), test.rows(), batch.data());
  for (size_t i = 0; i < test.rows(); ++i) {
    EXPECT_EQ(batch[i].mean, a.predict(&test.x[i * 4]).mean) << i;
    EXPECT_EQ(batch[i].stddev, a.predict(&test.x[i * 4]).stddev) << i;
  }
}

TEST(Surrogate, MembersDisagreeWhereTheDataDoes) {
  // y depends on x only through a noisy half: the ensemble's spread is not zero there, and
  // zero for a single member.
  Samples s;
  s.features = 1;
  for (int i = 0; i < 20; ++i) {
    const double x = i < 10 ? 0.0 : 1.0;
    s.add(&x, i < 10 ? 1.0 : (i % 2 == 0 ? 2.0 : 4.0));
  }
  const double right = 1.0;
  EXPECT_GT(Surrogate::fit(s, 5).predict(&right).stddev, 0.0);
  SurrogateOptions one;
  one.members = 1;
  EXPECT_EQ(Surrogate::fit(s, 5, one).predict(&right).stddev, 0.0);
  const Surrogate empty = Surrogate::fit(Samples{1, {}, {}}, 5);
  EXPECT_EQ(empty.predict(&right).mean, 0.0);
}

TEST(ExpectedImprovement, IsTheGapWithoutUncertaintyAndGrowsWithIt) {
  EXPECT_DOUBLE_EQ(expected_improvement({1.0, 0.0}, 3.0), 2.0);
  EXPECT_DOUBLE_EQ(expected_improvement({4.0, 0.0}, 3.0), 0.0);
  // At the best, with sd 1: E[max(-Z, 0)] = 1/sqrt(2 pi).
  EXPECT_NEAR(expected_improvement({3.0, 1.0}, 3.0), 0.3989422804, 1e-9);
  EXPECT_GT(expected_improvement({3.5, 2.0}, 3.0), expected_improvement({3.5, 0.5}, 3.0));
  EXPECT_GT(expected_improvement({2.0, 0.5}, 3.0), expected_improvement({2.5, 0.5}, 3.0));
}

// ---------------------------------------------------------------------------------------------
// The search space

problem::Problem mixed_problem() {
  problem::Problem p = testing::toy_problem();  // alpha{TILE_M 8..64, VEC 1,2,4}, beta{...}
  problem::Family c;
  c.name = "gamma";
  c.knobs = {{"MODE", {"fast", "safe", "odd"}, "safe"}, {"PREFETCH", {"0", "16", "64"}, "0"}};
  p.families.push_back(c);
  return p;
}

skills::Skill model_skill(std::vector<std::string> knobs = {"*"},
                          std::vector<std::string> families = {"*"}) {
  skills::Skill s = testing::skill("model", std::move(knobs), {{"model", 6}, {"neighbour", 1}});
  s.families = std::move(families);
  s.opt_in = true;
  return s;
}

TEST(SearchSpace, FeaturesScaleNumbersOrdinalsAndFamilies) {
  const problem::Problem p = mixed_problem();
  const SearchSpace space(p, model_skill());
  ASSERT_EQ(space.families().size(), 3u);
  EXPECT_EQ(space.size(), 4.0 * 3 + 2 * 4 + 3 * 3);
  // 3 family columns, then MODE, PREFETCH, TILE_M, UNROLL, VEC.
  ASSERT_EQ(space.features(), 8u);
  problem::Variant v{"alpha", {{"TILE_M", "32"}, {"VEC", "4"}}, ""};
  auto c = space.config_of(v);
  ASSERT_TRUE(c.has_value());
  std::vector<double> row(8);
  space.encode(*c, row.data());
  // TILE_M over {8..64} in both families: log2, 32 -> (5 - 3) / 3. VEC {1,2,4}: log2, 4 -> 1.
  EXPECT_EQ(row, (std::vector<double>{1, 0, 0, -1, -1, 2.0 / 3, -1, 1}));
  auto g = space.config_of(problem::Variant{"gamma", {{"MODE", "odd"}, {"PREFETCH", "16"}}, ""});
  ASSERT_TRUE(g.has_value());
  space.encode(*g, row.data());
  // MODE is no number: its ordinal. PREFETCH {0, 16, 64}: log2 with 0 one step below 16.
  EXPECT_EQ(row, (std::vector<double>{0, 0, 1, 1, 1.0 / 3, -1, -1, -1}));
  // A round trip, defaults filled in.
  EXPECT_EQ(space.variant_of(*space.config_of(problem::Variant{"beta", {}, ""})),
            (problem::Variant{"beta", {{"TILE_M", "16"}, {"UNROLL", "1"}}, ""}));
  EXPECT_FALSE(space.config_of(problem::Variant{"alpha", {{"VEC", "3"}}, ""}).has_value());
  EXPECT_FALSE(space.config_of(problem::Variant{"delta", {}, ""}).has_value());
  EXPECT_FALSE(space.config_of(problem::Variant{"alpha", {}, "int main;"}).has_value());
}

TEST(SearchSpace, EnumeratesEveryConfigurationOnceAndKeepsKnobsOutOfScope) {
  const problem::Problem p = mixed_problem();
  const SearchSpace all(p, model_skill());
  std::set<Config> seen;
  size_t n = 0;
  all.for_each(p.seed.base, [&](const Config& c) {
    ++n;
    seen.insert(c);
  });
  EXPECT_EQ(n, 29u);
  EXPECT_EQ(seen.size(), 29u);
  // Only TILE_* in scope, alpha and beta: the anchor's VEC (alpha) is kept, UNROLL defaults.
  const SearchSpace tiles(p, model_skill({"TILE_*"}, {"alpha", "beta"}));
  EXPECT_EQ(tiles.size(), 4.0 + 2.0);
  const problem::Variant anchor{"alpha", {{"TILE_M", "8"}, {"VEC", "2"}}, ""};
  std::vector<problem::Variant> variants;
  tiles.for_each(anchor, [&](const Config& c) { variants.push_back(tiles.variant_of(c)); });
  ASSERT_EQ(variants.size(), 6u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(variants[i].knobs.at("VEC"), "2");
  EXPECT_EQ(variants[4].knobs.at("UNROLL"), "1");
  EXPECT_EQ(variants[5].knobs.at("TILE_M"), "32");
  Xoshiro256 rng(3);
  for (int i = 0; i < 50; ++i) {
    const problem::Variant s = tiles.variant_of(tiles.sample(anchor, rng));
    if (s.family == "alpha") {
      EXPECT_EQ(s.knobs.at("VEC"), "2");
    }
  }
  // Neighbours: one knob in scope, one step.
  auto c = tiles.config_of(anchor);
  ASSERT_TRUE(c.has_value());
  const auto near = tiles.neighbours(*c);
  ASSERT_EQ(near.size(), 1u);
  EXPECT_EQ(tiles.variant_of(near[0]).knobs.at("TILE_M"), "16");
}

// ---------------------------------------------------------------------------------------------
// The pick

// A 16 x 16 grid, one family, numeric knobs X and Y.
problem::Problem grid_problem() {
  problem::Problem p = testing::toy_problem();
  problem::Family f;
  f.name = "grid";
  std::vector<std::string> values;
  for (int i = 0; i < 16; ++i) values.push_back(std::to_string(i));
  f.knobs = {{"X", values, "0"}, {"Y", values, "0"}};
  p.families = {f};
  p.seed.base = f.default_variant();
  return p;
}

problem::Candidate at(int x, int y) {
  problem::Candidate c;
  c.base = {"grid", {{"X", std::to_string(x)}, {"Y", std::to_string(y)}}, ""};
  return c;
}

// log time of (x, y): a bowl around (11, 4).
double bowl(int x, int y) { return ((x - 11) * (x - 11) + (y - 4) * (y - 4)) / 20.0; }

class Observed {
 public:
  Observed() : view_({"small", "large"}) {}
  // Evaluates c at exp(log_time) on both workloads; a failure when `ok` is false.
  void add(const problem::Candidate& c, double log_time, bool ok = true,
           fb::WorkloadStatus status = fb::WorkloadStatus::WRONG_RESULT) {
    auto p = proposal("a", c, "m");
    view_.apply(log_.add("a", p));
    auto e = evaluation(p.candidate_hash, {std::exp(log_time), std::exp(log_time)});
    if (!ok) e.workloads[1]->status = status;
    view_.apply(log_.add(kGuardActor, e));
    fb::DecisionT d;
    d.agent = "a";
    d.candidate_hash = p.candidate_hash;
    d.verdict = ok ? fb::Verdict::REVERT : fb::Verdict::REJECT;
    view_.apply(log_.add(kGuardActor, d));
  }
  void propose_only(const problem::Candidate& c) {
    view_.apply(log_.add("a", proposal("a", c, "m")));
  }
  const CampaignView& view() const { return view_; }

 private:
  CampaignView view_;
  testing::LogBuilder log_;
};

TEST(ModelMove, ObservationsMarkFailuresBadAndSkipTheUnknown) {
  const problem::Problem p = grid_problem();
  const SearchSpace space(p, model_skill());
  Observed o;
  o.add(at(0, 0), 1.0);
  o.add(at(1, 0), 3.0);
  o.add(at(2, 0), 0.0, false);                                  // failed
  o.add(at(3, 0), 0.0, false, fb::WorkloadStatus::UNANSWERED);  // says nothing
  o.propose_only(at(4, 0));                                     // not evaluated yet
  problem::Candidate gated = at(5, 0);
  gated.gates["small"] = at(6, 0).base;
  o.add(gated, 0.5);  // a composition: no point of the space
  const Observations obs = observe(space, o.view());
  EXPECT_EQ(obs.samples.rows(), 3u);
  EXPECT_EQ(obs.correct_count, 2u);
  EXPECT_DOUBLE_EQ(obs.samples.y[0], 1.0);
  EXPECT_DOUBLE_EQ(obs.samples.y[1], 3.0);
  // Worst correct + max(half the spread, log 2) = 3 + 1.
  EXPECT_DOUBLE_EQ(obs.samples.y[2], 4.0);
  EXPECT_EQ(obs.visited.size(), 5u);  // all but the gated one
  EXPECT_EQ(obs.visited.count(*space.config_of(at(3, 0).base)), 1u);
  EXPECT_EQ(obs.visited.count(*space.config_of(at(4, 0).base)), 1u);
}

TEST(ModelMove, ExpectedImprovementPrefersTheUnvisitedOptimumRegion) {
  const problem::Problem p = grid_problem();
  const SearchSpace space(p, model_skill());
  Observed o;
  // 40 observations anywhere but within 2 steps of the optimum (11, 4).
  Xoshiro256 rng(9);
  std::set<std::pair<int, int>> seen;
  double best_seen = 1e9;
  while (seen.size() < 40) {
    const int x = static_cast<int>(rng.next() % 16), y = static_cast<int>(rng.next() % 16);
    if ((std::abs(x - 11) <= 2 && std::abs(y - 4) <= 2) || !seen.insert({x, y}).second) continue;
    o.add(at(x, y), bowl(x, y));
    best_seen = std::min(best_seen, bowl(x, y));
  }
  int inside = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto pick = pick_by_model(space, p.seed.base, o.view(), seed);
    ASSERT_TRUE(pick.has_value());
    EXPECT_FALSE(pick->explored);
    EXPECT_EQ(pick->observations, 40u);
    EXPECT_EQ(pick->pool, 256u - 40u);
    EXPECT_GT(pick->expected_improvement, 0.0);
    const int x = std::stoi(pick->variant.knobs.at("X")),
              y = std::stoi(pick->variant.knobs.at("Y"));
    EXPECT_EQ(seen.count({x, y}), 0u) << "a visited configuration";
    EXPECT_LT(bowl(x, y), best_seen) << "seed " << seed << " picked (" << x << ", " << y << ")";
    inside += std::abs(x - 11) <= 2 && std::abs(y - 4) <= 2 ? 1 : 0;
  }
  EXPECT_GE(inside, 4) << "the picks should land in the unexplored optimum region";
}

TEST(ModelMove, SameSeedAndViewGiveTheSamePickAndTooFewObservationsExplore) {
  const problem::Problem p = grid_problem();
  const SearchSpace space(p, model_skill());
  Observed few;
  for (int i = 0; i < 5; ++i) few.add(at(i, i), bowl(i, i));
  std::set<std::string> picks;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto a = pick_by_model(space, p.seed.base, few.view(), seed);
    auto b = pick_by_model(space, p.seed.base, few.view(), seed);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->explored);
    EXPECT_EQ(a->variant, b->variant);
    picks.insert(a->variant.key());
  }
  EXPECT_GT(picks.size(), 1u) << "exploration should depend on the seed";

  Observed many;
  Xoshiro256 rng(4);
  for (int i = 0; i < 30; ++i) {
    const int x = static_cast<int>(rng.next() % 16), y = static_cast<int>(rng.next() % 16);
    many.add(at(x, y), bowl(x, y));
  }
  auto a = pick_by_model(space, p.seed.base, many.view(), 77);
  auto b = pick_by_model(space, p.seed.base, many.view(), 77);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->explored);
  EXPECT_EQ(a->variant, b->variant);
  EXPECT_EQ(a->expected_improvement, b->expected_improvement);
}

TEST(ModelMove, LargeSpacesAreSampledAroundTheBestAndNothingVisitedIsPicked) {
  const problem::Problem p = grid_problem();
  const SearchSpace space(p, model_skill());
  ModelOptions small;
  small.exhaustive_limit = 100;  // the grid's 256 are "large" here
  small.samples = 40;
  Observed o;
  for (int x = 0; x < 16; x += 3) {
    for (int y = 0; y < 16; y += 3) o.add(at(x, y), bowl(x, y));
  }
  auto pick = pick_by_model(space, p.seed.base, o.view(), 5, {}, small);
  ASSERT_TRUE(pick.has_value());
  EXPECT_FALSE(pick->explored);
  EXPECT_LE(pick->pool, 40u + 4u * 4u);
  EXPECT_GT(pick->pool, 4u);
  EXPECT_EQ(observe(space, o.view()).visited.count(*space.config_of(pick->variant)), 0u);
}

TEST(ModelMove, PicksOnlyWhatTheCallerAdmits) {
  const problem::Problem p = grid_problem();
  const SearchSpace space(p, model_skill());
  auto left_half = [](const problem::Variant& v) { return std::stoi(v.knobs.at("X")) < 8; };
  auto none = [](const problem::Variant&) { return false; };
  Observed few, many;
  for (int i = 0; i < 3; ++i) few.add(at(i, i), bowl(i, i));
  for (int x = 0; x < 16; x += 4) {
    for (int y = 0; y < 16; y += 4) many.add(at(x, y), bowl(x, y));
  }
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (const Observed* o : {&few, &many}) {
      auto pick = pick_by_model(space, p.seed.base, o->view(), seed, left_half);
      ASSERT_TRUE(pick.has_value());
      EXPECT_EQ(pick->explored, o == &few);
      EXPECT_LT(std::stoi(pick->variant.knobs.at("X")), 8) << pick->variant.key();
      EXPECT_FALSE(pick_by_model(space, p.seed.base, o->view(), seed, none).has_value());
    }
  }
  // Unrestricted, the model heads for the optimum at X = 11.
  auto free = pick_by_model(space, p.seed.base, many.view(), 1);
  ASSERT_TRUE(free.has_value());
  EXPECT_GE(std::stoi(free->variant.knobs.at("X")), 8) << free->variant.key();
}

TEST(ModelMove, NothingLeftWhenEveryConfigurationIsVisited) {
  problem::Problem p = grid_problem();
  p.families[0].knobs[0].values = {"0", "1"};
  p.families[0].knobs[1].values = {"0", "1"};
  const SearchSpace space(p, model_skill());
  Observed o;
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 2; ++y) o.add(at(x, y), x + y);
  }
  EXPECT_FALSE(pick_by_model(space, p.seed.base, o.view(), 1).has_value());
}

// ---------------------------------------------------------------------------------------------
// A builtin agent in the model skill, on the toy problem (alpha 4 x 3 + beta 2 x 4 = 20
// configurations), each candidate evaluated by a made-up time.

double toy_log_time(const problem::Variant& v) {
  double t = v.family == "alpha" ? 1.0 : 0.6;
  for (const auto& [k, val] : v.knobs) t += 0.1 * std::log2(std::stod(val)) * (k == "VEC" ? -1 : 1);
  return t;
}

class ModelAgent : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    skills_ = testing::toy_skills();
    skills_.push_back(model_skill());
    view_ = CampaignView({"small", "large"});
    testing::open_campaign(log_, problem_, {"m"}, [this](const events::Event& e) { apply(e); });
  }
  void apply(const events::Event& e) {
    view_.apply(e);
    memory_.apply(e);
    for (auto& c : cores_) c->apply(e);
  }
  AgentCore& add(uint64_t seed, const std::string& skill = "model") {
    cores_.push_back(std::make_unique<AgentCore>(AgentSetup{"m", 0, skill, seed, true, true, nullptr},
                                                 problem_, skills_));
    return *cores_.back();
  }
  // Logs p, its evaluation and a decision against the agent's incumbent.
  void run(const Proposal& p) {
    if (p.drafted) apply(log_.add("m", *p.drafted));
    apply(log_.add("m", *p.proposed));
    auto c = problem::Candidate::from_canonical(p.proposed->canonical);
    ASSERT_TRUE(c.ok());
    const double t = std::exp(toy_log_time(c->base));
    apply(log_.add(kGuardActor, evaluation(p.proposed->candidate_hash, {1000 * t, 8000 * t})));
    fb::DecisionT d;
    d.agent = "m";
    d.candidate_hash = p.proposed->candidate_hash;
    d.score = std::exp(toy_log_time(problem_.seed.base)) / t;
    d.verdict =
        d.score > view_.incumbent("m")->score * 1.02 ? fb::Verdict::KEEP : fb::Verdict::REVERT;
    apply(log_.add(kGuardActor, d));
  }

  problem::Problem problem_;
  std::vector<skills::Skill> skills_;
  CampaignView view_;
  MemoryCore memory_;
  testing::LogBuilder log_;
  std::vector<std::unique_ptr<AgentCore>> cores_;
};

TEST_F(ModelAgent, NeverProposesAVisitedConfigurationUntilTheSpaceIsExhausted) {
  AgentCore& a = add(7);
  const SearchSpace space(problem_, skills_.back());
  std::set<Config> visited{*space.config_of(problem_.seed.base)};
  std::map<std::string, int> kinds;
  for (int i = 0; i < 19; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value()) << "step " << i << ": " << p.idle_reason;
    EXPECT_FALSE(p.drafted.has_value()) << "an opt-in skill is kept";
    EXPECT_EQ(p.proposed->skill, "model");
    auto c = problem::Candidate::from_canonical(p.proposed->canonical);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->gates.empty());
    auto config = space.config_of(c->base);
    ASSERT_TRUE(config.has_value());
    EXPECT_TRUE(visited.insert(*config).second) << "step " << i << " repeated " << p.proposed->move;
    kinds[p.proposed->move.substr(0, p.proposed->move.find(':', 6))]++;
    run(p);
  }
  EXPECT_EQ(visited.size(), 20u);
  EXPECT_GT(kinds["model:ei"], 0) << "the model proposes once it has 8 observations";
  EXPECT_GT(kinds["model:explore"], 0) << "and explores before";
  // Every configuration is visited: nothing new from this or any other skill.
  Proposal last = a.propose(view_, memory_.recall("softmax"));
  EXPECT_FALSE(last.proposed.has_value());
}

// A restriction of the space (arc-replay ablate --space measured): with it, every proposal of
// a model agent and of a knob agent lies in it, and the model agent visits all of it and then
// has nothing left; without it, the same agents leave it.
TEST_F(ModelAgent, ARestrictionKeepsEveryProposalInsideItAndWithoutOneAgentsLeaveIt) {
  const SearchSpace space(problem_, skills_.back());
  auto restriction = std::make_shared<VariantRestriction>();
  size_t i = 0;
  space.for_each(problem_.seed.base, [&](const Config& c) {
    problem::Variant v = space.variant_of(c);
    if (i++ % 3 == 0 || v == problem_.seed.base) restriction->variants.emplace(v.key(), v);
  });
  ASSERT_GT(restriction->variants.size(), 4u);
  ASSERT_LT(restriction->variants.size(), 20u);
  ASSERT_TRUE(restriction->admits(problem_.seed));
  cores_.push_back(std::make_unique<AgentCore>(
      AgentSetup{"m", 0, "model", 7, true, true, restriction}, problem_, skills_));
  AgentCore& a = *cores_.back();
  cores_.push_back(std::make_unique<AgentCore>(
      AgentSetup{"m", 0, "tiling", 7, true, true, restriction}, problem_, skills_));
  const AgentCore& knobs = *cores_.back();
  size_t proposed = 0;
  for (int step = 0; step < 40; ++step) {
    for (const AgentCore* core : {&knobs, static_cast<const AgentCore*>(&a)}) {
      Proposal p = core->propose(view_, memory_.recall("softmax"));
      if (!p.proposed) continue;
      auto c = problem::Candidate::from_canonical(p.proposed->canonical);
      ASSERT_TRUE(c.ok());
      EXPECT_TRUE(restriction->admits(*c)) << p.proposed->move << ": " << c->base.key();
    }
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    if (!p.proposed) break;
    ++proposed;
    run(p);
  }
  // The model agent proposed every listed configuration but the seed, then nothing.
  EXPECT_EQ(proposed, restriction->variants.size() - 1);
  EXPECT_FALSE(a.propose(view_, memory_.recall("softmax")).proposed.has_value());
  EXPECT_FALSE(knobs.propose(view_, memory_.recall("softmax")).proposed.has_value());

  // Unrestricted agents on the same log propose outside the restriction.
  AgentCore& free_model = add(7);
  AgentCore& free_knobs = add(7, "tiling");
  for (const AgentCore* core : {&free_model, &free_knobs}) {
    Proposal p = core->propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value()) << p.idle_reason;
    auto c = problem::Candidate::from_canonical(p.proposed->canonical);
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(restriction->admits(*c)) << c->base.key();
  }
}

// A restriction away from a family (arc-replay ablate --exclude-family), over the whole space or
// over listed variants: no proposal of a model agent or a knob agent is of that family, though
// that family is the faster one, and the model agent visits the rest of the space and stops.
TEST_F(ModelAgent, AnExcludedFamilyIsNeverProposed) {
  const SearchSpace space(problem_, skills_.back());
  auto whole = std::make_shared<VariantRestriction>();
  whole->whole_space = true;
  whole->excluded_families = {"beta"};
  auto listed = std::make_shared<VariantRestriction>(*whole);
  listed->whole_space = false;
  size_t alpha = 0;
  space.for_each(problem_.seed.base, [&](const Config& c) {
    problem::Variant v = space.variant_of(c);
    alpha += v.family == "alpha" ? 1 : 0;
    listed->variants.emplace(v.key(), v);
  });
  ASSERT_EQ(alpha, 12u);
  problem::Variant beta = problem_.families[1].default_variant();
  EXPECT_FALSE(whole->admits(beta));
  EXPECT_FALSE(listed->admits(beta));
  EXPECT_TRUE(whole->admits(problem_.seed));
  EXPECT_TRUE(listed->admits(problem_.seed));
  auto restart = [this] {  // a fresh campaign: no agents, the seed decided
    cores_.clear();
    log_ = testing::LogBuilder();
    view_ = CampaignView({"small", "large"});
    memory_ = MemoryCore();
    testing::open_campaign(log_, problem_, {"m"}, [this](const events::Event& e) { apply(e); });
  };
  for (const auto& restriction : {whole, listed}) {
    restart();
    cores_.push_back(std::make_unique<AgentCore>(
        AgentSetup{"m", 0, "model", 7, true, true, restriction}, problem_, skills_));
    AgentCore& a = *cores_.back();
    cores_.push_back(std::make_unique<AgentCore>(
        AgentSetup{"m", 0, "tiling", 7, true, true, restriction}, problem_, skills_));
    const AgentCore& knobs = *cores_.back();
    size_t proposed = 0;
    for (int step = 0; step < 40; ++step) {
      for (const AgentCore* core : {&knobs, static_cast<const AgentCore*>(&a)}) {
        Proposal p = core->propose(view_, memory_.recall("softmax"));
        if (!p.proposed) continue;
        auto c = problem::Candidate::from_canonical(p.proposed->canonical);
        ASSERT_TRUE(c.ok());
        EXPECT_EQ(c->base.family, "alpha") << p.proposed->move;
      }
      Proposal p = a.propose(view_, memory_.recall("softmax"));
      if (!p.proposed) break;
      ++proposed;
      run(p);
    }
    EXPECT_EQ(proposed, alpha - 1) << (restriction->whole_space ? "whole space" : "listed");
  }
  // Without the restriction the model agent goes to the faster family.
  restart();
  AgentCore& free_model = add(7);
  bool beta_proposed = false;
  for (int step = 0; step < 20 && !beta_proposed; ++step) {
    Proposal p = free_model.propose(view_, memory_.recall("softmax"));
    if (!p.proposed) break;
    auto c = problem::Candidate::from_canonical(p.proposed->canonical);
    ASSERT_TRUE(c.ok());
    beta_proposed = c->base.family == "beta";
    run(p);
  }
  EXPECT_TRUE(beta_proposed);
}

TEST_F(ModelAgent, SameSeedAndLogGiveTheSameProposalsAndAnotherSeedOthers) {
  AgentCore& a = add(7);
  AgentCore& twin = add(7);
  AgentCore& other = add(8);
  bool differs = false;
  for (int i = 0; i < 12; ++i) {
    Proposal p = a.propose(view_, memory_.recall("softmax"));
    Proposal q = twin.propose(view_, memory_.recall("softmax"));
    Proposal r = other.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed && q.proposed && r.proposed);
    EXPECT_TRUE(*p.proposed == *q.proposed) << "step " << i;
    differs |= p.proposed->candidate_hash != r.proposed->candidate_hash;
    run(p);  // all three see the same log
  }
  EXPECT_TRUE(differs);
}

TEST_F(ModelAgent, DraftsNeverSwitchIntoAnOptInSkillAndItsAgentsKeepItOnPlateau) {
  AgentCore& tiler = add(7, "tiling");
  std::set<std::string> skills;
  for (int i = 0; i < 5; ++i) {  // TILE_M has 3 other values: then it drafts
    Proposal p = tiler.propose(view_, memory_.recall("softmax"));
    ASSERT_TRUE(p.proposed.has_value()) << p.idle_reason;
    skills.insert(p.proposed->skill);
    run(p);
  }
  EXPECT_GT(skills.size(), 1u) << "the tiler drafts when tiling runs out";
  EXPECT_EQ(skills.count("model"), 0u);

  AgentCore& modeller = add(7, "model");
  fb::PlateauDetectedT pl;
  pl.agent = "m";
  pl.scope = fb::PlateauScope::AGENT;
  apply(log_.add("plateau", pl));
  ASSERT_TRUE(modeller.draft_pending());
  Proposal p = modeller.propose(view_, memory_.recall("softmax"));
  EXPECT_FALSE(p.drafted.has_value());
  EXPECT_FALSE(p.inspected.has_value());
  ASSERT_TRUE(p.proposed.has_value()) << p.idle_reason;
  EXPECT_EQ(p.proposed->skill, "model");
}

}  // namespace
}  // namespace arc::actors
