/* Row softmax, online two-pass: one block of THREADS threads per row.
 *   pass 1: each thread walks its share of the row in batches of UNROLL vectors of VEC
 *           elements (UNROLL independent 16-byte-or-narrower loads in flight), keeping a running
 *           (max, sum of exp) pair rescaled once per batch; the pairs are merged across the block.
 *   pass 2: the row is read again (from L2 when it is still there) and exp(x - max) / sum is
 *           written with the same vector width.
 * Two reads of x, one write of y; about two exp per element. Rows whose length is not a
 * multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"
#include "elem_io.cuh"  // elem_t from ARC_ELEM_BYTES ([params]: 2 bf16, 4 f32)

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC (16 / ARC_ELEM_BYTES)  // one 16-byte word
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef EXP
#define EXP accurate
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
static_assert(VEC * ARC_ELEM_BYTES <= 16, "a vector is at most 16 bytes");

#include "softmax_stats.cuh"

template <int V>
__device__ __forceinline__ void softmax_row(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                            float* sh_m, float* sh_s) {
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  float m = ARC_NEG_INF, s = 0.f;
  for (int base = tid; base < nvec; base += THREADS * UNROLL) {
    float v[UNROLL][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
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
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bm = fmaxf(bm, v[u][i]);
    const float nm = fmaxf(m, bm);  // finite: the batch's first vector is in the row
    const float nmp = arc_exp_prep(nm);
    float bs = 0.f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bs += arc_exp_from(v[u][i], nmp);  // exp(-inf) = 0 for padding
    s = s * arc_exp(m - nm) + bs;
    m = nm;
  }
  block_reduce_ms<THREADS>(m, s, sh_m, sh_s);
  const float inv = 1.0f / s;
  const float mp = arc_exp_prep(m);
  for (int base = tid; base < nvec; base += THREADS * UNROLL) {
    float v[UNROLL][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int j = base + u * THREADS;
      if (j < nvec) load_vec<V>(xr + j * V, v[u]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int j = base + u * THREADS;
      if (j < nvec) {
        float o[V];
#pragma unroll
        for (int i = 0; i < V; ++i) o[i] = arc_exp_from(v[u][i], mp) * inv;
        store_vec<V>(yr + j * V, o);
      }
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) softmax_online(arc_args a) {
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
