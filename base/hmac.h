#pragma once
// HMAC-SHA256 (RFC 2104 over base/sha256.h) and a comparison whose time does not depend on where
// two strings first differ: what remote workers prove their shared secret with
// (eval/remote_protocol.h) without ever sending it.
#include <string>
#include <string_view>

namespace arc {

// The raw 32-byte HMAC-SHA256 of `message` under `key` (a key of any length).
std::string hmac_sha256(std::string_view key, std::string_view message);
// The same as lowercase hex (64 digits).
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// Whether a and b are equal, reading every byte of both whatever their contents (only their
// lengths, which are not secret here, may end it early).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace arc
