/* LayerNorm, single pass with the row staged in shared memory: one block of THREADS threads per
 * row and 2 * cols bytes of dynamic shared memory. Each thread copies its vectors (VEC
 * elements) with cp.async in STAGES commit groups and sums each group as it lands; after the
 * mean, the variance (mean of (x - mean)^2) and the output
 * y = (x - mean) * rstd * gamma + beta are computed from shared memory. x is read from global
 * memory exactly once. Rows whose length is not a multiple of VEC take the VEC = 1 path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "cp_async.cuh"
#include "layernorm.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef STAGES
#define STAGES 2
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(STAGES >= 1 && STAGES <= 8, "STAGES must be in [1, 8]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

extern __shared__ __align__(16) unsigned char arc_smem[];

template <int V>
__device__ __forceinline__ void ln_row(const elem_t* __restrict__ xr, const elem_t* __restrict__ gam,
                                       const elem_t* __restrict__ bet, elem_t* __restrict__ yr, int cols, float* sh) {
  elem_t* srow = reinterpret_cast<elem_t*>(arc_smem);
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  const int kmax = (nvec + THREADS - 1) / THREADS;
  const int per = (kmax + STAGES - 1) / STAGES;
  stage_row<THREADS, STAGES, V>(srow, xr, nvec, kmax, per);
  float s1 = 0.f;
#pragma unroll
  for (int st = 0; st < STAGES; ++st) {
    cp_async_wait(STAGES - 1 - st);
    const int k1 = min((st + 1) * per, kmax);
    for (int k = st * per; k < k1; ++k) {
      const int j = tid + k * THREADS;
      if (j < nvec) {
        float v[V];
        load_smem_vec<V>(srow + j * V, v);
#pragma unroll
        for (int i = 0; i < V; ++i) s1 += v[i];
      }
    }
  }
  const float mean = block_sum<THREADS>(s1, sh) / cols;
  float s2 = 0.f;
  for (int k = 0; k < kmax; ++k) {
    const int j = tid + k * THREADS;
    if (j < nvec) {
      float v[V];
      load_smem_vec<V>(srow + j * V, v);
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = v[i] - mean;
        s2 = fmaf(d, d, s2);
      }
    }
  }
  const float rstd = rsqrtf(block_sum<THREADS>(s2, sh) / cols + LN_EPS);
  for (int k = 0; k < kmax; ++k) {
    const int j = tid + k * THREADS;
    if (j < nvec) {
      float v[V], g[V], b[V];
      load_smem_vec<V>(srow + j * V, v);
      load_vec_nc<V>(gam + j * V, g);
      load_vec_nc<V>(bet + j * V, b);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = fmaf((v[i] - mean) * rstd, g[i], b[i]);
      store_vec<V>(yr + j * V, v);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) layernorm_smem(arc_args a) {
  __shared__ float sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* gam = static_cast<const elem_t*>(a.in[1]);
  const elem_t* bet = static_cast<const elem_t*>(a.in[2]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    ln_row<VEC>(xr, gam, bet, yr, cols, sh);
  } else {
    ln_row<1>(xr, gam, bet, yr, cols, sh);
  }
}
