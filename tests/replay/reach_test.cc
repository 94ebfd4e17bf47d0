// Candidates to reach a target (replay/reach.h): the first index of a best-so-far curve, and the
// median over seeds with its bootstrap interval, censored seeds included.
#include "replay/reach.h"

#include <gtest/gtest.h>

namespace arc::replay {
namespace {

TEST(Reach, FirstIndexAtOrAboveTheTarget) {
  const BestCurve curve = {{1, 1.0}, {2, 1.0}, {3, 1.5}, {7, 2.0}};
  EXPECT_EQ(first_reaching(curve, 1.0), 1);
  EXPECT_EQ(first_reaching(curve, 1.2), 3);
  EXPECT_EQ(first_reaching(curve, 1.5), 3);
  EXPECT_EQ(first_reaching(curve, 2.0), 7);
  EXPECT_EQ(first_reaching(curve, 2.01), -1);
  EXPECT_EQ(first_reaching({}, 1.0), -1);
}

TEST(Reach, AllSeedsAlike) {
  const ReachStats r = reach_stats({5, 5, 5}, 500, 1);
  EXPECT_EQ(r.median, 5);
  EXPECT_EQ(r.low, 5);
  EXPECT_EQ(r.high, 5);
  EXPECT_EQ(r.reached, 3u);
  EXPECT_EQ(r.seeds, 3u);
}

TEST(Reach, MedianAndIntervalOfSpreadSeeds) {
  std::vector<double> needed;
  for (int i = 1; i <= 99; ++i) needed.push_back(i);
  const ReachStats r = reach_stats(needed, 2000, 7);
  EXPECT_EQ(r.median, 50);
  EXPECT_LT(r.low, 50);
  EXPECT_GT(r.high, 50);
  EXPECT_GT(r.low, 30);  // the median of 99 uniform seeds is known to about +-10
  EXPECT_LT(r.high, 70);
  // The same seed, the same interval; another seed, the same median.
  const ReachStats again = reach_stats(needed, 2000, 7);
  EXPECT_EQ(again.low, r.low);
  EXPECT_EQ(again.high, r.high);
  EXPECT_EQ(reach_stats(needed, 2000, 8).median, 50);
}

TEST(Reach, CensoredSeedsCountAsNeedingMore) {
  // Two of five never reach: the median is the third smallest; the upper bound may be censored.
  const ReachStats some = reach_stats({2, 4, 6, -1, -1}, 2000, 3);
  EXPECT_EQ(some.median, 6);
  EXPECT_EQ(some.reached, 3u);
  EXPECT_EQ(some.high, -1);
  EXPECT_GE(some.low, 2);
  // Half never reach: no median (an interpolation towards a censored seed is censored too).
  const ReachStats half = reach_stats({1, 2, -1, -1}, 2000, 3);
  EXPECT_EQ(half.median, -1);
  EXPECT_EQ(half.reached, 2u);
  const ReachStats none = reach_stats({-1, -1, -1}, 100, 3);
  EXPECT_EQ(none.median, -1);
  EXPECT_EQ(none.low, -1);
  EXPECT_EQ(none.high, -1);
  EXPECT_EQ(none.reached, 0u);
  const ReachStats empty = reach_stats({}, 100, 3);
  EXPECT_EQ(empty.median, -1);
  EXPECT_EQ(empty.seeds, 0u);
}

}  // namespace
}  // namespace arc::replay
