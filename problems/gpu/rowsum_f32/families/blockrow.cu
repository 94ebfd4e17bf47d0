/* Row sums, one block of THREADS threads per row: each thread sums batches of UNROLL vectors of
 * VEC floats (UNROLL independent loads and accumulators in flight), in the accumulator type
 * ACC; then a warp-shuffle and shared-memory block reduction. Rows whose length is not a
 * multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 4  // f32 in memory and in registers
#include "reduce.cuh"
#include "rowsum.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef ACC
#define ACC float
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");

/* Sums in the accumulator type (ACC=float or ACC=double). */
typedef ACC acc_t;

ARC_KERNEL __launch_bounds__(THREADS) rowsum_blockrow(arc_args a) {
  __shared__ acc_t sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  acc_t s = cols % VEC == 0 ? row_partial<acc_t, block_group<THREADS>, UNROLL, VEC>(xr, cols)
                            : row_partial<acc_t, block_group<THREADS>, UNROLL, 1>(xr, cols);
  s = warp_sum(s);
  if (THREADS > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sh[warp] = s;
    __syncthreads();
    if (warp == 0) {
      s = lane < THREADS / 32 ? sh[lane] : static_cast<acc_t>(0);
      s = warp_sum(s);
    }
  }
  if (threadIdx.x == 0) static_cast<float*>(a.out[0])[row] = static_cast<float>(s);
}
