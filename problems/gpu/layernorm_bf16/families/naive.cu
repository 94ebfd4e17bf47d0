/* LayerNorm, naive: one block of 256 threads per row and three scalar passes over the row in
 * global memory (mean; variance as the mean of (x - mean)^2; then
 * y = (x - mean) / sqrt(var + eps) * gamma + beta), shared-memory tree reductions. Later
 * passes re-read x, mostly from L2. */
#include "arc_cuda.h"

#define NAIVE_THREADS 256
#define LN_EPS 1e-5f

ARC_KERNEL __launch_bounds__(NAIVE_THREADS) layernorm_naive(arc_args a) {
  __shared__ float red[NAIVE_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const arc_bf16* xr = static_cast<const arc_bf16*>(a.in[0]) + row * cols;
  const arc_bf16* gam = static_cast<const arc_bf16*>(a.in[1]);
  const arc_bf16* bet = static_cast<const arc_bf16*>(a.in[2]);
  arc_bf16* yr = static_cast<arc_bf16*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  float s = 0.f;
  for (int c = tid; c < cols; c += NAIVE_THREADS) s += arc_bf16_to_f32(xr[c]);
  red[tid] = s;
  __syncthreads();
  for (int h = NAIVE_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const float mean = red[0] / cols;
  __syncthreads();  // everyone has read red[0] before it is reused

  float q = 0.f;
  for (int c = tid; c < cols; c += NAIVE_THREADS) {
    const float d = arc_bf16_to_f32(xr[c]) - mean;
    q += d * d;
  }
  red[tid] = q;
  __syncthreads();
  for (int h = NAIVE_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const float rstd = 1.0f / sqrtf(red[0] / cols + LN_EPS);

  for (int c = tid; c < cols; c += NAIVE_THREADS)
    yr[c] = arc_f32_to_bf16((arc_bf16_to_f32(xr[c]) - mean) * rstd * arc_bf16_to_f32(gam[c]) +
                            arc_bf16_to_f32(bet[c]));
}
