/* Row softmax, single pass with the row staged in shared memory: one block of THREADS threads
 * per row and cols * ARC_ELEM_BYTES bytes of dynamic shared memory. Each thread issues cp.async
 * copies of its vectors (VEC elements each) into shared memory in STAGES commit groups, then
 * consumes the groups as they land: per group a max and a rescaled sum of exp (online
 * statistics), overlapping the arithmetic with the copies still in flight. After the block
 * merge, the row is read back from shared memory and exp(x - max) / sum written: x is read from
 * global memory exactly once. Rows whose length is not a multiple of VEC take the VEC = 1 path. */
#include "arc_cuda.h"
#include "cp_async.cuh"  // elem_io.cuh: elem_t from ARC_ELEM_BYTES ([params]: 2 bf16, 4 f32)

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC (16 / ARC_ELEM_BYTES)  // one 16-byte word
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef EXP
#define EXP accurate
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(STAGES >= 1 && STAGES <= 8, "STAGES must be in [1, 8]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
static_assert(VEC * ARC_ELEM_BYTES <= 16, "a vector is at most 16 bytes");

#include "softmax_stats.cuh"

extern __shared__ __align__(16) unsigned char arc_smem[];

template <int V>
__device__ __forceinline__ void softmax_row(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                            float* sh_m, float* sh_s) {
  elem_t* srow = reinterpret_cast<elem_t*>(arc_smem);
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  const int kmax = (nvec + THREADS - 1) / THREADS;  // vectors per thread, at most
  const int per = (kmax + STAGES - 1) / STAGES;     // of them per commit group
  stage_row<THREADS, STAGES, V>(srow, xr, nvec, kmax, per);
  float m = ARC_NEG_INF, s = 0.f;
#pragma unroll
  for (int st = 0; st < STAGES; ++st) {
    cp_async_wait(STAGES - 1 - st);  // groups 0..st of this thread have landed
    const int k0 = st * per, k1 = min((st + 1) * per, kmax);
    float gm = ARC_NEG_INF;
    for (int k = k0; k < k1; ++k) {
      const int j = tid + k * THREADS;
      if (j < nvec) {
        float v[V];
        load_smem_vec<V>(srow + j * V, v);
#pragma unroll
        for (int i = 0; i < V; ++i) gm = fmaxf(gm, v[i]);
      }
    }
    if (gm != ARC_NEG_INF) {
      const float nm = fmaxf(m, gm);
      const float nmp = arc_exp_prep(nm);
      float gs = 0.f;
      for (int k = k0; k < k1; ++k) {
        const int j = tid + k * THREADS;
        if (j < nvec) {
          float v[V];
          load_smem_vec<V>(srow + j * V, v);
#pragma unroll
          for (int i = 0; i < V; ++i) gs += arc_exp_from(v[i], nmp);
        }
      }
      s = s * arc_exp(m - nm) + gs;
      m = nm;
    }
  }
  block_reduce_ms<THREADS>(m, s, sh_m, sh_s);
  const float inv = 1.0f / s;
  const float mp = arc_exp_prep(m);
  for (int k = 0; k < kmax; ++k) {
    const int j = tid + k * THREADS;
    if (j < nvec) {
      float v[V];
      load_smem_vec<V>(srow + j * V, v);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = arc_exp_from(v[i], mp) * inv;
      store_vec<V>(yr + j * V, v);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) softmax_smem(arc_args a) {
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
