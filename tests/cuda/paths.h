#pragma once
// Where the CUDA tests find the source tree: $ARC_HOME when they run from a bundle on another
// machine (tools/bundle.sh), else the tree they were built from.
#include <cstdlib>
#include <filesystem>

namespace arc::test_paths {

inline std::filesystem::path source_dir() {
  const char* h = std::getenv("ARC_HOME");
  return (h != nullptr && *h != '\0') ? std::filesystem::path(h)
                                      : std::filesystem::path(ARC_SOURCE_DIR);
}

}  // namespace arc::test_paths
