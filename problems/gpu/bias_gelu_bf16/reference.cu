/* Bias + GELU reference in double: one thread per element, v = x + bias[c],
 * y = 0.5 * v * (1 + erf(v / sqrt(2))). */
#include "arc_cuda.h"

ARC_KERNEL __launch_bounds__(256) bias_gelu_reference(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (i >= rows * cols) return;
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  const arc_bf16* bias = static_cast<const arc_bf16*>(a.in[1]);
  double* y = static_cast<double*>(a.out[0]);
  const double v = static_cast<double>(arc_bf16_to_f32(x[i])) + static_cast<double>(arc_bf16_to_f32(bias[i % cols]));
  y[i] = 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
}
