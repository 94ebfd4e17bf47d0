/* Bias + GELU, 2-D tiles: block (bx, by) covers THREADS * VEC columns of TILE_ROWS rows. Each
 * thread loads its bias vector (VEC elements) once and reuses it for every row of the tile,
 * walking the rows UNROLL at a time (UNROLL row loads in flight); no per-element modulo.
 * Rows whose length is not a multiple of VEC take a scalar path over the same columns. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "elem_io.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 8
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef PREC_GELU
#define PREC_GELU erf
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(TILE_ROWS >= 1 && TILE_ROWS <= 1024, "TILE_ROWS must be in [1, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL must be in [1, 16]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

#include "gelu.cuh"

/* W vectors of V elements per thread: V = VEC, W = 1 (vector path) or V = 1, W = VEC. */
template <int V, int W>
__device__ __forceinline__ void bias_gelu_tile(const elem_t* __restrict__ x, const elem_t* __restrict__ bias,
                                               elem_t* __restrict__ y, long long rows, int cols) {
  const int c0 = blockIdx.x * (THREADS * V * W);
  float b[W][V];
  bool ok[W];
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const int c = c0 + (w * THREADS + threadIdx.x) * V;
    ok[w] = c < cols;
    if (ok[w]) load_vec_nc<V>(bias + c, b[w]);
  }
  const long long r0 = static_cast<long long>(blockIdx.y) * TILE_ROWS;
  const long long r1 = r0 + TILE_ROWS < rows ? r0 + TILE_ROWS : rows;
  for (long long r = r0; r < r1; r += UNROLL) {
    float v[UNROLL][W][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const int c = c0 + (w * THREADS + threadIdx.x) * V;
        if (r + u < r1 && ok[w]) load_vec<V>(x + (r + u) * cols + c, v[u][w]);
      }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const int c = c0 + (w * THREADS + threadIdx.x) * V;
        if (r + u < r1 && ok[w]) {
#pragma unroll
          for (int i = 0; i < V; ++i) v[u][w][i] = gelu(v[u][w][i] + b[w][i]);
          store_vec<V>(y + (r + u) * cols + c, v[u][w]);
        }
      }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) bias_gelu_rowtile(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const elem_t* x = static_cast<const elem_t*>(a.in[0]);
  const elem_t* bias = static_cast<const elem_t*>(a.in[1]);
  elem_t* y = static_cast<elem_t*>(a.out[0]);
  if (cols % VEC == 0) {
    bias_gelu_tile<VEC, 1>(x, bias, y, rows, cols);
  } else {
    bias_gelu_tile<1, VEC>(x, bias, y, rows, cols);
  }
}
