// Row softmax in double precision: the ground truth candidates are compared against.
#include <cmath>
#include <cstdint>

#include "eval/host_abi.h"

extern "C" int arc_reference(const arc_host_ref_args* a) {
  if (a->n_inputs != 1 || a->n_outputs != 1 || a->n_axes != 2) return 1;
  const int64_t rows = a->axes[0], cols = a->axes[1];
  const double* x = a->inputs[0];
  double* y = a->outputs[0];
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    double* yr = y + r * cols;
    double m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - m) / s;
  }
  return 0;
}
