#pragma once
// Scratch space for tests that write files: <tmp>/arc-<area>-<pid>/<name>, removed if it exists,
// its parent folder created. The pid keeps concurrent test processes apart.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace arc::testing {

inline std::filesystem::path scratch_path(const std::string& area, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path p = fs::temp_directory_path() / ("arc-" + area + "-" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p;
}

}  // namespace arc::testing
