/* RMSNorm over rows of elements (elem_io.cuh) with a weight:
 * y = x / sqrt(mean(x^2) + RMS_EPS) * weight. */
#pragma once
#include "elem_io.cuh"
#include "reduce.cuh"

#define RMS_EPS 1e-6f  // rmsnorm_bf16's eps, as in its reference

/* Two passes over the row in global memory, one block of NT threads (a multiple of 32) per row,
 * B vectors of V elements in flight per thread. `sh` holds at least 32 floats (block_sum). */
template <int NT, int V, int B>
__device__ __forceinline__ void rms_row_stream(const elem_t* __restrict__ xr, const elem_t* __restrict__ w,
                                               elem_t* __restrict__ yr, int cols, float* sh) {
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  float ss = 0.f;
  for (int base = tid; base < nvec; base += NT * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * NT;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) ss = fmaf(v[u][i], v[u][i], ss);
  }
  ss = block_sum<NT>(ss, sh);
  const float r = rsqrtf(ss / cols + RMS_EPS);
  for (int base = tid; base < nvec; base += NT * B) {
    float v[B][V], g[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * NT;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
        load_vec_nc<V>(w + j * V, g[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * NT;
      if (j < nvec) {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = v[u][i] * r * g[u][i];
        store_vec<V>(yr + j * V, v[u]);
      }
    }
  }
}
