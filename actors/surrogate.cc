#include "actors/surrogate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/rng.h"

namespace arc::actors {
namespace {

// A split must reduce the weighted squared error by more than this to be made.
constexpr double kMinGain = 1e-12;
// Trees are stored complete (2^depth leaves each): a bound on what that costs.
constexpr uint32_t kMostDepth = 12;

size_t below(Xoshiro256& rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng.next() % n); }

// Grows the regression trees of one fit. Each feature's values are binned once (the sorted
// distinct values the samples take), so finding a node's best split is one pass over its rows
// and one over the bins per feature: O(rows x features) per tree level.
class TreeGrower {
 public:
  // A leaf has feature -1 and a value; a split sends x[feature] <= threshold left.
  struct Node {
    int32_t feature = -1;
    double threshold = 0;
    uint32_t left = 0;
    uint32_t right = 0;
    double value = 0;
  };

  TreeGrower(const Samples& s, const SurrogateOptions& o)
      : s_(s), o_(o), values_(s.features), bin_(s.rows() * s.features) {
    const size_t n = s.rows(), d = s.features;
    size_t most = 1;
    for (size_t f = 0; f < d; ++f) {
      std::vector<double>& v = values_[f];
      for (size_t i = 0; i < n; ++i) v.push_back(s.x[i * d + f]);
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      for (size_t i = 0; i < n; ++i) {
        bin_[i * d + f] =
            static_cast<uint32_t>(std::lower_bound(v.begin(), v.end(), s.x[i * d + f]) - v.begin());
      }
      most = std::max(most, v.size());
    }
    weight_.resize(most);
    sum_.resize(most);
  }

  // One tree fitted to `target` (weighted by `w`) over `rows`, splitting only on features with
  // allowed[f]; nodes() holds it afterwards, its root first. Leaves hold learning_rate x the
  // weighted mean.
  void grow(const std::vector<double>& target, const std::vector<double>& w,
            std::vector<uint32_t>& rows, const std::vector<char>& allowed) {
    nodes_.clear();
    grow(target, w, rows, 0, rows.size(), 0, allowed);
  }
  const std::vector<Node>& nodes() const { return nodes_; }

  double evaluate(const double* row) const {
    uint32_t node = 0;
    while (nodes_[node].feature >= 0) {
      const Node& n = nodes_[node];
      node = row[n.feature] <= n.threshold ? n.left : n.right;
    }
    return nodes_[node].value;
  }

  // Appends the tree in the complete layout of Surrogate (header) to the three arrays.
  void store(uint32_t depth, std::vector<int32_t>& feature, std::vector<double>& threshold,
             std::vector<double>& leaf) const {
    const size_t splits = (size_t{1} << depth) - 1;
    const size_t first_split = feature.size(), first_leaf = leaf.size();
    feature.resize(first_split + splits, 0);
    threshold.resize(first_split + splits, std::numeric_limits<double>::infinity());
    leaf.resize(first_leaf + splits + 1, 0.0);
    store(0, 0, 0, depth, &feature[first_split], &threshold[first_split], &leaf[first_leaf]);
  }

 private:
  uint32_t grow(const std::vector<double>& target, const std::vector<double>& w,
                std::vector<uint32_t>& rows, size_t begin, size_t end, uint32_t depth,
                const std::vector<char>& allowed) {
    const size_t d = s_.features;
    double total_w = 0, total_s = 0;
    for (size_t k = begin; k < end; ++k) {
      total_w += w[rows[k]];
      total_s += w[rows[k]] * target[rows[k]];
    }
    const auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(Node{});
    nodes_[index].value = total_w > 0 ? o_.learning_rate * total_s / total_w : 0;
    if (depth >= o_.depth || total_w < 2 * o_.min_leaf) return index;

    const double parent = total_w > 0 ? total_s * total_s / total_w : 0;
    double best_gain = kMinGain;
    int32_t best_f = -1;
    uint32_t best_bin = 0;
    double best_threshold = 0;
    for (size_t f = 0; f < d; ++f) {
      if (allowed[f] == 0 || values_[f].size() < 2) continue;
      const size_t bins = values_[f].size();
      std::fill(weight_.begin(), weight_.begin() + static_cast<std::ptrdiff_t>(bins), 0.0);
      std::fill(sum_.begin(), sum_.begin() + static_cast<std::ptrdiff_t>(bins), 0.0);
      for (size_t k = begin; k < end; ++k) {
        const uint32_t i = rows[k];
        const uint32_t b = bin_[i * d + f];
        weight_[b] += w[i];
        sum_[b] += w[i] * target[i];
      }
      // Splits fall between consecutive bins that hold rows of this node.
      double left_w = 0, left_s = 0;
      size_t last = bins;  // the last non-empty bin seen
      for (size_t b = 0; b < bins; ++b) {
        if (weight_[b] <= 0) continue;
        if (last != bins) {
          const double right_w = total_w - left_w;
          if (left_w >= o_.min_leaf && right_w >= o_.min_leaf) {
            const double right_s = total_s - left_s;
            const double gain = left_s * left_s / left_w + right_s * right_s / right_w - parent;
            if (gain > best_gain) {
              best_gain = gain;
              best_f = static_cast<int32_t>(f);
              best_bin = static_cast<uint32_t>(last);
              best_threshold = 0.5 * (values_[f][last] + values_[f][b]);
            }
          }
        }
        left_w += weight_[b];
        left_s += sum_[b];
        last = b;
      }
    }
    if (best_f < 0) return index;

    const auto f = static_cast<size_t>(best_f);
    const auto mid = std::stable_partition(
        rows.begin() + static_cast<std::ptrdiff_t>(begin),
        rows.begin() + static_cast<std::ptrdiff_t>(end),
        [this, f, d, best_bin](uint32_t i) { return bin_[i * d + f] <= best_bin; });
    const auto split = static_cast<size_t>(mid - rows.begin());
    const uint32_t left = grow(target, w, rows, begin, split, depth + 1, allowed);
    const uint32_t right = grow(target, w, rows, split, end, depth + 1, allowed);
    Node& node = nodes_[index];
    node.feature = best_f;
    node.threshold = best_threshold;
    node.left = left;
    node.right = right;
    return index;
  }

  // Node `node` of the grown tree at position `at` of the complete one, `level` levels down.
  void store(uint32_t node, size_t at, uint32_t level, uint32_t depth, int32_t* feature,
             double* threshold, double* leaf) const {
    if (level == depth) {
      leaf[at - ((size_t{1} << depth) - 1)] = nodes_[node].value;
      return;
    }
    const Node& n = nodes_[node];
    const bool split = n.feature >= 0;
    if (split) {
      feature[at] = n.feature;
      threshold[at] = n.threshold;
    }
    store(split ? n.left : node, 2 * at + 1, level + 1, depth, feature, threshold, leaf);
    store(split ? n.right : node, 2 * at + 2, level + 1, depth, feature, threshold, leaf);
  }

  const Samples& s_;
  const SurrogateOptions& o_;
  std::vector<Node> nodes_;                  // the tree being grown
  std::vector<std::vector<double>> values_;  // per feature: sorted distinct values
  std::vector<uint32_t> bin_;                // per row and feature: index into values_
  std::vector<double> weight_, sum_;         // per bin, reused by every node
};

}  // namespace

Surrogate Surrogate::fit(const Samples& samples, uint64_t seed, const SurrogateOptions& options) {
  Surrogate out;
  const size_t n = samples.rows(), d = samples.features;
  out.features_ = d;
  out.members_ = std::max<uint32_t>(1, options.members);
  out.rounds_ = n == 0 ? 0 : options.rounds;
  out.depth_ = d == 0 ? 0 : std::min<uint32_t>(options.depth, kMostDepth);
  if (n == 0) {
    out.bias_.assign(out.members_, 0.0);
    return out;
  }
  SurrogateOptions o = options;
  o.depth = out.depth_;
  Xoshiro256 rng(seed);
  TreeGrower grower(samples, o);
  std::vector<double> w(n), fitted(n), residual(n);
  std::vector<uint32_t> rows;
  std::vector<char> allowed(d);
  for (uint32_t m = 0; m < out.members_; ++m) {
    // The bootstrap resample as weights: how often each row was drawn (all once for a single
    // member, which then has nothing to disagree with).
    std::fill(w.begin(), w.end(), out.members_ == 1 ? 1.0 : 0.0);
    if (out.members_ > 1) {
      for (size_t k = 0; k < n; ++k) w[below(rng, n)] += 1;
    }
    double total_w = 0, total_s = 0;
    for (size_t i = 0; i < n; ++i) {
      total_w += w[i];
      total_s += w[i] * samples.y[i];
    }
    const double bias = total_s / total_w;
    out.bias_.push_back(bias);
    std::fill(fitted.begin(), fitted.end(), bias);
    for (uint32_t r = 0; r < out.rounds_; ++r) {
      for (size_t i = 0; i < n; ++i) residual[i] = samples.y[i] - fitted[i];
      bool any = false;
      for (size_t f = 0; f < d; ++f) {
        allowed[f] = rng.uniform() < options.feature_fraction ? 1 : 0;
        any |= allowed[f] != 0;
      }
      if (!any && d > 0) allowed[below(rng, d)] = 1;
      rows.clear();
      for (size_t i = 0; i < n; ++i) {
        if (w[i] > 0) rows.push_back(static_cast<uint32_t>(i));
      }
      grower.grow(residual, w, rows, allowed);
      grower.store(out.depth_, out.split_feature_, out.split_threshold_, out.leaf_);
      for (size_t i = 0; i < n; ++i) fitted[i] += grower.evaluate(&samples.x[i * d]);
    }
  }
  return out;
}

Prediction Surrogate::predict(const double* row) const {
  Prediction p;
  predict(row, 1, &p);
  return p;
}

void Surrogate::predict(const double* rows, size_t n, Prediction* out) const {
  // Rows go through each tree in blocks: their walks are independent, so the processor
  // overlaps them. Per row the arithmetic is the same, in the same order, as for one row.
  constexpr size_t kBlock = 16;
  const size_t splits = (size_t{1} << depth_) - 1, leaves = splits + 1;
  for (size_t first = 0; first < n; first += kBlock) {
    const size_t count = std::min(kBlock, n - first);
    const double* block = rows + first * features_;
    // Welford's running mean and squared deviation over the members, in member order.
    double mean[kBlock] = {}, m2[kBlock] = {}, v[kBlock];
    for (uint32_t m = 0; m < members_; ++m) {
      std::fill(v, v + count, bias_[m]);
      for (uint32_t r = 0; r < rounds_; ++r) {
        const size_t tree = static_cast<size_t>(m) * rounds_ + r;
        const int32_t* feature = &split_feature_[tree * splits];
        const double* threshold = &split_threshold_[tree * splits];
        const double* leaf = &leaf_[tree * leaves] - splits;
        for (size_t j = 0; j < count; ++j) {
          const double* row = block + j * features_;
          size_t at = 0;
          for (uint32_t level = 0; level < depth_; ++level) {
            at = 2 * at + 1 + (row[feature[at]] > threshold[at] ? 1 : 0);
          }
          v[j] += leaf[at];
        }
      }
      for (size_t j = 0; j < count; ++j) {
        const double delta = v[j] - mean[j];
        mean[j] += delta / (m + 1);
        m2[j] += delta * (v[j] - mean[j]);
      }
    }
    for (size_t j = 0; j < count; ++j) {
      out[first + j] = {mean[j], members_ > 1 ? std::sqrt(m2[j] / (members_ - 1)) : 0.0};
    }
  }
}

double expected_improvement(const Prediction& p, double best) {
  const double gap = best - p.mean;
  if (!(p.stddev > 0)) return std::max(gap, 0.0);
  const double z = gap / p.stddev;
  const double cdf = 0.5 * std::erfc(-z * M_SQRT1_2);
  const double pdf = std::exp(-0.5 * z * z) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
  return gap * cdf + p.stddev * pdf;
}

}  // namespace arc::actors
