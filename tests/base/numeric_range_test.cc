// IntegerRange, NumberRange and parse_flag_integer: the one range check of numeric settings.
#include "base/numeric_range.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace arc {
namespace {

TEST(IntegerRange, HoldsItsEndsAndNothingBeyond) {
  const IntegerRange r{1, 1000};
  EXPECT_TRUE(r.contains(int64_t{1}));
  EXPECT_TRUE(r.contains(uint64_t{1000}));
  EXPECT_FALSE(r.contains(int64_t{0}));
  EXPECT_FALSE(r.contains(int64_t{-1}));
  EXPECT_FALSE(r.contains(uint64_t{1001}));
  EXPECT_EQ(r.text(), "an integer in [1, 1000]");
}

TEST(IntegerRange, ReachesBothEndsOfSixtyFourBits) {
  const IntegerRange seed{0, UINT64_MAX};
  EXPECT_TRUE(seed.contains(std::numeric_limits<uint64_t>::max()));
  EXPECT_FALSE(seed.contains(int64_t{-1}));
  const IntegerRange exact{-(int64_t{1} << 53), uint64_t{1} << 53};
  EXPECT_TRUE(exact.contains(-(int64_t{1} << 53)));
  EXPECT_FALSE(exact.contains((int64_t{1} << 53) + 1));
  EXPECT_FALSE(exact.contains(std::numeric_limits<int64_t>::min()));
}

TEST(IntegerRange, ZeroMayMeanSomethingBelowTheRange) {
  const IntegerRange r{64, 1024, "no limit"};
  EXPECT_TRUE(r.contains(int64_t{0}));
  EXPECT_FALSE(r.contains(int64_t{63}));
  EXPECT_EQ(r.text(), "0 (no limit) or an integer in [64, 1024]");
}

TEST(IntegerRange, TakesOnlyWholeFiniteDoubles) {
  const IntegerRange r{1, int64_t{1} << 40};
  EXPECT_TRUE(r.contains(4096.0));
  EXPECT_FALSE(r.contains(4096.5));
  EXPECT_FALSE(r.contains(0.0));
  EXPECT_FALSE(r.contains(1e19));
  EXPECT_FALSE(r.contains(std::nan("")));
  EXPECT_FALSE(r.contains(std::numeric_limits<double>::infinity()));
}

TEST(NumberRange, RefusesNanAndInfinityAndHonoursOpenEnds) {
  const NumberRange seconds{0.1, 86400, false, false, "seconds"};
  EXPECT_TRUE(seconds.contains(0.1));
  EXPECT_TRUE(seconds.contains(86400));
  EXPECT_FALSE(seconds.contains(1e-9));
  EXPECT_FALSE(seconds.contains(1e300));
  EXPECT_FALSE(seconds.contains(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(seconds.contains(std::nan("")));
  EXPECT_EQ(seconds.text(), "a number of seconds in [0.1, 86400]");
  const NumberRange half_open{0, 1, true, false};
  EXPECT_FALSE(half_open.contains(0));
  EXPECT_TRUE(half_open.contains(1));
  EXPECT_EQ(half_open.text(), "a number in (0, 1]");
}

TEST(ParseFlagInteger, TakesDecimalDigitsWithinTheRangeOnly) {
  const IntegerRange seed{0, UINT64_MAX};
  EXPECT_EQ(parse_flag_integer("0", seed).value(), 0u);
  EXPECT_EQ(parse_flag_integer("18446744073709551615", seed).value(), UINT64_MAX);
  for (const char* bad :
       {"-1", "18446744073709551616", "99999999999999999999999", "12abc", "", "+1", " 1", "1 ",
        "0x10", "1e3", "1.0"}) {
    auto v = parse_flag_integer(bad, seed);
    ASSERT_FALSE(v) << bad;
    EXPECT_EQ(v.status().message(),
              "expected an integer in [0, 18446744073709551615], got \"" + std::string(bad) + "\"");
  }
  const IntegerRange budget{1, 1000000};
  EXPECT_FALSE(parse_flag_integer("0", budget));
  EXPECT_FALSE(parse_flag_integer("1000001", budget));
  EXPECT_EQ(parse_flag_integer("1000000", budget).value(), 1000000u);
}

}  // namespace
}  // namespace arc
