#include "base/throttle.h"

#include <charconv>
#include <cstdio>
#include <string_view>

namespace arc::throttle {
namespace {

constexpr char kMaskKey[] = "clocks_event_reasons";
constexpr char kYes[] = "yes: ";
constexpr char kUnknown[] = "unknown: ";

// What follows `prefix` in `text`, when that is not empty.
std::optional<std::string> after_prefix(const std::string& text, std::string_view prefix) {
  if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0) {
    return std::nullopt;
  }
  return text.substr(prefix.size());
}

const std::string* find(const Readings& r, const std::string& key) {
  for (const auto& [k, v] : r) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<uint64_t> parse_number(const std::string& text, int base) {
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v, base);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<uint64_t> mask_of(const Readings& r) {
  const std::string* v = find(r, kMaskKey);
  return v == nullptr ? std::nullopt : parse_mask(*v);
}

// Whether a violation counter advanced between the readings; nothing when either lacks it.
std::optional<bool> advanced(const Readings& before, const Readings& after, const char* key) {
  const std::string* b = find(before, key);
  const std::string* a = find(after, key);
  if (b == nullptr || a == nullptr) return std::nullopt;
  auto vb = parse_number(*b, 10);
  auto va = parse_number(*a, 10);
  if (!vb || !va) return std::nullopt;
  return *va > *vb;
}

}  // namespace

const std::vector<ReasonBit>& reason_bits() {
  static const std::vector<ReasonBit> kBits = {
      {0x1, "gpu_idle", false},
      {0x2, "applications_clocks_setting", false},
      {0x4, "sw_power_cap", true},
      {0x8, "hw_slowdown", true},
      {0x10, "sync_boost", false},
      {0x20, "sw_thermal_slowdown", true},
      {0x40, "hw_thermal_slowdown", true},
      {0x80, "hw_power_brake_slowdown", true},
      {0x100, "display_clock_setting", false},
  };
  return kBits;
}

std::vector<std::string> reason_names(uint64_t mask) {
  std::vector<std::string> out;
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((mask & bit) == 0) continue;
    bool named = false;
    for (const ReasonBit& r : reason_bits()) {
      if (r.bit == bit) {
        out.emplace_back(r.name);
        named = true;
      }
    }
    if (!named) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "bit_0x%llx", static_cast<unsigned long long>(bit));
      out.emplace_back(buf);
    }
  }
  return out;
}

std::vector<std::string> throttling_reasons(uint64_t mask) {
  std::vector<std::string> out;
  for (const ReasonBit& r : reason_bits()) {
    if (r.throttling && (mask & r.bit) != 0) out.emplace_back(r.name);
  }
  return out;
}

std::optional<uint64_t> parse_mask(const std::string& text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    return parse_number(text.substr(2), 16);
  }
  return parse_number(text, 10);
}

std::string verdict(const Readings& before, const Readings& after) {
  const auto mb = mask_of(before);
  const auto ma = mask_of(after);
  const auto power = advanced(before, after, "power_violation_ns");
  const auto thermal = advanced(before, after, "thermal_violation_ns");
  if (!mb && !ma && !power && !thermal) {
    if (before.empty() && after.empty()) {
      return unknown(
          "no NVML readings (libnvidia-ml.so.1 not loaded, or the device not found "
          "by its PCI bus id)");
    }
    return unknown("NVML reported neither clocks-event reasons nor violation counters");
  }
  std::vector<std::string> reasons = throttling_reasons(mb.value_or(0) | ma.value_or(0));
  if (power.value_or(false)) reasons.emplace_back("power_violation");
  if (thermal.value_or(false)) reasons.emplace_back("thermal_violation");
  if (reasons.empty()) return "no";
  std::string out = kYes;
  for (size_t i = 0; i < reasons.size(); ++i) out += (i == 0 ? "" : ", ") + reasons[i];
  return out;
}

std::string unknown(const std::string& why) { return kUnknown + why; }

std::optional<std::string> throttled_reasons(const std::string& verdict) {
  return after_prefix(verdict, kYes);
}

std::optional<std::string> unknown_reason(const std::string& verdict) {
  return after_prefix(verdict, kUnknown);
}

}  // namespace arc::throttle
