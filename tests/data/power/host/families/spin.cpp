// y = 2x behind ITER dependent multiply-adds per element (base: 100, extra: 103). The chain's
// value decides nothing but a branch no input takes, so the compiler must run it, and the time
// is proportional to ITER. ALIAS is not used: it only changes the candidate's hash.
#include <cstdint>

#include "eval/host_abi.h"

#ifndef ITER
#define ITER extra
#endif
#define base 100
#define extra 103

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 1 || a->n_outputs != 1 || a->n_axes != 1) return 1;
  const float* x = a->inputs[0];
  float* y = a->outputs[0];
  for (int64_t i = 0; i < a->axes[0]; ++i) {
    float v = x[i];
    for (int k = 0; k < ITER; ++k) v = v * 0.999f + 0.001f;
    y[i] = v == -12345.0f ? v : 2.0f * x[i];
  }
  return 0;
}
