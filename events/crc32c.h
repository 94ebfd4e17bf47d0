#pragma once
// The two CRC32C implementations behind events::crc32c(), exposed so tests can check that they
// agree. Callers outside tests use events::crc32c(), which picks the hardware path at startup
// when the CPU has SSE4.2.
#include <cstddef>
#include <cstdint>

namespace arc::events::detail {

// Table-driven (slicing-by-8) CRC32C; same contract as events::crc32c().
uint32_t crc32c_software(const void* data, size_t n, uint32_t crc);
// SSE4.2 `crc32` instruction; only call when crc32c_hardware_available().
uint32_t crc32c_hardware(const void* data, size_t n, uint32_t crc);
bool crc32c_hardware_available();

}  // namespace arc::events::detail
