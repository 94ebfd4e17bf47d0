#pragma once
// Scratch space for tests that write files: <tmp>/arc-<area>-<pid>/<name>, removed if it exists,
// its parent folder created. The pid keeps concurrent test processes apart.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace arc::testing {

inline std::filesystem::path scratch_path(const std::string& area, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path p =
      fs::temp_directory_path() / ("arc-" + area + "-" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p;
}

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace arc::testing
