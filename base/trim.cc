#include "base/trim.h"

namespace arc {

std::string trim(std::string_view s, std::string_view blanks) {
  const size_t b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(blanks) - b + 1));
}

}  // namespace arc
