/* Warp and block reductions by shuffles and one 32-entry shared-memory buffer. */
#pragma once

#define ARC_NEG_INF (__int_as_float(0xff800000u))

/* Every lane of a full warp must call them; every lane gets the result. warp_sum adds floats or
 * doubles. */
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
/* Block-wide reductions over NT threads (a multiple of 32): every thread of the block must call
 * them and every thread gets the result. `sh` holds at least 32 floats; the leading barrier lets
 * one buffer serve consecutive reductions (the previous reduction's readers are done before it
 * is rewritten). */
template <int NT>
__device__ __forceinline__ float block_sum(float v, float* sh) {
  v = warp_sum(v);
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < NT / 32 ? sh[lane] : 0.f;
    v = warp_sum(v);
  }
  return v;
}
template <int NT>
__device__ __forceinline__ float block_max(float v, float* sh) {
  v = warp_max(v);
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < NT / 32 ? sh[lane] : ARC_NEG_INF;
    v = warp_max(v);
  }
  return v;
}
