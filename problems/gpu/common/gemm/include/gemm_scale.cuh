/* The output scale of the GEMM families: with ARC_GEMM_FP8 = 1 (gemm_fp8's parameter) the
 * product of the per-tensor scales, the f32 inputs ARC_SCALE_X and ARC_SCALE_W (their indices in
 * a.in), by which the fp32 accumulators are multiplied before the bf16 store; 1 otherwise.
 * Needs arc_cuda.h and ARC_GEMM_FP8 defined. */
#ifndef ARC_GEMM_SCALE_CUH_
#define ARC_GEMM_SCALE_CUH_

namespace {

__device__ __forceinline__ float output_scale(const arc_args& a) {
#if ARC_GEMM_FP8
  return *static_cast<const float*>(a.in[ARC_SCALE_X]) * *static_cast<const float*>(a.in[ARC_SCALE_W]);
#else
  (void)a;
  return 1.0f;
#endif
}

}  // namespace

#endif /* ARC_GEMM_SCALE_CUH_ */
