// Softmax, the obvious way: per row a max pass, a pass summing exp(x - max), and a pass that
// computes exp again and divides. Correct, scalar, and slow on purpose: it is the baseline.
#include <cmath>
#include <cstdint>

#include "eval/host_abi.h"

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 1 || a->n_outputs != 1 || a->n_axes != 2) return 1;
  const int64_t rows = a->axes[0], cols = a->axes[1];
  const float* x = a->inputs[0];
  float* y = a->outputs[0];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - m) / s;
  }
  return 0;
}
