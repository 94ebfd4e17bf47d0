#pragma once
// Surrogate: the regression model behind the builtin "model" move (actors/model_move.h). It
// predicts a configuration's target (the model move uses log time, lower is better) from its
// features, with an uncertainty, and scores configurations by expected improvement.
//
// The model is a bagged ensemble of gradient-boosted regression trees: each member is fitted
// to its own bootstrap resample of the observations (and its trees to a random subset of the
// features); the prediction is the members' mean and its uncertainty their standard deviation.
// Trees handle what knob spaces are made of: discrete values, categorical knobs, knobs only
// some families have (a sentinel feature value), sharp invalid regions.
//
// Contract: pure and deterministic. fit() is a function of (samples, seed, options) alone: every
// draw comes from base/rng.h seeded by `seed`, every loop runs in a fixed order on one thread,
// and ties are broken by the lowest feature and threshold. No I/O, no clock, no global state.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace arc::actors {

struct SurrogateOptions {
  uint32_t members = 8;           // bootstrap replicas (>= 2 for an uncertainty)
  uint32_t rounds = 16;           // boosting rounds (trees) per member
  uint32_t depth = 3;             // maximum depth of each tree
  double learning_rate = 0.3;     // shrinkage of each tree's leaves
  double min_leaf = 1;            // minimum bootstrap weight (resampled rows) in a leaf
  double feature_fraction = 0.8;  // chance of each feature being offered to a tree (>= 1 is)
};

// Observations: `rows` rows of `features` features (row-major in x) and their targets.
struct Samples {
  size_t features = 0;
  std::vector<double> x;  // rows() * features values
  std::vector<double> y;  // one target per row
  size_t rows() const { return y.size(); }
  void add(const double* row, double target) {
    x.insert(x.end(), row, row + features);
    y.push_back(target);
  }
};

struct Prediction {
  double mean = 0;
  double stddev = 0;  // over the ensemble's members
};

class Surrogate {
 public:
  // Fits the ensemble. With no rows it predicts 0 everywhere; with one, that target.
  static Surrogate fit(const Samples& samples, uint64_t seed, const SurrogateOptions& options = {});

  // `row`: features() values laid out as in the samples.
  Prediction predict(const double* row) const;
  // The predictions of `n` rows (row-major, features() values each) into out[0, n): the same,
  // bit for bit, as predict() row by row, and faster.
  void predict(const double* rows, size_t n, Prediction* out) const;
  size_t features() const { return features_; }
  size_t trees() const { return static_cast<size_t>(members_) * rounds_; }

 private:
  size_t features_ = 0;
  uint32_t members_ = 0;
  uint32_t rounds_ = 0;
  uint32_t depth_ = 0;
  std::vector<double> bias_;  // per member: its weighted mean target
  // Every tree stored complete to `depth_`, member-major (member m's round r is tree
  // m * rounds_ + r): per tree 2^depth - 1 splits in breadth-first order (node i's children
  // are 2i + 1 and 2i + 2; x[feature] <= threshold goes to the first), then 2^depth leaves. A
  // leaf above the full depth is a split that always goes to the first child (threshold +inf)
  // over copies of the leaf. Prediction is then a fixed number of steps without branches.
  std::vector<int32_t> split_feature_;
  std::vector<double> split_threshold_;
  std::vector<double> leaf_;
};

// Expected improvement of a prediction over `best` (the lowest target seen) for minimisation:
// E[max(best - Y, 0)] with Y ~ Normal(mean, stddev); max(best - mean, 0) when stddev is 0.
double expected_improvement(const Prediction& p, double best);

}  // namespace arc::actors
