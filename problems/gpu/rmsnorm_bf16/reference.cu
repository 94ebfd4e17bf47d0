/* RMSNorm reference in double: one block of 256 threads per row; the sum of squares in double
 * through a shared-memory tree, then y = x / sqrt(mean(x^2) + 1e-6) * weight in double. */
#include "arc_cuda.h"

#define REF_THREADS 256

ARC_KERNEL __launch_bounds__(REF_THREADS) rmsnorm_reference(arc_args a) {
  __shared__ double red[REF_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const arc_bf16* xr = static_cast<const arc_bf16*>(a.in[0]) + row * cols;
  const arc_bf16* w = static_cast<const arc_bf16*>(a.in[1]);
  double* yr = static_cast<double*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  double ss = 0.0;
  for (int c = tid; c < cols; c += REF_THREADS) {
    const double v = arc_bf16_to_f32(xr[c]);
    ss += v * v;
  }
  red[tid] = ss;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const double r = 1.0 / sqrt(red[0] / cols + 1e-6);
  for (int c = tid; c < cols; c += REF_THREADS)
    yr[c] = static_cast<double>(arc_bf16_to_f32(xr[c])) * r * static_cast<double>(arc_bf16_to_f32(w[c]));
}
