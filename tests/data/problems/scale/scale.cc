// Family "loop" of the test problem "scale": y = 2 x, unrolled UNROLL times.
#include "eval/host_abi.h"

#ifndef UNROLL
#define UNROLL 1
#endif

extern "C" int arc_kernel(const arc_host_args* a) {
  const int64_t n = a->axes[0];
  const float* x = a->inputs[0];
  float* y = a->outputs[0];
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
#pragma GCC unroll 16
    for (int k = 0; k < UNROLL; ++k) y[i + k] = 2.0f * x[i + k];
  }
  for (; i < n; ++i) y[i] = 2.0f * x[i];
  return 0;
}
