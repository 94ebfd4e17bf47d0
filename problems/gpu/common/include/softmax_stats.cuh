/* Softmax arithmetic: exp(x - m) as the EXP knob selects, and online (max, sum of exp)
 * statistics merged across a block. The including source defines EXP (accurate or fast). */
#pragma once
#include "reduce.cuh"

#ifndef EXP
#error "EXP must be defined: accurate or fast"
#endif

/* exp(x - m) for softmax, with m prepared once per row by arc_exp_prep(m).
 * EXP=accurate: expf(x - m) (a few ulp).
 * EXP=fast: ex2.approx(x * log2(e) - m * log2(e)): one FFMA and one MUFU op per element. On the
 * arguments softmax sees here (x - m in [-8, 0]) the relative error stays near 1e-6;
 * results below 2^-126 flush to zero. */
#define ARC_EXP_accurate 1
#define ARC_EXP_fast 2
#ifndef ARC_CAT
#define ARC_CAT_(a, b) a##b
#define ARC_CAT(a, b) ARC_CAT_(a, b)
#endif
#if ARC_CAT(ARC_EXP_, EXP) == 1
__device__ __forceinline__ float arc_exp(float v) { return expf(v); }
__device__ __forceinline__ float arc_exp_prep(float m) { return m; }
__device__ __forceinline__ float arc_exp_from(float x, float mp) { return expf(x - mp); }
#elif ARC_CAT(ARC_EXP_, EXP) == 2
__device__ __forceinline__ float arc_ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float arc_exp(float v) { return arc_ex2(v * 1.4426950408889634f); }
__device__ __forceinline__ float arc_exp_prep(float m) { return m * 1.4426950408889634f; }
__device__ __forceinline__ float arc_exp_from(float x, float mp) { return arc_ex2(fmaf(x, 1.4426950408889634f, -mp)); }
#else
#error "EXP must be accurate or fast"
#endif

/* Online softmax statistics: (m, s) stands for sum_i exp(x_i - m) with m the running max.
 * Merging two pairs rescales both sums to the larger max; an empty pair is (-inf, 0). */
__device__ __forceinline__ void ms_merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  const float a = m == ARC_NEG_INF ? 0.f : s * arc_exp(m - nm);
  const float b = om == ARC_NEG_INF ? 0.f : os * arc_exp(om - nm);
  m = nm;
  s = a + b;
}
/* Merges the (m, s) pairs of the NT threads of the block (a multiple of 32): every thread must
 * call it and every thread gets the merged pair. sh_m and sh_s hold at least 32 floats each. */
template <int NT>
__device__ __forceinline__ void block_reduce_ms(float& m, float& s, float* sh_m, float* sh_s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, o);
    const float os = __shfl_xor_sync(0xffffffffu, s, o);
    ms_merge(m, s, om, os);
  }
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
      sh_m[warp] = m;
      sh_s[warp] = s;
    }
    __syncthreads();
    m = lane < NT / 32 ? sh_m[lane] : ARC_NEG_INF;
    s = lane < NT / 32 ? sh_s[lane] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float om = __shfl_xor_sync(0xffffffffu, m, o);
      const float os = __shfl_xor_sync(0xffffffffu, s, o);
      ms_merge(m, s, om, os);
    }
  }
}
