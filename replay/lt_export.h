#pragma once
// The cuBLASLt part of a CUDA export (replay/kernel_export.h, docs/export.md): the plan table of
// a library variant (per workload, the algorithm the run measured, as the evaluation recorded
// it: cuda/cublaslt.h's LtPlan::description() and the cuBLASLt version) and the runtime that
// runs it. The runtime sets up a shape's handle, descriptors, layouts and algorithm once per
// device, caches them (thread-safe) and replays the recorded algorithm; the heuristic runs at
// most once per shape and device, and only where the recorded algorithm cannot be used. Pure
// text; no I/O.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// The runtime: struct arc_lt_plan, and
//   arc_lt_gemm(table, m, n, k, type, a, b, c, d, workspace, stream)   D = A B^T (+ C)
//   arc_lt_workspace_bytes(table, m, n, k, type, accumulate)           the workspace it uses
//   arc_lt_plan_in_use(table, m, n, k, type, accumulate)               which algorithm, why
// `sm`: the compute capability that measured the tables (0: unknown, any device may use
// them). Needs the export's common section (arc_error, arc_with_own_workspace) before it.
std::string lt_runtime(int sm);

// A library variant's plan table `table`: one row per workload in `workloads` (m, n, k from the
// family's gemm axes, the algorithm from `records`, "not recorded" where it has none), then the
// catch-all row for any other shape; `heur` is the heuristic rank of the fallback.
std::string lt_plan_table(const problem::Family& f, const std::vector<problem::Workload>& workloads,
                          const std::map<std::string, LtRecord>& records, int heur,
                          const std::string& table);

}  // namespace arc::replay
