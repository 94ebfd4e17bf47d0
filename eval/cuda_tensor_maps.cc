// Tensor maps encoded for a buffer set (eval/cuda_tensor_maps.h).
#include "eval/cuda_tensor_maps.h"

#include <cstring>
#include <string>
#include <vector>

#include "cuda/runtime_kernels.h"

namespace arc::eval::cuda_worker {

std::optional<Failure> encode_tensor_maps(const cuda::Driver& cu, const WorkloadJob& job,
                                          const arc_args& args, arc_tensor_maps* maps) {
  static_assert(sizeof(CUtensorMap) == sizeof(arc_tensor_map) && alignof(arc_tensor_map) >= 64);
  std::memset(maps, 0, sizeof *maps);
  for (size_t i = 0; i < job.tensor_maps.size(); ++i) {
    const TensorMapDesc& m = job.tensor_maps[i];
    void* base = m.output ? args.out[m.index] : args.in[m.index];
    CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    switch (m.dtype) {
      case cuda::kF32:
        type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        break;
      case cuda::kF64:
        type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
        break;
      case cuda::kBF16:
        type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        break;
      case cuda::kF16:
        type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        break;
      default:  // 1-byte types move as bytes
        break;
    }
    const CUtensorMapSwizzle swizzle = m.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : m.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : m.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                         : CU_TENSOR_MAP_SWIZZLE_NONE;
    const CUtensorMapL2promotion l2 = m.l2_promotion == 256   ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                      : m.l2_promotion == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                      : m.l2_promotion == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                                              : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    const auto rank = static_cast<cuuint32_t>(m.dims.size());
    std::vector<cuuint64_t> dims(m.dims.begin(), m.dims.end());
    std::vector<cuuint64_t> strides(m.strides.begin(), m.strides.end());
    std::vector<cuuint32_t> box(m.box.begin(), m.box.end());
    std::vector<cuuint32_t> estrides(m.element_strides.begin(), m.element_strides.end());
    CUresult r = cu.cuTensorMapEncodeTiled(
        reinterpret_cast<CUtensorMap*>(&maps->map[i]), type, rank, base, dims.data(),
        strides.data(), box.data(), estrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
        m.nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                   : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      auto list = [](const auto& v) {
        std::string t;
        for (const auto& x : v) t += (t.empty() ? "" : ", ") + std::to_string(x);
        return "[" + t + "]";
      };
      return Failure{"LOAD_ERROR",
                     "cuTensorMapEncodeTiled refused tensor map " + std::to_string(i) + " (" +
                         (m.output ? job.outputs : job.inputs)[static_cast<size_t>(m.index)].name +
                         ", dims " + list(m.dims) + ", strides " + list(m.strides) + ", box " +
                         list(m.box) + ", swizzle " + std::to_string(m.swizzle) + ") of workload " +
                         job.name + ": " + cuda::describe(r)};
    }
  }
  return std::nullopt;
}

}  // namespace arc::eval::cuda_worker
