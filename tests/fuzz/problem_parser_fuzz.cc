// libFuzzer: problem.toml loading on arbitrary text, in a folder holding the files a valid
// problem refers to; errors are values, never crashes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "problem/problem.h"

namespace {
const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("arc-fuzz-problem-" + std::to_string(getpid()));
    std::filesystem::create_directories(d / "families");
    std::ofstream(d / "reference.cpp") << "// reference\n";
    std::ofstream(d / "families" / "f.cpp") << "// family\n";
    return d;
  }();
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = folder() / "problem.toml";
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  auto p = arc::problem::load_problem(file);
  if (p.ok()) {
    for (const auto& w : p->workloads) {
      (void)p->flops(w);
      (void)p->bytes(w);
    }
  } else if (p.status().message().find(file.string()) == std::string::npos) {
    __builtin_trap();  // an error must name the file
  }
  return 0;
}
