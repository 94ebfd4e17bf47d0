/* SwiGLU, vectorized: a 2-D grid of THREADS * VEC columns by UNROLL_ROWS rows per block. Each
 * thread moves VEC consecutive gate and value elements per row as single aligned words
 * (elem_io.cuh), for UNROLL_ROWS rows whose loads are all in flight, and writes VEC outputs per
 * row; no division or modulo. Needs cols % VEC == 0 (problem.toml constrains cols % 8 == 0).
 * EXP: accurate (expf and a true division) or fast (__expf and __fdividef). */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2
#include "elem_io.cuh"

#ifndef BETA
#error "BETA (problem.toml [params]) must be defined"
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef UNROLL_ROWS
#define UNROLL_ROWS 2
#endif
#ifndef EXP
#define EXP accurate
#endif
#define accurate 0
#define fast 1
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0,
              "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
static_assert(UNROLL_ROWS >= 1 && UNROLL_ROWS <= 16, "UNROLL_ROWS must be in [1, 16]");

/* g * sigmoid(BETA * g), the gate's activation. */
__device__ __forceinline__ float swish(float g) {
#if EXP == fast
  return __fdividef(g, 1.0f + __expf(-static_cast<float>(BETA) * g));
#else
  return g / (1.0f + expf(-static_cast<float>(BETA) * g));
#endif
}

ARC_KERNEL __launch_bounds__(THREADS) swiglu_vec(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long c = (static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x) * VEC;
  if (c >= cols) return;
  const long long r0 = static_cast<long long>(blockIdx.y) * UNROLL_ROWS;
  const elem_t* x = static_cast<const elem_t*>(a.in[0]);
  elem_t* y = static_cast<elem_t*>(a.out[0]);
  float g[UNROLL_ROWS][VEC], v[UNROLL_ROWS][VEC];
#pragma unroll
  for (int k = 0; k < UNROLL_ROWS; ++k) {
    if (r0 + k < rows) {
      const elem_t* row = x + (r0 + k) * 2 * cols;
      load_vec<VEC>(row + c, g[k]);
      load_vec<VEC>(row + cols + c, v[k]);
    }
  }
#pragma unroll
  for (int k = 0; k < UNROLL_ROWS; ++k) {
    if (r0 + k >= rows) break;
    float o[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) o[i] = swish(g[k][i]) * v[k][i];
    store_vec<VEC>(y + (r0 + k) * cols + c, o);
  }
}
