/* RMSNorm, one warp per row: blocks of BLOCK_ROWS warps, each warp owns one row and keeps it
 * packed in registers (lane l holds vectors l, l + 32, ..., UNROLL of them of VEC elements),
 * reduces with shuffles only (no block barrier), then writes
 * y = x * rsqrt(mean(x^2) + eps) * weight. x is read once. Rows longer than 32 * VEC * UNROLL
 * fall back to two passes over global memory within the warp; rows whose length is not a
 * multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "rmsnorm.cuh"

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

/* Rows that do not fit the lane cache: two passes over global memory, 4 vectors in flight. */
template <int V>
__device__ __noinline__ void rms_row_warp_stream(const elem_t* __restrict__ xr, const elem_t* __restrict__ w,
                                                 elem_t* __restrict__ yr, int cols, int lane) {
  constexpr int B = 4;
  const int nvec = cols / V;
  float ss = 0.f;
  for (int base = lane; base < nvec; base += 32 * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * 32;
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
  ss = warp_sum(ss);
  const float r = rsqrtf(ss / cols + RMS_EPS);
  for (int j = lane; j < nvec; j += 32) {
    float v[V], g[V];
    load_vec<V>(xr + j * V, v);
    load_vec_nc<V>(w + j * V, g);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = v[i] * r * g[i];
    store_vec<V>(yr + j * V, v);
  }
}

template <int V>
__device__ __forceinline__ void rms_row_warp(const elem_t* __restrict__ xr, const elem_t* __restrict__ w,
                                             elem_t* __restrict__ yr, int cols, int lane) {
  const int nvec = cols / V;
  if (nvec > 32 * UNROLL) {
    rms_row_warp_stream<V>(xr, w, yr, cols, lane);
    return;
  }
  elem_vec<V> c[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = lane + u * 32;
    c[u].w = typename elem_vec<V>::word{};
    if (j < nvec) c[u].w = *reinterpret_cast<const typename elem_vec<V>::word*>(xr + j * V);
  }
  float ss = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    float v[V];
    unpack_vec<V>(c[u], v);
#pragma unroll
    for (int i = 0; i < V; ++i) ss = fmaf(v[i], v[i], ss);
  }
  ss = warp_sum(ss);
  const float r = rsqrtf(ss / cols + RMS_EPS);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = lane + u * 32;
    if (j < nvec) {
      float v[V], g[V];
      unpack_vec<V>(c[u], v);
      load_vec_nc<V>(w + j * V, g);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = v[i] * r * g[i];
      store_vec<V>(yr + j * V, v);
    }
  }
}

ARC_KERNEL __launch_bounds__(32 * BLOCK_ROWS) rmsnorm_warprow(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = static_cast<long long>(blockIdx.x) * BLOCK_ROWS + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warps only: no block barrier follows
  const int lane = threadIdx.x & 31;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* w = static_cast<const elem_t*>(a.in[1]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    rms_row_warp<VEC>(xr, w, yr, cols, lane);
  } else {
    rms_row_warp<1>(xr, w, yr, cols, lane);
  }
}
