/* RMSNorm, single pass with the row held in registers: one block of THREADS threads per row;
 * thread t loads vectors t, t + THREADS, ..., UNROLL of them of VEC elements, all in flight,
 * and keeps them packed (bf16) in registers. Sum of squares, block reduction, then
 * y = x * rsqrt(mean(x^2) + eps) * weight from the registers (weight through the read-only
 * cache): x is read from memory exactly once. Rows longer than THREADS * VEC * UNROLL fall back
 * to two passes over global memory; rows whose length is not a multiple of VEC take the
 * scalar (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "rmsnorm.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 64, "UNROLL must be in [1, 64]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

template <int V>
__device__ __forceinline__ void rms_row(const elem_t* __restrict__ xr, const elem_t* __restrict__ w,
                                        elem_t* __restrict__ yr, int cols, float* sh) {
  const int nvec = cols / V;
  if (nvec > THREADS * UNROLL) {
    rms_row_stream<THREADS, V, (UNROLL < 4 ? UNROLL : 4)>(xr, w, yr, cols, sh);
    return;
  }
  const int tid = threadIdx.x;
  elem_vec<V> c[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
    c[u].w = typename elem_vec<V>::word{};  // padding contributes 0
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
  ss = block_sum<THREADS>(ss, sh);
  const float r = rsqrtf(ss / cols + RMS_EPS);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
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

ARC_KERNEL __launch_bounds__(THREADS) rmsnorm_regcache(arc_args a) {
  __shared__ float sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* w = static_cast<const elem_t*>(a.in[1]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    rms_row<VEC>(xr, w, yr, cols, sh);
  } else {
    rms_row<1>(xr, w, yr, cols, sh);
  }
}
