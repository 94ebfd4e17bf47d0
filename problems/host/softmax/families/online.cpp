// Online softmax: one read pass keeps a running max m and a running sum s of exp(x - m), block
// by block (a block is UNROLL vectors of VEC floats); when a block raises the max, the sums so
// far are rescaled by exp(m_old - m_new), one exp per block. A second pass writes
// exp(x - m) * (1 / s). Two passes over memory instead of three, but still two exps per element
// (std::exp, lane by lane): on a CPU whose rows fit in cache that is the cost to beat.
//
// Knobs (compile-time defines):
//   VEC     lanes per vector (GCC vector extension), 1 = scalar          default 1
//   UNROLL  independent vector accumulators per block                   default 1
#include <cmath>
#include <cstdint>
#include <cstring>

#include "eval/host_abi.h"

#ifndef VEC
#define VEC 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static_assert(VEC >= 1 && (VEC & (VEC - 1)) == 0, "VEC must be a power of two");
static_assert(UNROLL >= 1, "UNROLL must be positive");

// Vectors wider than the target's registers (no -march is given, so SSE2: 4 floats) are legal;
// GCC splits them. Inlining every helper keeps them out of the calling convention, whose
// wide-vector ABI note (-Wpsabi) is noise here.
#pragma GCC diagnostic ignored "-Wpsabi"
#define ARC_INLINE inline __attribute__((always_inline))

namespace {

typedef float vf __attribute__((vector_size(VEC * sizeof(float))));
constexpr int64_t kBlock = int64_t{VEC} * UNROLL;

ARC_INLINE vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);  // unaligned rows: memcpy compiles to an unaligned load
  return v;
}
ARC_INLINE void store(float* p, const vf& v) { std::memcpy(p, &v, sizeof v); }
ARC_INLINE vf splat(float s) { return vf{} + s; }

ARC_INLINE vf exp_lanes(const vf& x) {
  vf v = x;
  for (int l = 0; l < VEC; ++l) v[l] = std::exp(v[l]);
  return v;
}

void softmax_row(const float* x, float* y, int64_t cols) {
  float m = -INFINITY;
  vf acc[UNROLL];
  for (auto& a : acc) a = vf{};
  float tail_sum = 0;
  int64_t c = 0;
  for (; c + kBlock <= cols; c += kBlock) {
    vf v[UNROLL];
    vf bm = load(x + c);
    for (int u = 0; u < UNROLL; ++u) {
      v[u] = load(x + c + int64_t{u} * VEC);
      bm = bm > v[u] ? bm : v[u];
    }
    float block_max = bm[0];
    for (int l = 1; l < VEC; ++l) block_max = bm[l] > block_max ? bm[l] : block_max;
    if (block_max > m) {
      const float scale = std::exp(m - block_max);  // exp(-inf) = 0 on the first block
      for (auto& a : acc) a *= scale;
      m = block_max;
    }
    const vf mv = splat(m);
    for (int u = 0; u < UNROLL; ++u) acc[u] += exp_lanes(v[u] - mv);
  }
  for (; c < cols; ++c) {
    if (x[c] > m) {
      const float scale = std::exp(m - x[c]);
      for (auto& a : acc) a *= scale;
      tail_sum *= scale;
      m = x[c];
    }
    tail_sum += std::exp(x[c] - m);
  }
  float s = tail_sum;
  for (int u = 0; u < UNROLL; ++u) {
    for (int l = 0; l < VEC; ++l) s += acc[u][l];
  }
  const float inv = 1.0f / s;
  const vf mv = splat(m), iv = splat(inv);
  c = 0;
  for (; c + VEC <= cols; c += VEC) store(y + c, exp_lanes(load(x + c) - mv) * iv);
  for (; c < cols; ++c) y[c] = std::exp(x[c] - m) * inv;
}

}  // namespace

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 1 || a->n_outputs != 1 || a->n_axes != 2) return 1;
  const int64_t rows = a->axes[0], cols = a->axes[1];
  for (int64_t r = 0; r < rows; ++r)
    softmax_row(a->inputs[0] + r * cols, a->outputs[0] + r * cols, cols);
  return 0;
}
