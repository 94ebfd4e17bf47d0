#pragma once
// A family's (or the reference's) kernel launches: grid, block and shared-memory expressions
// resolved to integers for one workload and knob values.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/numeric_range.h"
#include "base/status.h"
#include "problem/problem.h"

namespace arc::problem {

// The range of a family's workspace, in bytes (docs/problem-format-cuda.md): beyond 1 TiB it
// is a typo, not a buffer. (Dynamic shared memory has no static bound: what a device allows is
// checked when the kernel launches, and a search space may reach past it at its extremes.)
inline constexpr IntegerRange kWorkspaceBytesRange{0, uint64_t{1} << 40};

// The first launch field that does not resolve: which launch, which of its fields ("grid[0]",
// "block", "shared"), and what was expected and found.
struct LaunchError {
  size_t launch = 0;
  std::string field;
  std::string expected;
  std::string got;
};

// Evaluates one launch or workspace expression to an integer; on failure fills `err` (all but
// `launch`) and returns false.
bool integer_value(const std::string& expr, const std::map<std::string, int64_t>& names,
                   const std::map<std::string, std::string>& hints, const std::string& field,
                   const std::string& expected, int64_t& out, LaunchError& err);

// Resolves every launch with `names`; on the first failure fills `err` and returns false.
bool resolve_launches_impl(const std::vector<Launch>& launches,
                           const std::map<std::string, int64_t>& names,
                           const std::map<std::string, std::string>& hints,
                           std::vector<ResolvedLaunch>& out, LaunchError& err);

// Why a knob cannot appear in an expression for these knob values.
std::map<std::string, std::string> non_integer_knob_hints(
    const std::map<std::string, std::string>& knobs);

// A family's (or the reference's) launches resolved for a workload and knob values. Errors name
// the kernel, the field and the value (a non-integer, a non-positive grid or block dimension, a
// block over 1024 threads, a negative shared size).
// Each dimension is also held to CUDA's limits: grid x <= 2^31 - 1, grid y and z <= 65535,
// block x and y <= 1024, block z <= 64. Dimensions not given are 1.
// `device` adds the device's names (problem/tensor_map.h: sm_count).
Result<std::vector<ResolvedLaunch>> resolve_launches(
    const std::vector<Launch>& launches, const Workload& w,
    const std::map<std::string, std::string>& knobs,
    const std::map<std::string, int64_t>& device = {});

}  // namespace arc::problem
