#pragma once
#include <string>
#include <string_view>

namespace arc {
// Lowercase hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);
// The raw 32-byte SHA-256 digest of the bytes.
std::string sha256_digest(std::string_view bytes);
// Lowercase hex of any bytes (two digits per byte).
std::string to_hex(std::string_view bytes);
// Appends '\0', the part's length in decimal, '\0' and the part to `material`: parts of a hash
// key joined so that no two different lists of parts give the same bytes.
inline void append_key_part(std::string& material, std::string_view part) {
  material.push_back('\0');
  material += std::to_string(part.size());
  material.push_back('\0');
  material += part;
}
}  // namespace arc
