// HMAC-SHA256 (base/hmac.h) against the test vectors of RFC 4231 (cases 1-4, 6 and 7; case 5
// truncates its output), the constant-time comparison, and random hex (base/secure_random.h).
#include "base/hmac.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "base/secure_random.h"
#include "base/sha256.h"

namespace arc {
namespace {

std::string repeat(char c, size_t n) { return std::string(n, c); }

TEST(Hmac, Rfc4231TestVectors) {
  EXPECT_EQ(hmac_sha256_hex(repeat('\x0b', 20), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmac_sha256_hex(repeat('\xaa', 20), repeat('\xdd', 50)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (char c = 1; c <= 25; ++c) key4.push_back(c);
  EXPECT_EQ(hmac_sha256_hex(key4, repeat('\xcd', 50)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Keys longer than the block are hashed first.
  EXPECT_EQ(hmac_sha256_hex(repeat('\xaa', 131),
                            "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmac_sha256_hex(repeat('\xaa', 131),
                            "This is a test using a larger than block-size key and a larger than "
                            "block-size data. The key needs to be hashed before being used by the "
                            "HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(Hmac, RawDigestIsTheHexOnesBytes) {
  const std::string raw = hmac_sha256("Jefe", "what do ya want for nothing?");
  EXPECT_EQ(raw.size(), 32u);
  EXPECT_EQ(to_hex(raw), hmac_sha256_hex("Jefe", "what do ya want for nothing?"));
  EXPECT_EQ(to_hex(sha256_digest("abc")), sha256_hex("abc"));
}

TEST(Hmac, ConstantTimeEqualComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abcdef", "abcdef"));
  EXPECT_FALSE(constant_time_equal("abcdef", "abcdeg"));
  EXPECT_FALSE(constant_time_equal("xbcdef", "abcdef"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(SecureRandom, GivesHexOfTheAskedLengthAndNeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 32; ++i) {
    auto r = secure_random_hex(32);
    ASSERT_TRUE(r) << r.status().to_string();
    EXPECT_EQ(r->size(), 64u);
    EXPECT_EQ(r->find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(*r);
  }
  EXPECT_EQ(seen.size(), 32u);
}

}  // namespace
}  // namespace arc
