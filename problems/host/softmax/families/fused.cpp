// Vectorized softmax with the structural choices exposed as knobs.
//   FUSE_PASSES=3  max pass; pass storing e = exp(x - max) into y while summing; scale pass.
//                  One exp per element, three sweeps over the row (the row is in cache).
//   FUSE_PASSES=2  online max + sum in one pass (rescaling on a new block max), then a pass
//                  writing exp(x - max) / sum: two sweeps, but two exps per element.
//   EXP=std        std::exp lane by lane (libm, accurate).
//   EXP=fast       2^n * p(r) with a cubic Taylor polynomial on |r| <= ln2 / 2, fully
//                  vectorized: several times faster, but its relative error reaches ~6e-4,
//                  which a tolerance of rtol = 1e-4 does not forgive on rows with large entries.
//   ACC=float|double   type of the running sums (double: fewer rounding errors, half the lanes)
//   PREFETCH=N         software prefetch distance in floats for the first read pass (0 = none)
//   VEC                lanes per vector (GCC vector extension), 1 = scalar
//   UNROLL             vectors per loop step, each with its own max / sum accumulator
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "eval/host_abi.h"

#ifndef VEC
#define VEC 4
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef FUSE_PASSES
#define FUSE_PASSES 3
#endif
#ifndef EXP
#define EXP std
#endif
#ifndef ACC
#define ACC float
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

// Knob values such as `std` are tokens, not numbers: compare their spelling at compile time.
#define ARC_STR2(x) #x
#define ARC_STR(x) ARC_STR2(x)
constexpr std::string_view kExp = ARC_STR(EXP);
static_assert(kExp == "std" || kExp == "fast", "EXP must be std or fast");
static_assert(FUSE_PASSES == 2 || FUSE_PASSES == 3, "FUSE_PASSES must be 2 or 3");
static_assert(VEC >= 1 && (VEC & (VEC - 1)) == 0, "VEC must be a power of two");
static_assert(PREFETCH >= 0, "PREFETCH must be >= 0");
static_assert(UNROLL >= 1, "UNROLL must be positive");

// Vectors wider than the target's registers (no -march is given, so SSE2: 4 floats) are legal;
// GCC splits them. Inlining every helper keeps them out of the calling convention, whose
// wide-vector ABI note (-Wpsabi) is noise here.
#pragma GCC diagnostic ignored "-Wpsabi"
#define ARC_INLINE inline __attribute__((always_inline))

namespace {

typedef ACC acc_t;
typedef float vf __attribute__((vector_size(VEC * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(VEC * sizeof(int32_t))));
typedef uint32_t vu __attribute__((vector_size(VEC * sizeof(uint32_t))));
typedef acc_t va __attribute__((vector_size(VEC * sizeof(acc_t))));
constexpr int64_t kStep = int64_t{VEC} * UNROLL;

ARC_INLINE vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ARC_INLINE void store(float* p, const vf& v) { std::memcpy(p, &v, sizeof v); }
ARC_INLINE vf splat(float s) { return vf{} + s; }

ARC_INLINE vf exp_fast(const vf& x) {
  vf t = x * 1.44269504f;                       // x / ln 2
  t = t < splat(-126.0f) ? splat(-126.0f) : t;  // keep 2^n a normal float
  t = t > splat(126.0f) ? splat(126.0f) : t;
  // n = round(t): truncate t + 0.5, then correct the truncation of negatives towards zero.
  const vf h = t + 0.5f;
  vi n = __builtin_convertvector(h, vi);
  n += (vi)(__builtin_convertvector(n, vf) > h);  // true lanes are -1
  const vf r = (t - __builtin_convertvector(n, vf)) * 0.693147181f;
  const vf p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f)));
  // Multiply by 2^n through the exponent bits (unsigned: shifting a negative int is undefined).
  return (vf)((vu)p + ((vu)n << 23));
}

ARC_INLINE vf exp_vec(const vf& x) {
  if constexpr (kExp == "fast") {
    return exp_fast(x);
  } else {
    vf v = x;
    for (int l = 0; l < VEC; ++l) v[l] = std::exp(v[l]);
    return v;
  }
}

ARC_INLINE float exp_scalar(float x) {
  if constexpr (kExp == "fast") {
    vf v = splat(x);
    return exp_fast(v)[0];
  } else {
    return std::exp(x);
  }
}

ARC_INLINE void prefetch(const float* base, int64_t i, int64_t end) {
  if constexpr (PREFETCH > 0) {
    if (i + PREFETCH < end) __builtin_prefetch(base + i + PREFETCH);
  }
}

ARC_INLINE acc_t hsum(const va& s) {
  acc_t t = 0;
  for (int l = 0; l < VEC; ++l) t += s[l];
  return t;
}

// `base` and `end` index the whole matrix so the prefetch can run into the next row.
void softmax_row(const float* base, int64_t row_start, int64_t cols, int64_t end, float* y) {
  const float* x = base + row_start;
  int64_t c;
#if FUSE_PASSES == 3
  vf mv[UNROLL];
  for (auto& v : mv) v = splat(-INFINITY);
  for (c = 0; c + kStep <= cols; c += kStep) {
    prefetch(base, row_start + c, end);
    for (int u = 0; u < UNROLL; ++u) {
      const vf v = load(x + c + int64_t{u} * VEC);
      mv[u] = mv[u] > v ? mv[u] : v;
    }
  }
  for (; c + VEC <= cols; c += VEC) {
    const vf v = load(x + c);
    mv[0] = mv[0] > v ? mv[0] : v;
  }
  for (int u = 1; u < UNROLL; ++u) mv[0] = mv[0] > mv[u] ? mv[0] : mv[u];
  float m = mv[0][0];
  for (int l = 1; l < VEC; ++l) m = mv[0][l] > m ? mv[0][l] : m;
  for (; c < cols; ++c) m = x[c] > m ? x[c] : m;
  const vf m_splat = splat(m);
  va sv[UNROLL];
  for (auto& v : sv) v = va{};
  for (c = 0; c + kStep <= cols; c += kStep) {
    for (int u = 0; u < UNROLL; ++u) {
      const int64_t at = c + int64_t{u} * VEC;
      const vf e = exp_vec(load(x + at) - m_splat);
      store(y + at, e);
      sv[u] += __builtin_convertvector(e, va);
    }
  }
  for (; c + VEC <= cols; c += VEC) {
    const vf e = exp_vec(load(x + c) - m_splat);
    store(y + c, e);
    sv[0] += __builtin_convertvector(e, va);
  }
  for (int u = 1; u < UNROLL; ++u) sv[0] += sv[u];
  acc_t s = hsum(sv[0]);
  for (; c < cols; ++c) {
    y[c] = exp_scalar(x[c] - m);
    s += y[c];
  }
  const vf iv = splat(static_cast<float>(acc_t{1} / s));
  for (c = 0; c + VEC <= cols; c += VEC) store(y + c, load(y + c) * iv);
  for (; c < cols; ++c) y[c] *= iv[0];
#else
  // Online: one pass over blocks of UNROLL vectors; the sums are rescaled when a block raises
  // the running max.
  float m = -INFINITY;
  va sv[UNROLL];
  for (auto& v : sv) v = va{};
  acc_t s = 0;
  for (c = 0; c + kStep <= cols; c += kStep) {
    prefetch(base, row_start + c, end);
    vf v[UNROLL];
    vf bm = load(x + c);
    for (int u = 0; u < UNROLL; ++u) {
      v[u] = load(x + c + int64_t{u} * VEC);
      bm = bm > v[u] ? bm : v[u];
    }
    float block_max = bm[0];
    for (int l = 1; l < VEC; ++l) block_max = bm[l] > block_max ? bm[l] : block_max;
    if (block_max > m) {
      const acc_t scale = static_cast<acc_t>(exp_scalar(m - block_max));  // 0 when m = -inf
      for (auto& a : sv) a *= scale;
      m = block_max;
    }
    const vf m_splat = splat(m);
    for (int u = 0; u < UNROLL; ++u) {
      sv[u] += __builtin_convertvector(exp_vec(v[u] - m_splat), va);
    }
  }
  for (int u = 0; u < UNROLL; ++u) s += hsum(sv[u]);
  for (; c < cols; ++c) {
    if (x[c] > m) {
      s *= static_cast<acc_t>(exp_scalar(m - x[c]));
      m = x[c];
    }
    s += exp_scalar(x[c] - m);
  }
  const float inv = static_cast<float>(acc_t{1} / s);
  const vf m_splat = splat(m), iv = splat(inv);
  for (c = 0; c + VEC <= cols; c += VEC) store(y + c, exp_vec(load(x + c) - m_splat) * iv);
  for (; c < cols; ++c) y[c] = exp_scalar(x[c] - m) * inv;
#endif
}

}  // namespace

extern "C" int arc_kernel(const arc_host_args* a) {
  if (a->n_inputs != 1 || a->n_outputs != 1 || a->n_axes != 2) return 1;
  const int64_t rows = a->axes[0], cols = a->axes[1];
  for (int64_t r = 0; r < rows; ++r) {
    softmax_row(a->inputs[0], r * cols, cols, rows * cols, a->outputs[0] + r * cols);
  }
  return 0;
}
