#include "problem/shared_sources.h"

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace arc::problem {
namespace {

// `#include "NAME"` or `#include <NAME>`: NAME, else empty.
std::string included_name(const std::string& line) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*["<]([^">]+)[">])");
  std::smatch m;
  return std::regex_search(line, m, kInclude) ? m[1].str() : std::string();
}

bool is_pragma_once(const std::string& line) {
  static const std::regex kPragmaOnce(R"(^\s*#\s*pragma\s+once\b)");
  return std::regex_search(line, kPragmaOnce);
}

struct Inliner {
  const std::map<std::string, std::string>& headers;
  std::set<std::string> done;
  std::ostringstream out;

  // `from`: the include name of the shared source holding `text` ("" for the top source).
  void write(std::string_view text, const std::string& from) {
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
      if (!from.empty() && is_pragma_once(line)) continue;
      const std::string name = included_name(line);
      const std::string found = name.empty() ? "" : lookup(name, from);
      if (found.empty()) {
        out << line << "\n";
        continue;
      }
      if (!done.insert(found).second) {
        out << "// (already inlined) " << line << "\n";
        continue;
      }
      out << "// ---- shared source " << found << " ----\n";
      write(headers.at(found), found);
      out << "// ---- end of " << found << " ----\n";
    }
  }

  std::string lookup(const std::string& name, const std::string& from) const {
    const std::filesystem::path dir = std::filesystem::path(from).parent_path();
    if (!dir.empty()) {
      std::string beside = (dir / name).lexically_normal().generic_string();
      if (headers.count(beside) != 0) return beside;
    }
    return headers.count(name) != 0 ? name : std::string();
  }
};

}  // namespace

std::string inline_shared_sources(std::string_view source,
                                  const std::map<std::string, std::string>& headers) {
  if (headers.empty()) return std::string(source);
  Inliner inliner{headers, {}, {}};
  inliner.write(source, "");
  return inliner.out.str();
}

}  // namespace arc::problem
