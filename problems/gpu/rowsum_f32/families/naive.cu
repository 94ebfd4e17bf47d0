/* Row sums, naive: one thread per row, a sequential float sum over the row. Neighbouring
 * threads read addresses one row apart, so every warp-wide load touches 32 different cache
 * lines; only L1 reuse of each line over the following iterations keeps DRAM traffic down. */
#include "arc_cuda.h"

#define NAIVE_THREADS 128

ARC_KERNEL __launch_bounds__(NAIVE_THREADS) rowsum_naive(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long r = static_cast<long long>(blockIdx.x) * NAIVE_THREADS + threadIdx.x;
  if (r >= rows) return;
  const float* xr = static_cast<const float*>(a.in[0]) + r * cols;
  float s = 0.f;
  for (long long c = 0; c < cols; ++c) s += xr[c];
  static_cast<float*>(a.out[0])[r] = s;
}
