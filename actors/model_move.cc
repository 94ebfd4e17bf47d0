#include "actors/model_move.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/rng.h"

namespace arc::actors {
namespace {

// Independent streams of the pick's seed.
constexpr uint64_t kPoolStream = 1, kExploreStream = 2, kFitStream = 3;

size_t below(Xoshiro256& rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng.next() % n); }

// Rows of `o` in order of target, best first (row order on ties).
std::vector<size_t> ranked(const Observations& o) {
  std::vector<size_t> rows(o.samples.rows());
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::stable_sort(rows.begin(), rows.end(),
                   [&o](size_t a, size_t b) { return o.samples.y[a] < o.samples.y[b]; });
  return rows;
}

// The unvisited configurations to score (header: "the pool").
std::vector<Config> pool_of(const SearchSpace& space, const problem::Variant& anchor,
                            const Observations& o, uint64_t seed, const ModelOptions& options) {
  std::vector<Config> pool;
  if (options.restriction != nullptr && !options.restriction->whole_space) {
    std::set<Config> taken;
    for (const auto& [key, v] : options.restriction->variants) {
      if (!options.restriction->admits(v)) continue;  // an excluded family
      std::optional<Config> c = space.config_of(v);
      if (c && o.visited.count(*c) == 0 && taken.insert(*c).second) pool.push_back(std::move(*c));
    }
    return pool;
  }
  if (space.size() <= options.exhaustive_limit) {
    space.for_each(anchor, [&pool, &o](const Config& c) {
      if (o.visited.count(c) == 0) pool.push_back(c);
    });
    return pool;
  }
  std::set<Config> taken;
  auto take = [&pool, &taken, &o](Config c) {
    if (o.visited.count(c) == 0 && taken.insert(c).second) pool.push_back(std::move(c));
  };
  uint32_t around = 0;
  for (size_t row : ranked(o)) {
    if (around++ >= options.best_neighbours || !o.correct[row]) break;
    for (Config& c : space.neighbours(o.configs[row])) take(std::move(c));
  }
  Xoshiro256 rng(mix64(seed + kPoolStream));
  for (uint32_t i = 0; i < options.samples; ++i) take(space.sample(anchor, rng));
  return pool;
}

}  // namespace

Observations observe(const SearchSpace& space, const CampaignView& view) {
  Observations o;
  o.samples.features = space.features();
  std::vector<double> row(space.features());
  std::vector<double> targets;
  std::vector<Config> failed;
  for (const CandidateRecord& r : view.candidates()) {
    if (!r.candidate.gates.empty()) continue;
    std::optional<Config> c = space.config_of(r.candidate.base);
    if (!c) continue;
    o.visited.insert(*c);
    if (r.evaluated_seq == 0 || r.workloads.empty()) continue;
    bool unanswered = false, correct = !(r.verdict && *r.verdict == fb::Verdict::REJECT);
    double log_time = 0;
    for (const WorkloadOutcome& w : r.workloads) {
      unanswered |= w.unanswered;
      correct &= w.ok && w.median_ns > 0 && std::isfinite(w.median_ns);
      if (correct) log_time += std::log(w.median_ns);
    }
    if (unanswered) continue;
    o.configs.push_back(*c);
    o.correct.push_back(correct);
    targets.push_back(correct ? log_time / static_cast<double>(r.workloads.size()) : 0.0);
    if (correct) ++o.correct_count;
  }
  // A failure's target: worse than every correct observation (header).
  double best = std::numeric_limits<double>::infinity();
  double worst = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!o.correct[i]) continue;
    best = std::min(best, targets[i]);
    worst = std::max(worst, targets[i]);
  }
  const double failure =
      o.correct_count == 0 ? 0.0 : worst + std::max(0.5 * (worst - best), std::log(2.0));
  for (size_t i = 0; i < targets.size(); ++i) {
    space.encode(o.configs[i], row.data());
    o.samples.add(row.data(), o.correct[i] ? targets[i] : failure);
  }
  return o;
}

std::optional<ModelPick> pick_by_model(const SearchSpace& space, const problem::Variant& anchor,
                                       const CampaignView& view, uint64_t seed,
                                       const Admissible& admissible, const ModelOptions& options) {
  if (space.families().empty()) return std::nullopt;
  const Observations o = observe(space, view);
  std::vector<Config> pool = pool_of(space, anchor, o, seed, options);
  if (pool.empty()) return std::nullopt;
  ModelPick pick;
  pick.observations = static_cast<uint32_t>(o.samples.rows());
  pick.pool = static_cast<uint32_t>(pool.size());
  auto admits = [&admissible](const problem::Variant& v) { return !admissible || admissible(v); };

  const auto [lo, hi] = std::minmax_element(o.samples.y.begin(), o.samples.y.end());
  const bool learnable = o.samples.rows() >= options.min_observations && o.correct_count >= 2 &&
                         lo != o.samples.y.end() && *lo < *hi;
  if (!learnable) {
    pick.explored = true;
    Xoshiro256 rng(mix64(seed + kExploreStream));
    std::vector<Config> near;
    const std::vector<size_t> order = ranked(o);
    if ((rng.next() & 1) != 0 && !order.empty() && o.correct[order.front()]) {
      for (Config& c : space.neighbours(o.configs[order.front()])) {
        if (o.visited.count(c) == 0) near.push_back(std::move(c));
      }
    }
    // Draw without replacement until a configuration is admitted: the neighbours, then the pool.
    for (std::vector<Config>* from : {&near, &pool}) {
      while (!from->empty()) {
        const size_t i = below(rng, from->size());
        problem::Variant v = space.variant_of((*from)[i]);
        if (admits(v)) {
          pick.variant = std::move(v);
          return pick;
        }
        (*from)[i] = std::move(from->back());
        from->pop_back();
      }
    }
    return std::nullopt;
  }

  struct Scored {
    double ei = 0;
    Prediction prediction;
    size_t index = 0;
  };
  const Surrogate model = Surrogate::fit(o.samples, mix64(seed + kFitStream), options.surrogate);
  // The improvement is over the model's own prediction at the best observations (plug-in EI):
  // a model that smooths the best time upward would otherwise see no improvement anywhere
  // near it, and its pick would follow the uncertainty alone.
  std::vector<Prediction> fitted(o.samples.rows());
  model.predict(o.samples.x.data(), o.samples.rows(), fitted.data());
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < fitted.size(); ++i) {
    if (o.correct[i]) best = std::min(best, fitted[i].mean);
  }
  const size_t d = space.features();
  std::vector<double> rows(pool.size() * d);
  for (size_t i = 0; i < pool.size(); ++i) space.encode(pool[i], &rows[i * d]);
  std::vector<Prediction> predicted(pool.size());
  model.predict(rows.data(), pool.size(), predicted.data());
  std::vector<Scored> scored(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) {
    scored[i].prediction = predicted[i];
    scored[i].ei = expected_improvement(predicted[i], best);
    scored[i].index = i;
  }
  // Best first: larger improvement, then lower predicted time, then pool order. Usually the
  // first is admitted; the rest is ordered only when the first few are not.
  auto better = [](const Scored& a, const Scored& b) {
    if (a.ei != b.ei) return a.ei > b.ei;
    if (a.prediction.mean != b.prediction.mean) return a.prediction.mean < b.prediction.mean;
    return a.index < b.index;
  };
  const size_t head = std::min<size_t>(scored.size(), 64);
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(head),
                    scored.end(), better);
  for (size_t i = 0; i < scored.size(); ++i) {
    if (i == head)
      std::sort(scored.begin() + static_cast<std::ptrdiff_t>(head), scored.end(), better);
    problem::Variant v = space.variant_of(pool[scored[i].index]);
    if (!admits(v)) continue;
    pick.variant = std::move(v);
    pick.prediction = scored[i].prediction;
    pick.expected_improvement = scored[i].ei;
    return pick;
  }
  return std::nullopt;
}

}  // namespace arc::actors
