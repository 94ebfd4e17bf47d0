// C = A * B with a packed B panel. For each TILE_N-wide column strip and TILE_K-deep slice,
// the B panel is copied into a contiguous, zero-padded TILE_K x TILE_N buffer; then every block
// of TILE_M rows of A runs a register block of TILE_M x TILE_N accumulators over it. All inner
// trip counts are compile-time constants, so the compiler can keep the block in registers and
// vectorize it without edge code; edges are handled by padding (columns) and by clamping row
// pointers whose results are discarded (rows).
//
// Knobs: TILE_M   rows per register block                     (default 2)
//        TILE_N   panel width in columns                      (default 16)
//        TILE_K   panel depth                                  (default 64)
//        ACC      accumulator type, float or double            (default float)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eval/host_abi.h"

#ifndef TILE_M
#define TILE_M 2
#endif
#ifndef TILE_N
#define TILE_N 16
#endif
#ifndef TILE_K
#define TILE_K 64
#endif
#ifndef ACC
#define ACC float
#endif
static_assert(TILE_M >= 1 && TILE_N >= 1 && TILE_K >= 1, "tiles must be positive");

namespace {

typedef ACC acc_t;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

}  // namespace

extern "C" int arc_kernel(const arc_host_args* args) {
  if (args->n_inputs != 2 || args->n_outputs != 1 || args->n_axes != 3) return 1;
  const int64_t M = args->axes[0], N = args->axes[1], K = args->axes[2];
  const float* A = args->inputs[0];
  const float* B = args->inputs[1];
  float* C = args->outputs[0];
  std::vector<float> panel(static_cast<size_t>(TILE_K) * TILE_N);
  float* bp = panel.data();
  for (int64_t j0 = 0; j0 < N; j0 += TILE_N) {
    const int64_t jn = min64(TILE_N, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += TILE_K) {
      const int64_t kn = min64(TILE_K, K - k0);
      for (int64_t k = 0; k < kn; ++k) {
        const float* src = B + (k0 + k) * N + j0;
        float* dst = bp + k * TILE_N;
        for (int64_t j = 0; j < TILE_N; ++j) dst[j] = j < jn ? src[j] : 0.0f;
      }
      for (int64_t i0 = 0; i0 < M; i0 += TILE_M) {
        const int64_t mi = min64(TILE_M, M - i0);
        const float* arow[TILE_M];
        for (int m = 0; m < TILE_M; ++m) arow[m] = A + min64(i0 + m, M - 1) * K + k0;
        acc_t c[TILE_M][TILE_N];
        for (int m = 0; m < TILE_M; ++m) {
          for (int j = 0; j < TILE_N; ++j) {
            c[m][j] = (k0 == 0 || m >= mi || j >= jn)
                          ? acc_t{0}
                          : static_cast<acc_t>(C[(i0 + m) * N + j0 + j]);
          }
        }
        for (int64_t k = 0; k < kn; ++k) {
          const float* b = bp + k * TILE_N;
          for (int m = 0; m < TILE_M; ++m) {
            const acc_t am = arow[m][k];
            for (int j = 0; j < TILE_N; ++j) c[m][j] += am * static_cast<acc_t>(b[j]);
          }
        }
        for (int64_t m = 0; m < mi; ++m) {
          float* dst = C + (i0 + m) * N + j0;
          for (int64_t j = 0; j < jn; ++j) dst[j] = static_cast<float>(c[m][j]);
        }
      }
    }
  }
  return 0;
}
