#pragma once
// cuBLASLt, loaded with dlopen("libcublasLt.so.13") when the library family is first used.
// One GEMM layout (docs/problem-format-cuda.md): A row-major [m, k], B row-major [n, k] (a
// weight, y = x @ W^T), C and D row-major [m, n], bf16 (or f16, f32) data, fp32 accumulation,
// D = A @ B^T (+ C when beta = 1). In cuBLASLt's column-major terms that is
// D^T (n x m, ld n) = op_T(B: k x n, ld k) * op_N(A: k x m, ld k).
//
// An algorithm is the heuristic's choice of rank `heur` (0: the default cuBLASLt would use),
// optionally with its configuration overridden (tile, stages, split-K, reduction scheme, CTA
// swizzle) and validated by cublasLtMatmulAlgoCheck. A refused configuration is an error that
// says which attribute and why.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda.h>

#include "base/status.h"

namespace arc::cuda {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";  // "bf16" | "f16" | "f32"
  bool accumulate = false;     // beta = 1 with C (C may be D itself: in place)
};

// Knob values as the family's knobs give them ("auto" or absent: the heuristic's choice).
struct LtConfig {
  int heur = 0;
  std::string tile = "auto";       // "128x256"
  std::string stages = "auto";     // "4" (a count) or an enum suffix such as "64x4"
  int splitk = 0;                  // 0: the heuristic's; 1: none
  std::string reduction = "auto";  // none | inplace | compute | output
  int swizzle = -1;                // -1: the heuristic's
};

class LtPlan;

class Lt {
 public:
  // kUnavailable when the library cannot be loaded.
  static Result<std::unique_ptr<Lt>> open();
  ~Lt();
  Lt(const Lt&) = delete;
  Lt& operator=(const Lt&) = delete;
  // "cuBLASLt 130100".
  std::string version() const;

  // Plans a GEMM for a configuration; kInvalidArgument names the refused knob.
  Result<std::unique_ptr<LtPlan>> plan(const GemmProblem& g, const LtConfig& c,
                                       size_t max_workspace);
  // D = A B^T (+ C) on `stream`. `ws` must hold plan.workspace_bytes().
  Status run(const LtPlan& p, const void* a, const void* b, const void* c, void* d, void* ws,
             CUstream stream) const;

  struct Impl;

 private:
  explicit Lt(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class LtPlan {
 public:
  ~LtPlan();
  size_t workspace_bytes() const { return workspace_; }
  // "algo 66, tile 128x256, stages 64x4, splitk 1, reduction none, swizzle 0, workspace 0,
  //  waves 1.94, heuristic rank 0 of 8, custom 0, inner 0, cluster 0, bytes <128 hex digits>":
  //  every configuration attribute of the algorithm, then its cublasLtMatmulAlgo_t words
  //  (data[0..7], 16 hex digits each), restorable with the same cuBLASLt version.
  const std::string& description() const { return description_; }
  int heuristic_count() const { return heuristic_count_; }

 private:
  friend class Lt;
  LtPlan() = default;
  void* matmul_ = nullptr;  // cublasLtMatmulDesc_t
  void* layout_a_ = nullptr;
  void* layout_b_ = nullptr;
  void* layout_c_ = nullptr;
  alignas(8) unsigned char algo_[64] = {};  // cublasLtMatmulAlgo_t
  size_t workspace_ = 0;
  int heuristic_count_ = 0;
  std::string description_;
  const Lt::Impl* lt_ = nullptr;
};

}  // namespace arc::cuda
