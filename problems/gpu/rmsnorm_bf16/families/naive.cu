/* RMSNorm, naive: one block of 256 threads per row, two scalar passes over the row in global
 * memory (sum of squares; then y = x * rsqrt(mean + eps) * weight), shared-memory tree
 * reduction. The second pass re-reads x (mostly from L2). */
#include "arc_cuda.h"

#define NAIVE_THREADS 256
#define RMS_EPS 1e-6f

ARC_KERNEL __launch_bounds__(NAIVE_THREADS) rmsnorm_naive(arc_args a) {
  __shared__ float red[NAIVE_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const arc_bf16* xr = static_cast<const arc_bf16*>(a.in[0]) + row * cols;
  const arc_bf16* w = static_cast<const arc_bf16*>(a.in[1]);
  arc_bf16* yr = static_cast<arc_bf16*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  float ss = 0.f;
  for (int c = tid; c < cols; c += NAIVE_THREADS) {
    const float v = arc_bf16_to_f32(xr[c]);
    ss += v * v;
  }
  red[tid] = ss;
  __syncthreads();
  for (int h = NAIVE_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  const float r = 1.0f / sqrtf(red[0] / cols + RMS_EPS);
  for (int c = tid; c < cols; c += NAIVE_THREADS)
    yr[c] = arc_f32_to_bf16(arc_bf16_to_f32(xr[c]) * r * arc_bf16_to_f32(w[c]));
}
