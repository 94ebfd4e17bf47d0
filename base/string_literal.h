#pragma once
// String literals that JSON and TOML read back unchanged.
#include <string>
#include <string_view>

namespace arc {

// `s` between double quotes with '"', '\\' and the control characters escaped (\b \f \n \r \t,
// the others as \u00XX), byte for byte as nlohmann::json::dump() writes it, so canonical forms
// built with it hash the same. `escape_del`: DEL (0x7f) as \u007f too, which TOML requires.
std::string string_literal(std::string_view s, bool escape_del = false);

}  // namespace arc
