// C = A * B, i-j-k: each output is a dot product of a row of A with a column of B. The column
// walk strides N floats, so every B load touches a new cache line: correct and slow on purpose
// (the baseline).
#include <cstdint>

#include "eval/host_abi.h"

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 2 || a->n_outputs != 1 || a->n_axes != 3) return 1;
  const int64_t M = a->axes[0], N = a->axes[1], K = a->axes[2];
  const float* A = a->inputs[0];
  const float* B = a->inputs[1];
  float* C = a->outputs[0];
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  }
  return 0;
}
