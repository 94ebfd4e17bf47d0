/* LayerNorm from global memory: one block of THREADS threads per row, batches of UNROLL vectors
 * of VEC elements in flight per thread. FUSE_STATS=1: one statistics pass (shifted sums of x
 * and x^2) then the write pass, two reads of x; FUSE_STATS=0: mean pass, variance pass over
 * (x - mean)^2, write pass, three reads of x (later reads mostly from L2). gamma and beta go
 * through the read-only cache. Rows whose length is not a multiple of VEC take the scalar
 * (VEC = 1) path. */
#include "arc_cuda.h"

#define ARC_ELEM_BYTES 2  // bf16 in memory, f32 in registers
#include "layernorm.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef FUSE_STATS
#define FUSE_STATS 0
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");
static_assert(FUSE_STATS == 0 || FUSE_STATS == 1, "FUSE_STATS must be 0 or 1");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

ARC_KERNEL __launch_bounds__(THREADS) layernorm_stream(arc_args a) {
  __shared__ float sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* gam = static_cast<const elem_t*>(a.in[1]);
  const elem_t* bet = static_cast<const elem_t*>(a.in[2]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    ln_row_stream<THREADS, VEC, UNROLL, FUSE_STATS == 1>(xr, gam, bet, yr, cols, sh);
  } else {
    ln_row_stream<THREADS, 1, UNROLL, FUSE_STATS == 1>(xr, gam, bet, yr, cols, sh);
  }
}
