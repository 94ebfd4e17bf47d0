#include "events/crc32c.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/codec.h"

namespace arc::events {
namespace {

uint32_t crc_of(const std::string& s) { return crc32c(s.data(), s.size()); }

// RFC 3720 §B.4 and the common check value.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(crc_of(""), 0u);
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc_of(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc_of(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc_of(descending), 0x113FDB5Cu);
  // An iSCSI SCSI Read (10) command PDU.
  const uint8_t iscsi[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
                             0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                             0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(crc32c(iscsi, sizeof iscsi), 0xD9963A56u);
}

TEST(Crc32cTest, SoftwarePathMatchesKnownVectors) {
  EXPECT_EQ(detail::crc32c_software("123456789", 9, 0), 0xE3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(detail::crc32c_software(zeros.data(), zeros.size(), 0), 0x8A9136AAu);
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  const std::string a = "hello ", b = "world, this continues past eight bytes";
  EXPECT_EQ(crc32c(b.data(), b.size(), crc32c(a.data(), a.size())), crc_of(a + b));
}

// Every length 0..1100 at every alignment 0..7: both paths must agree, and agree with the
// byte-at-a-time extension (which exercises the tails of both loops).
TEST(Crc32cTest, HardwareAndSoftwareAgree) {
  if (!detail::crc32c_hardware_available()) {
    GTEST_SKIP() << "no SSE4.2 on this CPU: only the software path runs";
  }
  std::mt19937_64 rng(1234);
  std::vector<uint8_t> buf(1200);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off = 0; off < 8; ++off) {
    for (size_t n = 0; n <= 1100; ++n) {
      const uint8_t* p = buf.data() + off;
      const uint32_t seed = static_cast<uint32_t>(n * 2654435761u);
      const uint32_t sw = detail::crc32c_software(p, n, seed);
      const uint32_t hw = detail::crc32c_hardware(p, n, seed);
      ASSERT_EQ(sw, hw) << "offset " << off << " length " << n;
    }
  }
  uint32_t bytewise = 0;
  for (size_t i = 0; i < 1000; ++i) bytewise = detail::crc32c_software(&buf[i], 1, bytewise);
  EXPECT_EQ(bytewise, detail::crc32c_hardware(buf.data(), 1000, 0));
  EXPECT_EQ(crc32c(buf.data(), 1000), bytewise);
}

TEST(Crc32cTest, MaskRoundTripsAndChangesValue) {
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x8A9136AAu}) {
    EXPECT_EQ(unmask_crc(mask_crc(v)), v);
    EXPECT_NE(mask_crc(v), v);
    EXPECT_NE(mask_crc(mask_crc(v)), mask_crc(v));
  }
  // LevelDB's definition: rotate right by 15, add a constant.
  EXPECT_EQ(mask_crc(0u), 0xa282ead8u);
  EXPECT_EQ(mask_crc(1u), ((1u >> 15) | (1u << 17)) + 0xa282ead8u);
}

}  // namespace
}  // namespace arc::events
