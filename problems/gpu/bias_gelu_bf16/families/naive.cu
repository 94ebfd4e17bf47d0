/* Bias + GELU, naive: one thread per element, y = gelu_erf(x + bias[c]) with bf16 scalar loads
 * and stores and one integer modulo per element for the column. */
#include "arc_cuda.h"

#define NAIVE_THREADS 256

ARC_KERNEL __launch_bounds__(NAIVE_THREADS) bias_gelu_naive(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long i = static_cast<long long>(blockIdx.x) * NAIVE_THREADS + threadIdx.x;
  if (i >= rows * cols) return;
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  const arc_bf16* bias = static_cast<const arc_bf16*>(a.in[1]);
  arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
  const float v = arc_bf16_to_f32(x[i]) + arc_bf16_to_f32(bias[i % cols]);
  y[i] = arc_f32_to_bf16(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
}
