#include "base/stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

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

namespace {

// {k, P(Binomial(n, 1/2) <= k - 1)} for the largest k whose tail stays within 1 - confidence
// (k = 1 with P(X = 0) when none does).
std::pair<size_t, double> sign_test(size_t n, double confidence) {
  const double alpha = 1.0 - confidence;
  double cdf = 0;  // P(X <= j - 1)
  for (size_t j = 0; j < n; ++j) {
    // Binomial terms in log space, so that large n cannot overflow.
    const double log_pmf =
        std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(j) + 1) -
        std::lgamma(static_cast<double>(n - j) + 1) - static_cast<double>(n) * std::log(2.0);
    const double next = cdf + std::exp(log_pmf);
    if (next > alpha) return j == 0 ? std::pair<size_t, double>{1, next} : std::pair{j, cdf};
    cdf = next;
  }
  return {std::max<size_t>(n, 1), cdf};
}

}  // namespace

size_t sign_test_rank(size_t n, double confidence) { return sign_test(n, confidence).first; }

MedianBound median_lower_bound(std::vector<double> samples, double confidence) {
  MedianBound b;
  if (samples.empty()) return b;
  std::sort(samples.begin(), samples.end());
  const auto [k, tail] = sign_test(samples.size(), confidence);
  b.rank = k;
  b.bound = samples[k - 1];
  b.confidence = 1.0 - tail;
  return b;
}

}  // namespace arc
