#pragma once
// Whether a workload was timed while the GPU throttled: one definition for the CUDA worker that
// writes the verdict into a workload's details (eval/cuda_device.cc), the host backend that says
// it cannot know (eval/host_device.cc), and the readers that flag it (`arc-replay show`'s event
// lines, events/printer.cc; the summary and report.md, replay/summary.cc). Pure: no NVML here;
// cuda/nvml.h takes the readings this interprets.
//
// The readings are NVML's, taken right before the first timed repetition (after the warm-ups
// and a stream synchronize) and right after the last (after its stream synchronize):
//   clocks_event_reasons  nvmlDeviceGetCurrentClocksEventReasons (formerly "clocks throttle
//                         reasons"), a hex bit mask ("0x5")
//   power_violation_ns    nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_POWER), and
//   thermal_violation_ns  ...(NVML_PERF_POLICY_THERMAL): how long, since the driver loaded, power
//                         or heat held the clocks down (monotonic counters; absent where the
//                         driver does not keep them)
//
// "Throttled" means at least one of:
//   - a throttling bit set in either mask, i.e. the clocks were held below what the card would
//     otherwise run at by power or heat or a hardware protection:
//       0x4 sw_power_cap, 0x8 hw_slowdown, 0x20 sw_thermal_slowdown, 0x40 hw_thermal_slowdown,
//       0x80 hw_power_brake_slowdown;
//   - a violation counter that advanced between the two readings (power_violation,
//     thermal_violation): the cap was hit during the timed runs even if neither instant saw it.
// Not throttling: 0x1 gpu_idle (no work at the instant of the reading, as right after a
// synchronize), 0x2 applications_clocks_setting (clocks limited by configured application
// clocks: a setting of the card, the same for every run), 0x10 sync_boost (clocks matched across
// a sync-boost group), 0x100 display_clock_setting. Bits NVML may define later are named
// "bit_0x..." and not counted as throttling.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace arc::throttle {

// The detail key of the verdict, and the prefixes of the readings' keys in a workload's details
// ("before.sm_mhz", "after.clocks_event_reasons").
inline constexpr char kDetailKey[] = "throttled";
inline constexpr char kBeforePrefix[] = "before.";
inline constexpr char kAfterPrefix[] = "after.";

// NVML's clocks-event reason bits (nvmlClocksEventReasons), in bit order.
struct ReasonBit {
  uint64_t bit;
  const char* name;
  bool throttling;
};
const std::vector<ReasonBit>& reason_bits();

// The names of the bits set in `mask`, in bit order ("gpu_idle", "sw_power_cap", "bit_0x200").
std::vector<std::string> reason_names(uint64_t mask);
// Those of them that are throttling.
std::vector<std::string> throttling_reasons(uint64_t mask);

// A mask as NVML readings record it: "0x" and hex digits (or decimal digits); nothing when the
// text is neither.
std::optional<uint64_t> parse_mask(const std::string& text);

using Readings = std::vector<std::pair<std::string, std::string>>;

// The verdict recorded under kDetailKey, from the readings taken before and after the timed
// runs (keys as above, unprefixed; other keys ignored):
//   "yes: sw_power_cap, power_violation"  the throttling reasons of both masks (bit order), then
//                                         power_violation and thermal_violation if they advanced
//   "no"                                  the readings present show none
//   "unknown: <why>"                      neither reading holds a mask or both counters
std::string verdict(const Readings& before, const Readings& after);
// "unknown: <why>", for a backend that has no readings (the host backend).
std::string unknown(const std::string& why);

// The reasons of a recorded verdict that says yes ("sw_power_cap, power_violation"); nothing for
// "no", "unknown: ..." or any other text.
std::optional<std::string> throttled_reasons(const std::string& verdict);
// Why a recorded verdict is unknown ("the host backend has no NVML"); nothing for any other.
std::optional<std::string> unknown_reason(const std::string& verdict);

}  // namespace arc::throttle
