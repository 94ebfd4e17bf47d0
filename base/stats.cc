#include "base/stats.h"

#include <algorithm>
#include <cmath>

namespace arc {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double quantile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return quantile_sorted(samples, q);
}

SampleStats summarize_samples(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = quantile_sorted(samples, 0.5);
  s.p25 = quantile_sorted(samples, 0.25);
  s.p75 = quantile_sorted(samples, 0.75);
  s.min = samples.front();
  s.spread = s.median > 0 ? (s.p75 - s.p25) / s.median : 0;
  return s;
}

}  // namespace arc
