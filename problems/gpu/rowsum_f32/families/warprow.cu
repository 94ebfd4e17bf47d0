/* Row sums, one warp per row: blocks of BLOCK_ROWS warps; each lane sums batches of UNROLL
 * vectors of VEC floats (UNROLL independent loads and accumulators in flight) in the
 * accumulator type ACC, then the warp reduces with shuffles (no block barrier). Rows whose
 * length is not a multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 4  // f32 in memory and in registers
#include "reduce.cuh"
#include "rowsum.cuh"

#ifndef BLOCK_ROWS
#define BLOCK_ROWS 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef ACC
#define ACC float
#endif
static_assert(BLOCK_ROWS >= 1 && BLOCK_ROWS <= 32, "BLOCK_ROWS must be in [1, 32]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");

/* Sums in the accumulator type (ACC=float or ACC=double). */
typedef ACC acc_t;

ARC_KERNEL __launch_bounds__(32 * BLOCK_ROWS) rowsum_warprow(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = static_cast<long long>(blockIdx.x) * BLOCK_ROWS + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warps only: no block barrier follows
  const int lane = threadIdx.x & 31;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  acc_t s = cols % VEC == 0 ? row_partial<acc_t, warp_group, UNROLL, VEC>(xr, cols)
                            : row_partial<acc_t, warp_group, UNROLL, 1>(xr, cols);
  s = warp_sum(s);
  if (lane == 0) static_cast<float*>(a.out[0])[row] = static_cast<float>(s);
}
