// SHA-256 through OpenSSL's EVP interface (the low-level SHA256_* calls are deprecated in 3.0).
#include "storage/sha256.h"

#include <cstdlib>
#include <memory>

#include <openssl/evp.h>

namespace arc::storage {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  // These only fail when OpenSSL cannot allocate or SHA-256 is unavailable; a content address
  // that silently came out wrong would corrupt the store, so stop instead.
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1) {
    std::abort();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * len, '\0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return out;
}

}  // namespace arc::storage
