/* Bias + GELU, flat vectorized: the rows x cols elements as one array; each block covers
 * THREADS * UNROLL * VEC consecutive elements, each thread UNROLL vectors of VEC elements
 * (coalesced, all loads in flight before any arithmetic), the bias vector of each picked by
 * one modulo (32-bit when the tensor allows). Rows whose length is not a multiple of VEC
 * take a scalar path over the same element range. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "elem_io.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef PREC_GELU
#define PREC_GELU erf
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

#include "gelu.cuh"

/* U vectors of V elements per thread; I is the index type. */
template <int V, int U, typename I>
__device__ __forceinline__ void bias_gelu_block(const elem_t* __restrict__ x, const elem_t* __restrict__ bias,
                                                elem_t* __restrict__ y, I n, I cols) {
  const I base = static_cast<I>(blockIdx.x) * (THREADS * U * V);
  float v[U][V], b[U][V];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const I e = base + static_cast<I>((u * THREADS + threadIdx.x) * V);
    if (e < n) {
      load_vec<V>(x + e, v[u]);
      load_vec_nc<V>(bias + e % cols, b[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const I e = base + static_cast<I>((u * THREADS + threadIdx.x) * V);
    if (e < n) {
#pragma unroll
      for (int i = 0; i < V; ++i) v[u][i] = gelu(v[u][i] + b[u][i]);
      store_vec<V>(y + e, v[u]);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) bias_gelu_vec(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long n = rows * cols;
  const elem_t* x = static_cast<const elem_t*>(a.in[0]);
  const elem_t* bias = static_cast<const elem_t*>(a.in[1]);
  elem_t* y = static_cast<elem_t*>(a.out[0]);
  const bool small = n + THREADS * UNROLL * VEC < 0x7fffffffll;  // every index fits in int
  if (cols % VEC == 0) {
    if (small) bias_gelu_block<VEC, UNROLL, int>(x, bias, y, static_cast<int>(n), static_cast<int>(cols));
    else bias_gelu_block<VEC, UNROLL, long long>(x, bias, y, n, cols);
  } else {
    if (small) bias_gelu_block<1, UNROLL * VEC, int>(x, bias, y, static_cast<int>(n), static_cast<int>(cols));
    else bias_gelu_block<1, UNROLL * VEC, long long>(x, bias, y, n, cols);
  }
}
