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

MedianBound median_lower_bound(std::vector<double> samples, double confidence) {
  MedianBound b;
  const size_t n = samples.size();
  if (n == 0) return b;
  std::sort(samples.begin(), samples.end());
  // cdf[j] = P(X <= j) for X ~ Binomial(n, 1/2), in log space so large n cannot overflow.
  const double alpha = 1.0 - confidence;
  double cdf = 0;
  size_t k = n;  // every count's tail within alpha (a confidence near 0): the largest
  for (size_t j = 0; j < n; ++j) {
    const double log_pmf =
        std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(j) + 1) -
        std::lgamma(static_cast<double>(n - j) + 1) - static_cast<double>(n) * std::log(2.0);
    const double next = cdf + std::exp(log_pmf);
    if (next > alpha) {
      // k - 1 = j - 1 is the last count whose tail stays within alpha.
      k = std::max<size_t>(j, 1);
      if (j == 0) cdf = next;  // not even the smallest reaches the confidence
      break;
    }
    cdf = next;
  }
  b.rank = k;
  b.bound = samples[k - 1];
  b.confidence = 1.0 - cdf;
  return b;
}

}  // namespace arc
