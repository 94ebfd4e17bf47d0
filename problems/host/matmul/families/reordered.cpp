// C = A * B, i-k-j: for each row i, C[i, :] += A[i, k] * B[k, :] for every k, so B and C are
// read along rows (unit stride). UNROLL k steps are applied per sweep of the C row, which cuts
// the loads and stores of C by UNROLL at the price of UNROLL live B row pointers.
//
// Knobs: UNROLL  k steps per sweep of the C row (default 1)
#include <cstdint>

#include "eval/host_abi.h"

#ifndef UNROLL
#define UNROLL 1
#endif
static_assert(UNROLL >= 1, "UNROLL must be positive");

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 2 || a->n_outputs != 1 || a->n_axes != 3) return 1;
  const int64_t M = a->axes[0], N = a->axes[1], K = a->axes[2];
  const float* A = a->inputs[0];
  const float* B = a->inputs[1];
  float* C = a->outputs[0];
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0;
    int64_t k = 0;
    for (; k + UNROLL <= K; k += UNROLL) {
      float av[UNROLL];
      const float* b[UNROLL];
      for (int u = 0; u < UNROLL; ++u) {
        av[u] = A[i * K + k + u];
        b[u] = B + (k + u) * N;
      }
      for (int64_t j = 0; j < N; ++j) {
        float s = c[j];
        for (int u = 0; u < UNROLL; ++u) s += av[u] * b[u][j];
        c[j] = s;
      }
    }
    for (; k < K; ++k) {
      const float ak = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += ak * b[j];
    }
  }
  return 0;
}
