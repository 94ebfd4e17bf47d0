#pragma once
// Where KernelArc's own files live (skills/, problems/, eval/host_abi.h, cuda/include/arc_cuda.h).
#include <filesystem>

namespace arc {

// $ARC_HOME when it is set and not empty; else the nearest folder above the running executable
// that holds cuda/include/arc_cuda.h (a bundle: <root>/bin/<exe>, tools/bundle.sh); else the
// source tree this binary was built from.
std::filesystem::path arc_home();

}  // namespace arc
