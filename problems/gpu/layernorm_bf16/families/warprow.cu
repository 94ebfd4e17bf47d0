/* LayerNorm, one warp per row: blocks of BLOCK_ROWS warps, each warp owns one row and keeps it
 * packed in registers (lane l holds vectors l, l + 32, ..., UNROLL of them of VEC elements).
 * Mean, then variance as the mean of (x - mean)^2, both reduced with shuffles only (no block
 * barrier), then y = (x - mean) * rstd * gamma + beta. x is read once. Rows longer than
 * 32 * VEC * UNROLL fall back to two passes over global memory within the warp; rows whose
 * length is not a multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "layernorm.cuh"

#ifndef BLOCK_ROWS
#define BLOCK_ROWS 4
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef UNROLL
#define UNROLL 16
#endif
static_assert(BLOCK_ROWS >= 1 && BLOCK_ROWS <= 32, "BLOCK_ROWS must be in [1, 32]");
static_assert(UNROLL >= 1 && UNROLL <= 64, "UNROLL must be in [1, 64]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

/* Rows that do not fit the lane cache: shifted one-pass statistics (sums of d = x - x[0] and
 * d^2), then the write pass; 4 vectors in flight per lane. */
template <int V>
__device__ __noinline__ void ln_row_warp_stream(const elem_t* __restrict__ xr, const elem_t* __restrict__ gam,
                                                const elem_t* __restrict__ bet, elem_t* __restrict__ yr, int cols,
                                                int lane) {
  constexpr int B = 4;
  const int nvec = cols / V;
  const float k = elem_to_f32(xr[0]);
  float s1 = 0.f, s2 = 0.f;
  for (int base = lane; base < nvec; base += 32 * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * 32;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = k;
      }
    }
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = v[u][i] - k;
        s1 += d;
        s2 = fmaf(d, d, s2);
      }
  }
  s1 = warp_sum(s1);
  s2 = warp_sum(s2);
  const float md = s1 / cols;
  const float mean = k + md;
  const float rstd = rsqrtf(fmaxf(s2 / cols - md * md, 0.f) + LN_EPS);
  for (int j = lane; j < nvec; j += 32) {
    float v[V], g[V], b[V];
    load_vec<V>(xr + j * V, v);
    load_vec_nc<V>(gam + j * V, g);
    load_vec_nc<V>(bet + j * V, b);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = fmaf((v[i] - mean) * rstd, g[i], b[i]);
    store_vec<V>(yr + j * V, v);
  }
}

template <int V>
__device__ __forceinline__ void ln_row_warp(const elem_t* __restrict__ xr, const elem_t* __restrict__ gam,
                                            const elem_t* __restrict__ bet, elem_t* __restrict__ yr, int cols,
                                            int lane) {
  const int nvec = cols / V;
  if (nvec > 32 * UNROLL) {
    ln_row_warp_stream<V>(xr, gam, bet, yr, cols, lane);
    return;
  }
  elem_vec<V> c[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = lane + u * 32;
    c[u].w = typename elem_vec<V>::word{};
    if (j < nvec) c[u].w = *reinterpret_cast<const typename elem_vec<V>::word*>(xr + j * V);
  }
  float s1 = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    float v[V];
    unpack_vec<V>(c[u], v);
#pragma unroll
    for (int i = 0; i < V; ++i) s1 += v[i];
  }
  const float mean = warp_sum(s1) / cols;
  float s2 = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = lane + u * 32;
    if (j < nvec) {
      float v[V];
      unpack_vec<V>(c[u], v);
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = v[i] - mean;
        s2 = fmaf(d, d, s2);
      }
    }
  }
  const float rstd = rsqrtf(warp_sum(s2) / cols + LN_EPS);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = lane + u * 32;
    if (j < nvec) {
      float v[V], g[V], b[V];
      unpack_vec<V>(c[u], v);
      load_vec_nc<V>(gam + j * V, g);
      load_vec_nc<V>(bet + j * V, b);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = fmaf((v[i] - mean) * rstd, g[i], b[i]);
      store_vec<V>(yr + j * V, v);
    }
  }
}

ARC_KERNEL __launch_bounds__(32 * BLOCK_ROWS) layernorm_warprow(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = static_cast<long long>(blockIdx.x) * BLOCK_ROWS + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warps only: no block barrier follows
  const int lane = threadIdx.x & 31;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* gam = static_cast<const elem_t*>(a.in[1]);
  const elem_t* bet = static_cast<const elem_t*>(a.in[2]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    ln_row_warp<VEC>(xr, gam, bet, yr, cols, lane);
  } else {
    ln_row_warp<1>(xr, gam, bet, yr, cols, lane);
  }
}
