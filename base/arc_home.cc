#include "base/arc_home.h"

#include <cstdlib>
#include <system_error>

namespace arc {

std::filesystem::path arc_home() {
  namespace fs = std::filesystem;
  if (const char* h = std::getenv("ARC_HOME"); h != nullptr && *h != '\0') return h;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path p = exe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
      if (fs::is_regular_file(p / "cuda" / "include" / "arc_cuda.h", ec)) return p;
    }
  }
  return ARC_SOURCE_DIR;
}

}  // namespace arc
