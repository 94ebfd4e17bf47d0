/* RMSNorm, two passes: one block of THREADS threads per row. Pass 1 accumulates the sum of
 * squares over batches of UNROLL vectors of VEC elements (UNROLL loads in flight per thread);
 * after the block reduction, pass 2 re-reads x (from L2 when it is still there) and the
 * weight (read-only cache) and writes y = x * rsqrt(mean(x^2) + eps) * weight. Rows whose
 * length is not a multiple of VEC take the scalar (VEC = 1) path. */
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
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

ARC_KERNEL __launch_bounds__(THREADS) rmsnorm_stream(arc_args a) {
  __shared__ float sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* w = static_cast<const elem_t*>(a.in[1]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    rms_row_stream<THREADS, VEC, UNROLL>(xr, w, yr, cols, sh);
  } else {
    rms_row_stream<THREADS, 1, UNROLL>(xr, w, yr, cols, sh);
  }
}
