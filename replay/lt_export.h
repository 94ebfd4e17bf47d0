#pragma once
// The cuBLASLt part of a CUDA export (replay/kernel_export.h, docs/export.md): the plan table of
// a library variant (per workload, the algorithm the run measured, as the evaluation recorded
// it: cuda/cublaslt.h's LtPlan::description() and the cuBLASLt version) and the runtime that
// runs it. The runtime sets up a shape's handle, descriptors, layouts and algorithm once per
// device, caches them (thread-safe) and replays the recorded algorithm; the heuristic runs at
// most once per shape and device, and only where the recorded algorithm cannot be used. It runs
// what cuda/cublaslt.h's worker runs: bf16, f16 and f32 products, and fp8 e4m3 operands with a
// bf16, f16 or f32 C and D, FAST_ACCUM and the per-tensor scales. Pure text; no I/O.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "problem/problem.h"

namespace arc::replay {

// What an evaluation recorded for one workload of a library variant (its details "plan" and
// "library").
struct LtRecord {
  std::string plan;     // "algo 66, tile 128x256, stages 64x4, splitk 1, ..."
  std::string library;  // "cuBLASLt 130100"
};

// A plan description parsed into the algorithm's configuration.
struct LtPlanRow {
  int algo = -1;  // -1: not recorded (the heuristic decides)
  std::string tile = "0", stages = "0", reduction = "0";  // C enumerator names or numbers
  int splitk = 1, swizzle = 0;
  int custom = -1, inner = -1, cluster = -1;  // -1: not recorded (plans logged before them)
  uint64_t lt_version = 0;                    // 0: unknown
  std::vector<uint64_t> bytes;                // the cublasLtMatmulAlgo_t words; empty: none
};
LtPlanRow parse_lt_plan(const LtRecord& r);

// The compute capability (major * 10 + minor) in a device description such as
// "cuda: NVIDIA H200 (sm_90a)"; 0 when it names none.
int recorded_sm(const std::string& device);

// The #include lines the runtime needs (besides <cublasLt.h> and the export's own).
std::vector<std::string> lt_runtime_includes();

// The runtime: struct arc_lt_plan (a plan table's row), struct arc_lt_variant (a library
// variant: its plan table and the product it computes), and
//   arc_lt_gemm(variant, m, n, k, a, b, c, d, a_scale, b_scale, workspace, stream)
//                                                     D = A B^T (* a_scale * b_scale) (+ C)
//   arc_lt_workspace_bytes(variant, m, n, k, accumulate)   the workspace it uses
//   arc_lt_plan_in_use(variant, m, n, k, accumulate)       which algorithm, and why
// `sm`: the compute capability that measured the tables (0: unknown, any device may use
// them). Needs the export's common section (arc_error, arc_with_own_workspace) before it.
std::string lt_runtime(int sm);

// A library variant as the export's launcher runs it.
struct LtVariant {
  // Its plan table `NAME_plans` and `static const arc_lt_variant NAME`.
  std::string definitions;
  // arc_lt_* arguments over the launcher's locals (axes as doubles, `inputs`, `outputs`):
  std::string shape;        // "&NAME, llround(m), llround(n), llround(k)"
  std::string tensors;      // "inputs[0], inputs[1], nullptr, outputs[0], inputs[2], inputs[3]"
  bool accumulate = false;  // with C
};

// Library variant `v` of family `f`: its plan table, one row per workload in `workloads` (m, n,
// k from the family's gemm axes, the algorithm from `records`, "not recorded" where it has
// none) and the catch-all row for any other shape, each with the variant's HEUR as the
// heuristic rank of its fallback; its arc_lt_variant: the cuBLASLt types of gemm.a and b (A, B)
// and of gemm.d (C, D) and, with fp8 e4m3 operands, the variant's FAST_ACCUM, as the worker sets
// them (cuda/cublaslt.cc); its tensors, the scales gemm.a_scale and gemm.b_scale among them
// (nullptr: a factor of 1). kInvalidArgument, naming the family, for gemm tensors the problem
// lacks or an operand dtype the runtime has no cuBLASLt type for.
Result<LtVariant> lt_variant(const problem::Problem& p, const problem::Family& f,
                             const problem::Variant& v,
                             const std::vector<problem::Workload>& workloads,
                             const std::map<std::string, LtRecord>& records,
                             const std::string& name);

}  // namespace arc::replay
