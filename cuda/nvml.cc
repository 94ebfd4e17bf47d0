#include "cuda/nvml.h"

#include <cstdio>
#include <mutex>

#include <dlfcn.h>

namespace arc::cuda {
namespace {

// The few NVML declarations needed (the toolkit ships no nvml.h); ABI as in NVML's header.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
constexpr int kPerfPolicyPower = 0;    // NVML_PERF_POLICY_POWER
constexpr int kPerfPolicyThermal = 1;  // NVML_PERF_POLICY_THERMAL
struct ViolationTime {                 // nvmlViolationTime_t
  unsigned long long reference_time;   // CPU timestamp, us
  unsigned long long violation_time;   // ns
};

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_bus)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*violation)(nvmlDevice_t, int, ViolationTime*) = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml x;
    void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return x;
    x.init = reinterpret_cast<decltype(x.init)>(::dlsym(h, "nvmlInit_v2"));
    x.by_bus = reinterpret_cast<decltype(x.by_bus)>(::dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    x.clock = reinterpret_cast<decltype(x.clock)>(::dlsym(h, "nvmlDeviceGetClockInfo"));
    x.max_clock = reinterpret_cast<decltype(x.max_clock)>(::dlsym(h, "nvmlDeviceGetMaxClockInfo"));
    x.temperature =
        reinterpret_cast<decltype(x.temperature)>(::dlsym(h, "nvmlDeviceGetTemperature"));
    x.power = reinterpret_cast<decltype(x.power)>(::dlsym(h, "nvmlDeviceGetPowerUsage"));
    x.throttle = reinterpret_cast<decltype(x.throttle)>(
        ::dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (x.throttle == nullptr) {
      x.throttle = reinterpret_cast<decltype(x.throttle)>(
          ::dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    }
    x.violation =
        reinterpret_cast<decltype(x.violation)>(::dlsym(h, "nvmlDeviceGetViolationStatus"));
    x.ok = x.init != nullptr && x.by_bus != nullptr && x.init() == 0;
    return x;
  }();
  return n;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_clocks(const std::string& pci_bus_id) {
  std::vector<std::pair<std::string, std::string>> out;
  const Nvml& n = nvml();
  if (!n.ok) return out;
  nvmlDevice_t dev = nullptr;
  if (n.by_bus(pci_bus_id.c_str(), &dev) != 0) return out;
  unsigned v = 0;
  if (n.clock != nullptr && n.clock(dev, kClockSm, &v) == 0)
    out.emplace_back("sm_mhz", std::to_string(v));
  if (n.clock != nullptr && n.clock(dev, kClockMem, &v) == 0)
    out.emplace_back("mem_mhz", std::to_string(v));
  if (n.max_clock != nullptr && n.max_clock(dev, kClockSm, &v) == 0)
    out.emplace_back("sm_max_mhz", std::to_string(v));
  if (n.temperature != nullptr && n.temperature(dev, kTemperatureGpu, &v) == 0)
    out.emplace_back("temperature_c", std::to_string(v));
  if (n.power != nullptr && n.power(dev, &v) == 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v / 1000.0);
    out.emplace_back("power_w", buf);
  }
  unsigned long long reasons = 0;
  if (n.throttle != nullptr && n.throttle(dev, &reasons) == 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", reasons);
    out.emplace_back("clocks_event_reasons", buf);
  }
  ViolationTime t{};
  if (n.violation != nullptr && n.violation(dev, kPerfPolicyPower, &t) == 0) {
    out.emplace_back("power_violation_ns", std::to_string(t.violation_time));
  }
  if (n.violation != nullptr && n.violation(dev, kPerfPolicyThermal, &t) == 0) {
    out.emplace_back("thermal_violation_ns", std::to_string(t.violation_time));
  }
  return out;
}

}  // namespace arc::cuda
