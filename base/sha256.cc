// SHA-256 through OpenSSL's EVP interface (the low-level SHA256_* calls are deprecated in 3.0).
#include "base/sha256.h"

#include <cstdlib>

#include <openssl/evp.h>

namespace arc {

namespace {

// Fetched once: OpenSSL 3 otherwise looks the algorithm up in its provider tables on every
// digest, which costs more than hashing a candidate's canonical form. Never freed: it lives as
// long as the process, and OpenSSL's own exit-time cleanup must not race with a destructor.
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

}  // namespace

std::string sha256_digest(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // These only fail when OpenSSL cannot allocate or SHA-256 is unavailable; a content address
  // that silently came out wrong would corrupt the store, so stop instead.
  const EVP_MD* md = sha256_md();
  if (md == nullptr || EVP_Digest(bytes.data(), bytes.size(), digest, &len, md, nullptr) != 1) {
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(digest), len);
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * bytes.size(), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) { return to_hex(sha256_digest(bytes)); }

}  // namespace arc
