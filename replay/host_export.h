#pragma once
// arcd export --format cpp (docs/export.md): a host problem's best candidate as NAME.h and
// NAME.cpp, self-contained C++17 a user compiles with the system compiler
// (g++ -O2 -std=c++17 -c NAME.cpp: the options the run compiled with). The .cpp holds the host
// ABI (eval/host_abi.h, inlined), every distinct variant of the candidate (its knobs and the
// problem's params as #defines, its source with the problem's shared sources written in,
// inside namespace arc_vI, its arc_kernel renamed arc_vI_kernel) and
//   int NAME_variant_for(const long long* axes)   the variant serving these axis values
//   int NAME_run(const float* const* inputs, float* const* outputs, const long long* axes)
//                                                  the computation on the calling thread
//   const char* NAME_plan(const long long* axes)  the variant, in words
#include <vector>

#include "base/status.h"
#include "replay/kernel_export.h"

namespace arc::replay {

// kInvalidArgument for a problem that is not on the host backend.
Result<std::vector<ExportedFile>> export_cpp(const KernelExportInput& in);

}  // namespace arc::replay
