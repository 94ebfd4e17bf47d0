/* Row sums reference in double: one block of 256 threads per row, per-thread double sums and a
 * shared-memory tree in double. */
#include "arc_cuda.h"

#define REF_THREADS 256

ARC_KERNEL __launch_bounds__(REF_THREADS) rowsum_reference(arc_args a) {
  __shared__ double red[REF_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const float* xr = static_cast<const float*>(a.in[0]) + row * cols;
  const int tid = threadIdx.x;
  double s = 0.0;
  for (int c = tid; c < cols; c += REF_THREADS) s += xr[c];
  red[tid] = s;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  if (tid == 0) static_cast<double*>(a.out[0])[row] = red[0];
}
