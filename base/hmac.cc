// HMAC-SHA256 as RFC 2104 defines it: H((K ^ opad) | H((K ^ ipad) | m)), with a key longer than
// the 64-byte block hashed first (base/hmac.h).
#include "base/hmac.h"

#include "base/sha256.h"

namespace arc {

namespace {

constexpr size_t kBlock = 64;  // SHA-256's block size in bytes

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view message) {
  std::string k = key.size() > kBlock ? sha256_digest(key) : std::string(key);
  k.resize(kBlock, '\0');
  std::string inner(kBlock, '\0');
  std::string outer(kBlock, '\0');
  for (size_t i = 0; i < kBlock; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  inner.append(message);
  outer += sha256_digest(inner);
  return sha256_digest(outer);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  return to_hex(hmac_sha256(key, message));
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  // volatile: the compiler may not turn the loop above into an early exit on the result.
  volatile unsigned char result = diff;
  return result == 0;
}

}  // namespace arc
