#pragma once
// Candidates to reach a target: how many candidates a search needed before its best so far
// reached a score, over seeds, as the median with a bootstrap confidence interval. A seed whose
// search never reached it is censored (counted as needing more than any budget), so the median
// and the bounds exist only where enough seeds reached it. Used by arc-replay ablate, and the
// same method is used for Kernel Tuner's strategies by tools/kt_compare.py
// (docs/replay-science.md).
#include <cstdint>
#include <utility>
#include <vector>

namespace arc::replay {

// A best-so-far curve: (candidate index, best score after it), indexes increasing.
using BestCurve = std::vector<std::pair<uint32_t, double>>;

// The first candidate index whose best so far is at least `target`; -1 when none is.
double first_reaching(const BestCurve& curve, double target);

struct ReachStats {
  // Median over seeds of the candidates needed (linear interpolation between order
  // statistics, base/stats.h); -1 when half the seeds or more never reached the target.
  double median = -1;
  // Percentile bootstrap 95% interval of that median (seeds resampled with replacement);
  // -1 for a bound that is censored (the resampled median not reached).
  double low = -1, high = -1;
  uint32_t reached = 0;  // seeds that reached the target
  uint32_t seeds = 0;
};

// `needed`: per seed, first_reaching() of its curve (-1: never). `resamples` bootstrap
// resamples drawn with splitmix64 from `seed`: the same statistics on every machine.
ReachStats reach_stats(const std::vector<double>& needed, uint32_t resamples, uint64_t seed);

}  // namespace arc::replay
