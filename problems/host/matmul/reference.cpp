// C = A * B in double precision: the ground truth candidates are compared against.
#include <cstdint>

#include "eval/host_abi.h"

extern "C" int arc_reference(const arc_host_ref_args* a) {
  if (a->n_inputs != 2 || a->n_outputs != 1 || a->n_axes != 3) return 1;
  const int64_t M = a->axes[0], N = a->axes[1], K = a->axes[2];
  const double* A = a->inputs[0];
  const double* B = a->inputs[1];
  double* C = a->outputs[0];
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  }
  return 0;
}
