// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every event frame.
// Same convention as LevelDB's crc32c::Extend: the value passed in and returned is the
// finalized CRC, so crc32c(b, m, crc32c(a, n)) == crc32c(a ++ b).
#include "events/crc32c.h"

#include <array>
#include <cstring>

#include "events/codec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define ARC_CRC32C_X86 1
#endif

namespace arc::events {
namespace detail {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;

// tables[k][b]: CRC of byte b followed by k zero bytes; slicing-by-8 consumes 8 bytes per step.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  }
  return t;
}

constexpr Tables kTables = make_tables();

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#ifdef ARC_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* p, size_t n, uint32_t l) {
  uint64_t l64 = l;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    l64 = _mm_crc32_u64(l64, v);
    p += 8;
    n -= 8;
  }
  l = static_cast<uint32_t>(l64);
  if (n >= 4) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    l = _mm_crc32_u32(l, v);
    p += 4;
    n -= 4;
  }
  while (n > 0) {
    l = _mm_crc32_u8(l, *p++);
    --n;
  }
  return l;
}
#endif

bool detect_hardware() {
#ifdef ARC_CRC32C_X86
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

using CrcFn = uint32_t (*)(const void*, size_t, uint32_t);

CrcFn choose() { return detect_hardware() ? &crc32c_hardware : &crc32c_software; }

}  // namespace

uint32_t crc32c_software(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t l = ~crc;
  // Byte steps until p is 8-aligned, so the 8-byte loads below are cheap.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    l = kTables[0][(l ^ *p++) & 0xFFu] ^ (l >> 8);
    --n;
  }
  while (n >= 8) {
    const uint64_t v = load_le64(p) ^ l;
    l = kTables[7][v & 0xFFu] ^ kTables[6][(v >> 8) & 0xFFu] ^ kTables[5][(v >> 16) & 0xFFu] ^
        kTables[4][(v >> 24) & 0xFFu] ^ kTables[3][(v >> 32) & 0xFFu] ^
        kTables[2][(v >> 40) & 0xFFu] ^ kTables[1][(v >> 48) & 0xFFu] ^
        kTables[0][(v >> 56) & 0xFFu];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    l = kTables[0][(l ^ *p++) & 0xFFu] ^ (l >> 8);
    --n;
  }
  return ~l;
}

uint32_t crc32c_hardware(const void* data, size_t n, uint32_t crc) {
#ifdef ARC_CRC32C_X86
  return ~crc32c_sse42(static_cast<const uint8_t*>(data), n, ~crc);
#else
  return crc32c_software(data, n, crc);
#endif
}

bool crc32c_hardware_available() {
  static const bool kAvailable = detect_hardware();
  return kAvailable;
}

}  // namespace detail

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  static const detail::CrcFn kImpl = detail::choose();
  return kImpl(data, n, crc);
}

// Masking as LevelDB: a CRC stored inside data that is itself checksummed would otherwise make
// the outer CRC degenerate.
namespace {
constexpr uint32_t kMaskDelta = 0xa282ead8u;
}

uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t unmask_crc(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace arc::events
