/* LayerNorm over rows of elements (elem_io.cuh) with gamma and beta:
 * y = (x - mean) / sqrt(var + LN_EPS) * gamma + beta, var the biased variance. */
#pragma once
#include "elem_io.cuh"
#include "reduce.cuh"

#define LN_EPS 1e-5f  // layernorm_bf16's eps, as in its reference

/* Statistics and output straight from global memory, one block of NT threads (a multiple of 32)
 * per row, B vectors of V elements in flight per thread. FUSED: one statistics pass of sums of
 * d = x - x[0] and d^2 (shifting by the row's first element keeps E[d^2] - E[d]^2 free of
 * cancellation when |mean| >> std), then the write pass: two reads of x. Not FUSED: a mean
 * pass, a variance pass over (x - mean)^2 and the write pass: three reads of x. `sh` holds at
 * least 32 floats (block_sum). */
template <int NT, int V, int B, bool FUSED>
__device__ __forceinline__ void ln_row_stream(const elem_t* __restrict__ xr, const elem_t* __restrict__ gam,
                                              const elem_t* __restrict__ bet, elem_t* __restrict__ yr, int cols,
                                              float* sh) {
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  float mean, var;
  if constexpr (FUSED) {
    const float k = elem_to_f32(xr[0]);
    float s1 = 0.f, s2 = 0.f;
    for (int base = tid; base < nvec; base += NT * B) {
      float v[B][V];
#pragma unroll
      for (int u = 0; u < B; ++u) {
        const int j = base + u * NT;
        if (j < nvec) {
          load_vec<V>(xr + j * V, v[u]);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) v[u][i] = k;  // padding: d = 0
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
    s1 = block_sum<NT>(s1, sh);
    s2 = block_sum<NT>(s2, sh);
    const float md = s1 / cols;
    mean = k + md;
    var = fmaxf(s2 / cols - md * md, 0.f);
  } else {
    float s1 = 0.f;
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
        for (int i = 0; i < V; ++i) s1 += v[u][i];
    }
    mean = block_sum<NT>(s1, sh) / cols;
    float s2 = 0.f;
    for (int base = tid; base < nvec; base += NT * B) {
      float v[B][V];
#pragma unroll
      for (int u = 0; u < B; ++u) {
        const int j = base + u * NT;
        if (j < nvec) {
          load_vec<V>(xr + j * V, v[u]);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) v[u][i] = mean;  // padding: x - mean = 0
        }
      }
#pragma unroll
      for (int u = 0; u < B; ++u)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const float d = v[u][i] - mean;
          s2 = fmaf(d, d, s2);
        }
    }
    var = block_sum<NT>(s2, sh) / cols;
  }
  const float rstd = rsqrtf(var + LN_EPS);
  for (int base = tid; base < nvec; base += NT * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * NT;
      if (j < nvec) load_vec<V>(xr + j * V, v[u]);
    }
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * NT;
      if (j < nvec) {
        float g[V], b[V];
        load_vec_nc<V>(gam + j * V, g);
        load_vec_nc<V>(bet + j * V, b);
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = fmaf((v[u][i] - mean) * rstd, g[i], b[i]);
        store_vec<V>(yr + j * V, v[u]);
      }
    }
  }
}
