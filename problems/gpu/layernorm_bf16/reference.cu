/* LayerNorm reference in double: one block of 256 threads per row; mean, then variance as the
 * mean of (x - mean)^2, both in double through shared-memory trees, then
 * y = (x - mean) / sqrt(var + 1e-5) * gamma + beta in double. */
#include "arc_cuda.h"

#define REF_THREADS 256

ARC_KERNEL __launch_bounds__(REF_THREADS) layernorm_reference(arc_args a) {
  __shared__ double red[REF_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const arc_bf16* xr = static_cast<const arc_bf16*>(a.in[0]) + row * cols;
  const arc_bf16* gam = static_cast<const arc_bf16*>(a.in[1]);
  const arc_bf16* bet = static_cast<const arc_bf16*>(a.in[2]);
  double* yr = static_cast<double*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  double s = 0.0;
  for (int c = tid; c < cols; c += REF_THREADS) s += arc_bf16_to_f32(xr[c]);
  red[tid] = s;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const double mean = red[0] / cols;
  __syncthreads();

  double q = 0.0;
  for (int c = tid; c < cols; c += REF_THREADS) {
    const double d = static_cast<double>(arc_bf16_to_f32(xr[c])) - mean;
    q += d * d;
  }
  red[tid] = q;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const double rstd = 1.0 / sqrt(red[0] / cols + 1e-5);
  for (int c = tid; c < cols; c += REF_THREADS)
    yr[c] = (static_cast<double>(arc_bf16_to_f32(xr[c])) - mean) * rstd * static_cast<double>(arc_bf16_to_f32(gam[c])) +
            static_cast<double>(arc_bf16_to_f32(bet[c]));
}
