#pragma once
// Random bytes for secrets, nonces and session tokens: read from /dev/urandom (the kernel's
// CSPRNG), never from a seeded generator (base/rng.h is for reproducible experiments).
#include <cstddef>
#include <string>

#include "base/status.h"

namespace arc {

// `n` random bytes as 2n lowercase hex digits; an I/O error naming /dev/urandom when it cannot
// be read whole.
Result<std::string> secure_random_hex(size_t n);

}  // namespace arc
