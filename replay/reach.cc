#include "replay/reach.h"

#include "base/rng.h"
#include "base/stats.h"

namespace arc::replay {
namespace {

// A censored seed: more candidates than any budget. Finite, so that interpolating between order
// statistics stays defined; any interpolation touching it lands above kCensoredFrom.
constexpr double kCensored = 1e18;
constexpr double kCensoredFrom = 1e17;

double median_or_censored(std::vector<double> v) {
  const double m = arc::quantile(std::move(v), 0.5);
  return m >= kCensoredFrom ? -1 : m;
}

}  // namespace

double first_reaching(const BestCurve& curve, double target) {
  for (const auto& [i, best] : curve) {
    if (best >= target) return i;
  }
  return -1;
}

ReachStats reach_stats(const std::vector<double>& needed, uint32_t resamples, uint64_t seed) {
  ReachStats r;
  r.seeds = static_cast<uint32_t>(needed.size());
  if (needed.empty()) return r;
  std::vector<double> v;
  v.reserve(needed.size());
  for (double n : needed) {
    v.push_back(n < 0 ? kCensored : n);
    r.reached += n < 0 ? 0 : 1;
  }
  r.median = median_or_censored(v);
  if (resamples == 0) return r;
  std::vector<double> medians;
  medians.reserve(resamples);
  uint64_t s = seed;
  std::vector<double> draw(v.size());
  for (uint32_t k = 0; k < resamples; ++k) {
    for (auto& d : draw) d = v[arc::splitmix64(&s) % v.size()];
    medians.push_back(arc::quantile(draw, 0.5));
  }
  const double low = arc::quantile(medians, 0.025), high = arc::quantile(medians, 0.975);
  r.low = low >= kCensoredFrom ? -1 : low;
  r.high = high >= kCensoredFrom ? -1 : high;
  return r;
}

}  // namespace arc::replay
