/* The bf16 GEMM epilogue's store, shared by the GEMM families: two adjacent outputs of a
 * row-major y [M, N], adding what y holds there first when ARC_RESIDUAL is 1 (the problem's
 * parameter: y aliases the residual). Needs arc_cuda.h and ARC_RESIDUAL defined. */
#ifndef ARC_GEMM_STORE_CUH_
#define ARC_GEMM_STORE_CUH_

namespace {

// Stores two adjacent outputs (row, col) and (row, col + 1): one 4-byte store when N is even,
// else each that lies inside y.
__device__ __forceinline__ void store_pair(arc_bf16* y, int M, int N, int row, int col, float v0, float v1) {
  if (row >= M) return;
  arc_bf16* p = y + static_cast<long long>(row) * N + col;
  if ((N & 1) == 0 && col + 1 < N) {
#if ARC_RESIDUAL
    const float2 r = arc_bf16x2_to_f32x2(*reinterpret_cast<const unsigned*>(p));
    v0 += r.x;
    v1 += r.y;
#endif
    *reinterpret_cast<unsigned*>(p) = arc_f32x2_to_bf16x2(v0, v1);
  } else {
    if (col < N) {
#if ARC_RESIDUAL
      v0 += arc_bf16_to_f32(p[0]);
#endif
      p[0] = arc_f32_to_bf16(v0);
    }
    if (col + 1 < N) {
#if ARC_RESIDUAL
      v1 += arc_bf16_to_f32(p[1]);
#endif
      p[1] = arc_f32_to_bf16(v1);
    }
  }
}

}  // namespace

#endif /* ARC_GEMM_STORE_CUH_ */
