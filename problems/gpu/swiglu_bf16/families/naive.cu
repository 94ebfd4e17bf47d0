/* SwiGLU, naive: one thread per output element, scalar bf16 loads of the gate and the value,
 * fp32 arithmetic, one 64-bit division and modulo per element to find (row, column). */
#include "arc_cuda.h"

#ifndef BETA
#error "BETA (problem.toml [params]) must be defined"
#endif

ARC_KERNEL __launch_bounds__(256) swiglu_naive(arc_args a) {
  const long long rows = a.axes[0], cols = a.axes[1];
  const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (i >= rows * cols) return;
  const long long r = i / cols, c = i % cols;
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
  const float g = arc_bf16_to_f32(x[r * 2 * cols + c]);
  const float v = arc_bf16_to_f32(x[r * 2 * cols + cols + c]);
  y[i] = arc_f32_to_bf16(g / (1.0f + expf(-static_cast<float>(BETA) * g)) * v);
}
