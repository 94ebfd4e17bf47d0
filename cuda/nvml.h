#pragma once
// Clocks, temperature and power read through NVML (dlopen("libnvidia-ml.so.1")), recorded with
// every evaluation. Read-only: KernelArc never changes clocks or any other setting of the card.
#include <string>
#include <utility>
#include <vector>

namespace arc::cuda {

// Key/value readings for the device with this PCI bus id ("0000:19:00.0"): sm_mhz, mem_mhz,
// sm_max_mhz, temperature_c, power_w, clocks_event_reasons (NVML's current clocks-event, formerly
// "throttle", reasons as a hex bit mask, "0x1"), and power_violation_ns and thermal_violation_ns
// (NVML's violation counters: how long power or heat held the clocks down since the driver
// loaded). Empty when NVML is missing; each reading that fails is left out. What the reasons and
// counters mean for a measurement: base/throttle.h.
std::vector<std::pair<std::string, std::string>> read_clocks(const std::string& pci_bus_id);

}  // namespace arc::cuda
