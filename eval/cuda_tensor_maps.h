#pragma once
// The GPU worker's tensor maps (docs/problem-format-cuda.md, "Tensor maps"): a workload's
// resolved maps encoded with cuTensorMapEncodeTiled over one buffer set's allocations, for the
// family's kernels to take as their second parameter (cuda/include/arc_cuda.h).
#include <optional>

#include "cuda/driver.h"
#include "cuda/include/arc_cuda.h"
#include "eval/cuda_request.h"
#include "eval/device.h"

namespace arc::eval::cuda_worker {

// Encodes every map of `job` into `maps` (the rest zeroed) over the buffers `args` points at
// (an output map: the output's buffer, its input's when aliased). Once per buffer set, outside
// every timed region. A map the driver refuses is a LOAD_ERROR naming the map, its tensor,
// dims, strides, box and swizzle, and the driver's reason.
std::optional<Failure> encode_tensor_maps(const cuda::Driver& cu, const WorkloadJob& job,
                                          const arc_args& args, arc_tensor_maps* maps);

}  // namespace arc::eval::cuda_worker
