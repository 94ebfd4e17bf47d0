#pragma once
// Export tests build what arcd export writes with the real nvcc (no GPU needed): the exported
// NAME.cu with a caller that uses every function of NAME.h, compiled and linked.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>

#include "tests/scratch.h"

namespace arc::testing {

inline const std::filesystem::path kNvcc = "/usr/local/cuda/bin/nvcc";

// Compiles DIR/NAME.cu with a main.cu calling NAME_variant_for, NAME_workspace_bytes,
// NAME_launch, NAME_plan and NAME_last_error, and links them (with -lcublasLt when `link_lt`);
// "" on success, else the command and nvcc's output.
inline std::string nvcc_build(const std::filesystem::path& dir, const std::string& name,
                              bool link_lt) {
  std::ofstream(dir / "main.cu") << "#include \"" << name << ".h\"\n#include <stdio.h>\n"
                                 << "int main() {\n  long long axes[" << name
                                 << "_NUM_AXES] = {0};\n  printf(\"%d %zu\\n\", " << name
                                 << "_variant_for(axes), " << name
                                 << "_workspace_bytes(axes));\n  const int rc = " << name
                                 << "_launch(0, 0, axes, 0, 0) == cudaSuccess ? 0 : 1;\n"
                                 << "  printf(\"%s %s\\n\", " << name << "_plan(axes), " << name
                                 << "_last_error());\n  return rc;\n}\n";
  const std::string cmd = kNvcc.string() + " -std=c++17 -arch=sm_90a -I" + dir.string() + " " +
                          (dir / "main.cu").string() + " " + (dir / (name + ".cu")).string() +
                          " -o " + (dir / "a.out").string() + (link_lt ? " -lcublasLt" : "") +
                          " > " + (dir / "nvcc.log").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == 0 && std::filesystem::exists(dir / "a.out")) return "";
  return cmd + "\n" + slurp(dir / "nvcc.log");
}

// Builds DIR/check.cu, a program that checks the export's results and exits 0 when they are
// right, 77 when there is no CUDA device and anything else when they are wrong, with
// DIR/NAME.cu (and -lcublasLt when `link_lt`), and runs it. Returns its exit status, or -1 when
// it did not build or was killed; `log` gets nvcc's output or the program's.
inline int run_export_check(const std::filesystem::path& dir, const std::string& name, bool link_lt,
                            std::string* log) {
  const std::string cmd = kNvcc.string() + " -std=c++17 -arch=sm_90a -I" + dir.string() + " " +
                          (dir / "check.cu").string() + " " + (dir / (name + ".cu")).string() +
                          (link_lt ? " -lcublasLt" : "") + " -o " + (dir / "check").string() +
                          " > " + (dir / "nvcc.log").string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    *log = cmd + "\n" + slurp(dir / "nvcc.log");
    return -1;
  }
  const int rc = std::system(
      ((dir / "check").string() + " > " + (dir / "run.log").string() + " 2>&1").c_str());
  *log = slurp(dir / "run.log");
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace arc::testing
