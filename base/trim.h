#pragma once
// Text without its leading and trailing blanks.
#include <string>
#include <string_view>

namespace arc {

// `s` without the characters of `blanks` at either end ("" when it holds nothing else).
std::string trim(std::string_view s, std::string_view blanks = " \t\r\n");

}  // namespace arc
