// C = A * B, cache-blocked i-k-j. The iteration space is cut into TILE_M x TILE_K x TILE_N
// tiles so the TILE_K x TILE_N slice of B being reused by TILE_M rows stays in L1/L2. Inside a
// tile, UNROLL_K k steps update a VEC-wide strip of C at once (GCC vector extension; VEC = 1 is
// scalar). Edges that do not fill a tile or a vector fall back to shorter loops.
//
// Knobs: TILE_M, TILE_N, TILE_K  tile sizes in elements      (defaults 16, 64, 64)
//        UNROLL_K                k steps per sweep             (default 1)
//        VEC                     lanes per vector              (default 4)
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "eval/host_abi.h"

#ifndef TILE_M
#define TILE_M 16
#endif
#ifndef TILE_N
#define TILE_N 64
#endif
#ifndef TILE_K
#define TILE_K 64
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif
#ifndef VEC
#define VEC 4
#endif
static_assert(TILE_M >= 1 && TILE_N >= 1 && TILE_K >= 1, "tiles must be positive");
static_assert(UNROLL_K >= 1, "UNROLL_K must be positive");
static_assert(VEC >= 1 && (VEC & (VEC - 1)) == 0, "VEC must be a power of two");

// Vectors wider than the target's registers (no -march is given, so SSE2: 4 floats) are legal;
// GCC splits them. Inlining every helper keeps them out of the calling convention, whose
// wide-vector ABI note (-Wpsabi) is noise here.
#pragma GCC diagnostic ignored "-Wpsabi"
#define ARC_INLINE inline __attribute__((always_inline))

namespace {

typedef float vf __attribute__((vector_size(VEC * sizeof(float))));

ARC_INLINE vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ARC_INLINE void store(float* p, const vf& v) { std::memcpy(p, &v, sizeof v); }

ARC_INLINE int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// c[j0, j1) += sum over u of a[u] * b[u][j0, j1)
template <int U>
ARC_INLINE void update(float* c, const float* const* b, const float* a, int64_t j0, int64_t j1) {
  int64_t j = j0;
  vf av[U];
  for (int u = 0; u < U; ++u) av[u] = vf{} + a[u];
  for (; j + VEC <= j1; j += VEC) {
    vf cv = load(c + j);
    for (int u = 0; u < U; ++u) cv += av[u] * load(b[u] + j);
    store(c + j, cv);
  }
  for (; j < j1; ++j) {
    float s = c[j];
    for (int u = 0; u < U; ++u) s += a[u] * b[u][j];
    c[j] = s;
  }
}

}  // namespace

extern "C" int arc_kernel(const arc_host_args* args) {
  if (args->n_inputs != 2 || args->n_outputs != 1 || args->n_axes != 3) return 1;
  const int64_t M = args->axes[0], N = args->axes[1], K = args->axes[2];
  const float* A = args->inputs[0];
  const float* B = args->inputs[1];
  float* C = args->outputs[0];
  std::memset(C, 0, sizeof(float) * static_cast<size_t>(M * N));
  for (int64_t i0 = 0; i0 < M; i0 += TILE_M) {
    const int64_t i1 = min64(i0 + TILE_M, M);
    for (int64_t k0 = 0; k0 < K; k0 += TILE_K) {
      const int64_t k1 = min64(k0 + TILE_K, K);
      for (int64_t j0 = 0; j0 < N; j0 += TILE_N) {
        const int64_t j1 = min64(j0 + TILE_N, N);
        for (int64_t i = i0; i < i1; ++i) {
          float* c = C + i * N;
          const float* arow = A + i * K;
          int64_t k = k0;
          for (; k + UNROLL_K <= k1; k += UNROLL_K) {
            const float* b[UNROLL_K];
            for (int u = 0; u < UNROLL_K; ++u) b[u] = B + (k + u) * N;
            update<UNROLL_K>(c, b, arow + k, j0, j1);
          }
          for (; k < k1; ++k) {
            const float* b[1] = {B + k * N};
            update<1>(c, b, arow + k, j0, j1);
          }
        }
      }
    }
  }
  return 0;
}
