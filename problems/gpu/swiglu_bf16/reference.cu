/* SwiGLU reference in double: one thread per output element.
 *   x is [rows, 2 * cols]: the gate in columns [0, cols), the value in [cols, 2 * cols).
 *   y[r, c] = g * sigmoid(BETA * g) * v, g = x[r, c], v = x[r, cols + c].
 * Outputs of a reference are double (docs/problem-format-cuda.md). */
#include "arc_cuda.h"

#ifndef BETA
#error "BETA (problem.toml [params]) must be defined"
#endif

ARC_KERNEL __launch_bounds__(256) swiglu_reference(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (i >= rows * cols) return;
  const long long r = i / cols, c = i % cols;
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  double* y = static_cast<double*>(a.out[0]);
  const double g = arc_bf16_to_f32(x[r * 2 * cols + c]);
  const double v = arc_bf16_to_f32(x[r * 2 * cols + cols + c]);
  y[i] = g / (1.0 + exp(-static_cast<double>(BETA) * g)) * v;
}
