#pragma once
// The CUDA backend's part of an "evaluate" request (eval/cuda_worker.h documents the fields;
// eval/cuda_evaluator.cc writes them): tensors with dtypes, launches, the cuBLASLt GEMM of a
// library family, the reference's cubin and launches.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/cublaslt.h"
#include "eval/protocol.h"

namespace arc::eval::cuda_worker {

// cuda::kF32... for "f32", "bf16", "f16", "f64", "fp8_e4m3", "fp8_e5m2"; -1 for anything else.
int dtype_code(const std::string& d);
int code_bytes(int code);
// Allocation size of a tensor: a multiple of 256 bytes, at least 256.
inline size_t padded(size_t bytes) { return std::max<size_t>(256, (bytes + 255) / 256 * 256); }

struct TensorDesc {
  std::string name;
  int dtype = 0;
  int64_t elements = 0;
  std::string init = "uniform";
  double low = -1, high = 1;
  int alias = -1;  // outputs: the input whose buffer this output is
  size_t elements_or_0() const { return static_cast<size_t>(std::max<int64_t>(elements, 0)); }
  size_t bytes() const { return elements_or_0() * code_bytes(dtype); }
};

struct LaunchDesc {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared = 0;
};

struct GemmDesc {
  int a = -1, b = -1, c = -1, d = -1;  // input, input, input (-1: none), output indices
  int a_scale = -1, b_scale = -1;      // scalar f32 inputs scaling a and b (-1: none, 1.0)
  cuda::GemmProblem problem;
  cuda::LtConfig config;
  std::string variant;
};

// A tensor map to encode for each buffer set (problem/tensor_map.h ResolvedTensorMap).
struct TensorMapDesc {
  bool output = false;
  int index = 0;
  int dtype = 0;  // cuda::kF32...
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box, element_strides;
  uint32_t swizzle = 0, l2_promotion = 0;
  bool nan_fill = false;
};

struct WorkloadJob {
  std::string name;
  uint64_t index = 0;
  std::vector<int64_t> axes;
  double flops = 0, bytes = 0;
  std::vector<TensorDesc> inputs, outputs;
  std::string module;  // cubin of the candidate's variant (kernels) or "" (library)
  std::vector<LaunchDesc> launches;
  uint64_t workspace = 0;
  std::vector<TensorMapDesc> tensor_maps;  // kernels take arc_tensor_maps when not empty
  bool library = false;
  GemmDesc gemm;
  std::string reference_module;
  std::vector<LaunchDesc> reference_launches;
};

struct Request : EvaluateSettings {
  std::vector<WorkloadJob> workloads;
};

// Throws nlohmann::json::exception on a malformed request (an unsupported dtype included).
Request parse_request(const nlohmann::json& j, const EvaluateSettings& settings);

}  // namespace arc::eval::cuda_worker
