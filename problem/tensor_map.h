#pragma once
// A family's tensor maps (problem.h TensorMapSpec) resolved for one workload and variant: what
// cuTensorMapEncodeTiled takes, checked against the rules of the Hopper tensor memory accelerator
// so that a map the driver would refuse fails here, naming the field, before any GPU work.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "problem/problem.h"

namespace arc::problem {

// The device values launch, workspace and tensor-map expressions may name besides axes, params
// and knobs. `arcd check` (no device needed) resolves them with the stand-ins below.
inline constexpr const char* kSmCountName = "sm_count";
inline constexpr int64_t kCheckSmCount = 132;  // an H100 SXM / H200
// The maps a family may declare: ARC_MAX_TENSOR_MAPS of cuda/include/arc_cuda.h.
inline constexpr size_t kMaxTensorMaps = 8;
std::map<std::string, int64_t> check_device_names();

struct ResolvedTensorMap {
  bool output = false;  // a.out[index] (an alias: its input's buffer) or a.in[index]
  int index = 0;
  std::string dtype;
  // Innermost dimension first, as the driver takes them.
  std::vector<uint64_t> dims;
  std::vector<uint64_t> strides;  // bytes between consecutive entries of dims 1..rank-1
  std::vector<uint32_t> box;
  std::vector<uint32_t> element_strides;
  uint32_t swizzle = 0;       // bytes: 0, 32, 64, 128
  uint32_t l2_promotion = 0;  // bytes: 0, 64, 128, 256
  bool nan_fill = false;
};

// Resolves every map of `f` for workload `w` at the variant's knob values (every knob, e.g.
// Family::knob_values) and the device's names. Errors name "tensor_maps[i].FIELD", the
// expected value and what was found, for the workload.
Result<std::vector<ResolvedTensorMap>> resolve_tensor_maps(
    const Problem& p, const Family& f, const Workload& w,
    const std::map<std::string, std::string>& knobs, const std::map<std::string, int64_t>& device);

}  // namespace arc::problem
