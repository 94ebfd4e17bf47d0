// What "throttled" means (base/throttle.h): NVML's clocks-event reason bits named and sorted
// into throttling and not, the verdict from the readings before and after the timed runs, and
// the reading of a recorded verdict. No GPU needed.
#include "base/throttle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace arc::throttle {
namespace {

using ::testing::ElementsAre;

TEST(Throttle, EveryKnownBitIsNamedInBitOrder) {
  EXPECT_THAT(reason_names(0x1ff),
              ElementsAre("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                          "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                          "hw_power_brake_slowdown", "display_clock_setting"));
  EXPECT_THAT(reason_names(0), ElementsAre());
}

TEST(Throttle, UnknownBitsAreNamedByValueAndNotThrottling) {
  EXPECT_THAT(reason_names(0x201), ElementsAre("gpu_idle", "bit_0x200"));
  EXPECT_THAT(reason_names(uint64_t{1} << 63), ElementsAre("bit_0x8000000000000000"));
  EXPECT_THAT(throttling_reasons(0x200 | (uint64_t{1} << 40)), ElementsAre());
}

TEST(Throttle, PowerThermalAndHardwareSlowdownsThrottle) {
  EXPECT_THAT(throttling_reasons(0x4), ElementsAre("sw_power_cap"));
  EXPECT_THAT(throttling_reasons(0x8), ElementsAre("hw_slowdown"));
  EXPECT_THAT(throttling_reasons(0x20), ElementsAre("sw_thermal_slowdown"));
  EXPECT_THAT(throttling_reasons(0x40), ElementsAre("hw_thermal_slowdown"));
  EXPECT_THAT(throttling_reasons(0x80), ElementsAre("hw_power_brake_slowdown"));
  EXPECT_THAT(throttling_reasons(0x1ff),
              ElementsAre("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                          "hw_thermal_slowdown", "hw_power_brake_slowdown"));
}

TEST(Throttle, IdleApplicationClocksSyncBoostAndDisplayDoNotThrottle) {
  EXPECT_THAT(throttling_reasons(0x1 | 0x2 | 0x10 | 0x100), ElementsAre());
  EXPECT_EQ(verdict({{"clocks_event_reasons", "0x113"}}, {{"clocks_event_reasons", "0x1"}}), "no");
}

TEST(Throttle, MasksParseAsHexOrDecimalAndNothingElse) {
  EXPECT_EQ(parse_mask("0x24"), 0x24u);
  EXPECT_EQ(parse_mask("0X24"), 0x24u);
  EXPECT_EQ(parse_mask("36"), 36u);
  EXPECT_EQ(parse_mask("0xffffffffffffffff"), UINT64_MAX);
  EXPECT_FALSE(parse_mask(""));
  EXPECT_FALSE(parse_mask("0x"));
  EXPECT_FALSE(parse_mask("0x4g"));
  EXPECT_FALSE(parse_mask("-4"));
  EXPECT_FALSE(parse_mask("0x10000000000000000"));
}

TEST(Throttle, EitherReadingsBitsMakeTheWorkloadThrottled) {
  const Readings idle = {{"sm_mhz", "1980"}, {"clocks_event_reasons", "0x1"}};
  const Readings capped = {{"sm_mhz", "1755"}, {"clocks_event_reasons", "0x4"}};
  const Readings hot = {{"clocks_event_reasons", "0x60"}};
  EXPECT_EQ(verdict(idle, idle), "no");
  EXPECT_EQ(verdict(capped, idle), "yes: sw_power_cap");
  EXPECT_EQ(verdict(idle, capped), "yes: sw_power_cap");
  // Both readings' reasons, each once, in bit order.
  EXPECT_EQ(verdict(hot, capped), "yes: sw_power_cap, sw_thermal_slowdown, hw_thermal_slowdown");
  EXPECT_EQ(verdict(capped, capped), "yes: sw_power_cap");
}

TEST(Throttle, ViolationCountersThatAdvancedBetweenTheReadingsThrottle) {
  const Readings before = {{"clocks_event_reasons", "0x1"},
                           {"power_violation_ns", "1000"},
                           {"thermal_violation_ns", "50"}};
  Readings after = before;
  EXPECT_EQ(verdict(before, after), "no");
  after[1].second = "2500";
  EXPECT_EQ(verdict(before, after), "yes: power_violation");
  after[2].second = "51";
  EXPECT_EQ(verdict(before, after), "yes: power_violation, thermal_violation");
  after[0].second = "0x4";
  EXPECT_EQ(verdict(before, after), "yes: sw_power_cap, power_violation, thermal_violation");
  // A counter that went back (the driver reloaded) or that only one reading holds says nothing.
  EXPECT_EQ(verdict({{"power_violation_ns", "9000"}}, {{"power_violation_ns", "10"}}), "no");
  EXPECT_EQ(verdict({{"clocks_event_reasons", "0x0"}}, {{"power_violation_ns", "10"}}), "no");
}

TEST(Throttle, ReadingsPresentDecideWhenOneIsMissing) {
  EXPECT_EQ(verdict({}, {{"clocks_event_reasons", "0x8"}}), "yes: hw_slowdown");
  EXPECT_EQ(verdict({{"clocks_event_reasons", "0x0"}}, {}), "no");
}

TEST(Throttle, WithoutReadingsTheVerdictIsUnknownAndSaysWhy) {
  EXPECT_EQ(verdict({}, {}),
            "unknown: no NVML readings (libnvidia-ml.so.1 not loaded, or the device not found by "
            "its PCI bus id)");
  EXPECT_EQ(verdict({{"sm_mhz", "1980"}}, {{"sm_mhz", "1980"}, {"clocks_event_reasons", "junk"}}),
            "unknown: NVML reported neither clocks-event reasons nor violation counters");
  EXPECT_EQ(unknown("no NVML on the host backend"), "unknown: no NVML on the host backend");
}

TEST(Throttle, RecordedVerdictsReadBack) {
  EXPECT_EQ(throttled_reasons("yes: sw_power_cap, power_violation"),
            "sw_power_cap, power_violation");
  EXPECT_FALSE(throttled_reasons("no"));
  EXPECT_FALSE(throttled_reasons("unknown: no NVML on the host backend"));
  EXPECT_FALSE(throttled_reasons("yes: "));
  EXPECT_FALSE(throttled_reasons("yes"));
  EXPECT_FALSE(throttled_reasons(""));
  EXPECT_EQ(unknown_reason("unknown: no NVML on the host backend"), "no NVML on the host backend");
  EXPECT_FALSE(unknown_reason("no"));
  EXPECT_FALSE(unknown_reason("yes: sw_power_cap"));
  EXPECT_EQ(unknown_reason(verdict({}, {})).value_or("").rfind("no NVML readings", 0), 0u);
  // Round trip: what verdict() writes, throttled_reasons() reads.
  EXPECT_EQ(throttled_reasons(verdict({{"clocks_event_reasons", "0x80"}}, {})),
            "hw_power_brake_slowdown");
}

}  // namespace
}  // namespace arc::throttle
