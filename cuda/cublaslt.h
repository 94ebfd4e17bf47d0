#pragma once
// cuBLASLt, loaded with dlopen("libcublasLt.so.13") when the library family is first used.
// One GEMM layout (docs/problem-format-cuda.md): A row-major [m, k], B row-major [n, k] (a
// weight, y = x @ W^T), C and D row-major [m, n], bf16 (or f16, f32) data, fp32 accumulation,
// D = A @ B^T (+ C when beta = 1). In cuBLASLt's column-major terms that is
// D^T (n x m, ld n) = op_T(B: k x n, ld k) * op_N(A: k x m, ld k): the "TN" layout with both
// operands k-contiguous, the only one cuBLASLt runs fp8 in. With fp8 e4m3 A and B, C and D are
// bf16, f16 or f32 and D = scale_a * scale_b * (A @ B^T) (+ C), the scales read from device
// memory at every run (per-tensor dequantization factors; none: 1).
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
  std::string dtype = "bf16";  // A and B: "bf16" | "f16" | "f32" | "fp8_e4m3"
  bool accumulate = false;     // beta = 1 with C (C may be D itself: in place)
  // C and D: "" is `dtype`; with fp8_e4m3 A and B one of "bf16", "f16", "f32" (required).
  std::string out_dtype;
};

// Knob values as the family's knobs give them ("auto" or absent: the heuristic's choice).
struct LtConfig {
  int heur = 0;
  std::string tile = "auto";       // "128x256"
  std::string stages = "auto";     // "4" (a count) or an enum suffix such as "64x4"
  int splitk = 0;                  // 0: the heuristic's; 1: none
  std::string reduction = "auto";  // none | inplace | compute | output
  int swizzle = -1;                // -1: the heuristic's
  // fp8 only: 1 accumulates in the tensor cores' reduced-precision accumulator without
  // promoting partial sums to fp32 registers (CUBLASLT_MATMUL_DESC_FAST_ACCUM): faster, less
  // precise over long k.
  int fast_accum = 0;
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
  // D = A B^T (+ C) on `stream`. `ws` must hold plan.workspace_bytes(). An fp8 plan multiplies
  // by *a_scale and *b_scale (device pointers to one float each; null: 1), which it sets on its
  // descriptor at every call: one plan must not run on two threads at once. Scales for a plan
  // that is not fp8 are kInvalidArgument.
  Status run(const LtPlan& p, const void* a, const void* b, const void* c, void* d, void* ws,
             CUstream stream, const float* a_scale = nullptr, const float* b_scale = nullptr) const;

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
  //  (data[0..7], 16 hex digits each), restorable with the same cuBLASLt version; an fp8 plan
  //  adds ", types fp8_e4m3 x fp8_e4m3 -> bf16, fast_accum 0".
  const std::string& description() const { return description_; }
  bool fp8() const { return fp8_; }
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
  bool fp8_ = false;
  std::string description_;
  const Lt::Impl* lt_ = nullptr;
};

}  // namespace arc::cuda
