/* Row softmax, single pass with the row held in registers: one block of THREADS threads per
 * row; thread t loads vectors t, t + THREADS, ..., UNROLL of them of VEC elements each, all
 * loads in flight at once. Block max, then exp in place and block sum, then the scaled
 * values are stored: x is read from memory exactly once, exp computed once per element.
 * A row longer than THREADS * VEC * UNROLL elements does not fit the cache and falls back to
 * the two-pass online method (pass 2 re-reads x). Rows whose length is not a multiple of VEC
 * take the scalar (VEC = 1) path. */
#include "arc_cuda.h"
#include "elem_io.cuh"  // elem_t from ARC_ELEM_BYTES ([params]: 2 bf16, 4 f32)

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC (16 / ARC_ELEM_BYTES)  // one 16-byte word
#endif
#ifndef UNROLL
#define UNROLL ARC_ELEM_BYTES  // 4 (f32) or 2 (bf16): a 4096-element row fits at the defaults
#endif
#ifndef EXP
#define EXP accurate
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 64, "UNROLL must be in [1, 64]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
static_assert(VEC * ARC_ELEM_BYTES <= 16, "a vector is at most 16 bytes");

#include "softmax_stats.cuh"

/* Fallback for rows longer than the register cache: online (max, sum) pass, then a write pass. */
template <int V>
__device__ __noinline__ void softmax_row_stream(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                                float* sh_m, float* sh_s) {
  constexpr int B = UNROLL < 4 ? UNROLL : 4;  // vectors per batch
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  float m = ARC_NEG_INF, s = 0.f;
  for (int base = tid; base < nvec; base += THREADS * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * THREADS;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = ARC_NEG_INF;
      }
    }
    float bm = ARC_NEG_INF;
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bm = fmaxf(bm, v[u][i]);
    const float nm = fmaxf(m, bm);
    const float nmp = arc_exp_prep(nm);
    float bs = 0.f;
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bs += arc_exp_from(v[u][i], nmp);
    s = s * arc_exp(m - nm) + bs;
    m = nm;
  }
  block_reduce_ms<THREADS>(m, s, sh_m, sh_s);
  const float inv = 1.0f / s;
  const float mp = arc_exp_prep(m);
  for (int j = tid; j < nvec; j += THREADS) {
    float v[V];
    load_vec<V>(xr + j * V, v);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = arc_exp_from(v[i], mp) * inv;
    store_vec<V>(yr + j * V, v);
  }
}

template <int V>
__device__ __forceinline__ void softmax_row(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                            float* sh_m, float* sh_s) {
  const int nvec = cols / V;
  if (nvec > THREADS * UNROLL) {
    softmax_row_stream<V>(xr, yr, cols, sh_m, sh_s);
    return;
  }
  const int tid = threadIdx.x;
  float v[UNROLL][V];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
    if (j < nvec) {
      load_vec<V>(xr + j * V, v[u]);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) v[u][i] = ARC_NEG_INF;
    }
  }
  float m = ARC_NEG_INF;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
#pragma unroll
    for (int i = 0; i < V; ++i) m = fmaxf(m, v[u][i]);
  m = block_max<THREADS>(m, sh_m);
  const float mp = arc_exp_prep(m);
  float s = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
#pragma unroll
    for (int i = 0; i < V; ++i) {
      v[u][i] = arc_exp_from(v[u][i], mp);  // padding: exp(-inf) = 0
      s += v[u][i];
    }
  s = block_sum<THREADS>(s, sh_s);
  const float inv = 1.0f / s;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
    if (j < nvec) {
#pragma unroll
      for (int i = 0; i < V; ++i) v[u][i] *= inv;
      store_vec<V>(yr + j * V, v[u]);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) softmax_regcache(arc_args a) {
  __shared__ float sh_m[32], sh_s[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    softmax_row<VEC>(xr, yr, cols, sh_m, sh_s);
  } else {
    softmax_row<1>(xr, yr, cols, sh_m, sh_s);
  }
}
