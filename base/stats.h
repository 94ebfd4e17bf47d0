#pragma once
// Order statistics of measured samples, the one definition every module uses (the worker's
// statistics, the replay evaluator's bootstrap, confirmation, ablation, plots).
#include <cstddef>
#include <vector>

namespace arc {

// The q-quantile (0 <= q <= 1) of ascending `sorted` by linear interpolation between order
// statistics (numpy's default, "linear"); 0 for no samples.
double quantile_sorted(const std::vector<double>& sorted, double q);
// The same of unsorted samples.
double quantile(std::vector<double> samples, double q);
inline double median(std::vector<double> samples) { return quantile(std::move(samples), 0.5); }

struct SampleStats {
  double median = 0, p25 = 0, p75 = 0, min = 0;
  double spread = 0;  // (p75 - p25) / median; 0 when the median is 0
};
// Median, quartiles (quantile() above), minimum and spread; all 0 for no samples.
SampleStats summarize_samples(std::vector<double> samples);

// A distribution-free lower confidence bound of the median of `samples` (the sign test's order
// statistic): the k-th smallest sample for the largest k with P(Binomial(n, 1/2) <= k - 1) <=
// 1 - confidence, so that the true median lies above it with at least `confidence`. Too few
// samples for that confidence (n < 5 at 0.95): the smallest, with the confidence it carries
// (1 - 2^-n). No samples: {0, 0}.
struct MedianBound {
  double bound = 0;
  double confidence = 0;  // achieved: 1 - P(Binomial(n, 1/2) <= k - 1)
  size_t rank = 0;        // k, 1-based
};
MedianBound median_lower_bound(std::vector<double> samples, double confidence);
// The rank k median_lower_bound() uses for n samples (1 for n = 0).
size_t sign_test_rank(size_t n, double confidence);

}  // namespace arc
