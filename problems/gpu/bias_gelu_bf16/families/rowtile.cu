/* Bias + GELU, 2-D tiles: block (bx, by) covers THREADS * VEC columns of TILE_ROWS rows. Each
 * thread loads its bias vector (VEC elements) once and reuses it for every row of the tile,
 * walking the rows UNROLL at a time (UNROLL row loads in flight); no per-element modulo.
 * Rows whose length is not a multiple of VEC take a scalar path over the same columns. */
#include "arc_cuda.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 8
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef PREC_GELU
#define PREC_GELU erf
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(TILE_ROWS >= 1 && TILE_ROWS <= 1024, "TILE_ROWS must be in [1, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL must be in [1, 16]");

/* ---- Element I/O: bf16 in memory, f32 in registers (round to nearest even on store). ---- */
#define ARC_ELEM_BYTES 2
typedef arc_bf16 elem_t;
__device__ __forceinline__ float elem_to_f32(elem_t v) { return arc_bf16_to_f32(v); }
__device__ __forceinline__ elem_t f32_to_elem(float f) { return arc_f32_to_bf16(f); }
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

/* V consecutive elements move as one aligned word: a single 2- to 16-byte memory instruction.
 * The caller guarantees that the element offset is a multiple of V (cols % V == 0). */
template <int BYTES> struct arc_word;
template <> struct arc_word<2> { typedef unsigned short type; };
template <> struct arc_word<4> { typedef unsigned int type; };
template <> struct arc_word<8> { typedef uint2 type; };
template <> struct arc_word<16> { typedef uint4 type; };

template <int V> struct elem_vec {
  typedef typename arc_word<V * ARC_ELEM_BYTES>::type word;
  union {
    word w;
    elem_t e[V];
    unsigned u[(V * ARC_ELEM_BYTES + 3) / 4];
  };
};

template <int V>
__device__ __forceinline__ void unpack_vec(const elem_vec<V>& t, float (&f)[V]) {
#pragma unroll
  for (int i = 0; i < V; ++i) f[i] = elem_to_f32(t.e[i]);
}
#if ARC_ELEM_BYTES == 2
/* f32 -> bf16 with the hardware conversion (cvt.rn: round to nearest even, the same bits as
 * arc_f32_to_bf16 for every non-NaN value), two elements per instruction. */
template <int V>
__device__ __forceinline__ void pack_vec(elem_vec<V>& t, const float (&f)[V]) {
  if constexpr (V == 1) {
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f[0]));
    t.e[0] = h;
  } else {
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      unsigned r;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(f[2 * i + 1]), "f"(f[2 * i]));
      t.u[i] = r;  // low half: element 2i, high half: element 2i + 1
    }
  }
}
#else
template <int V>
__device__ __forceinline__ void pack_vec(elem_vec<V>& t, const float (&f)[V]) {
#pragma unroll
  for (int i = 0; i < V; ++i) t.e[i] = f32_to_elem(f[i]);
}
#endif

template <int V>
__device__ __forceinline__ void load_vec(const elem_t* p, float (&f)[V]) {
  elem_vec<V> t;
  t.w = *reinterpret_cast<const typename elem_vec<V>::word*>(p);
  unpack_vec<V>(t, f);
}
/* Read-only path (ld.global.nc): for small tensors every block re-reads, such as weights. */
template <int V>
__device__ __forceinline__ void load_vec_nc(const elem_t* p, float (&f)[V]) {
  elem_vec<V> t;
  t.w = __ldg(reinterpret_cast<const typename elem_vec<V>::word*>(p));
  unpack_vec<V>(t, f);
}
template <int V>
__device__ __forceinline__ void store_vec(elem_t* p, const float (&f)[V]) {
  elem_vec<V> t;
  pack_vec<V>(t, f);
  *reinterpret_cast<typename elem_vec<V>::word*>(p) = t.w;
}

/* GELU of v = x + bias, in fp32.
 *   PREC_GELU=erf   0.5 * v * (1 + erff(v / sqrt(2))): the definition.
 *   PREC_GELU=fast  erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), with one MUFU
 *                   reciprocal and one MUFU exp2; 1 + erf(z) is formed without cancellation
 *                   for z < 0, so the relative error of the result stays below ~3e-4.
 *   PREC_GELU=tanh  the tanh approximation 0.5 * v * (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
 *                   with tanh.approx: cheapest, but a different function, about 10% off the
 *                   erf form near v = -3. */
#define ARC_GELU_erf 1
#define ARC_GELU_fast 2
#define ARC_GELU_tanh 3
#define ARC_CAT_(a, b) a##b
#define ARC_CAT(a, b) ARC_CAT_(a, b)
#if ARC_CAT(ARC_GELU_, PREC_GELU) == 1
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
#elif ARC_CAT(ARC_GELU_, PREC_GELU) == 2
/* With z = |v| / sqrt(2) and t = 1 / (1 + 0.3275911 z): erfc(z) = t P(t) exp(-z^2) (A&S 7.1.26).
 * P's coefficients are halved and 1/sqrt(2) folded into the constants, so
 * h = v * t * P(t) * exp(-v^2 / 2) is 0.5 * v * erfc(|v| / sqrt(2)), and
 * gelu(v) = h for v < 0, v - h otherwise. */
__device__ __forceinline__ float gelu(float v) {
  float t, e;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(fmaf(0.23164189f, fabsf(v), 1.0f)));
  float p = fmaf(0.5307027145f, t, -0.7265760135f);
  p = fmaf(p, t, 0.7107068705f);
  p = fmaf(p, t, -0.142248368f);
  p = fmaf(p, t, 0.127414796f);
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(v * (v * -0.7213475204444817f)));
  const float h = v * (p * t * e);
  return v < 0.f ? h : v - h;
}
#elif ARC_CAT(ARC_GELU_, PREC_GELU) == 3
__device__ __forceinline__ float gelu(float v) {
  const float u = 0.7978845608028654f * fmaf(0.044715f * v, v * v, v);
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return 0.5f * v * (1.0f + t);
}
#else
#error "PREC_GELU must be erf, fast or tanh"
#endif

/* W vectors of V elements per thread: V = VEC, W = 1 (vector path) or V = 1, W = VEC. */
template <int V, int W>
__device__ __forceinline__ void bias_gelu_tile(const elem_t* __restrict__ x, const elem_t* __restrict__ bias,
                                               elem_t* __restrict__ y, long long rows, int cols) {
  const int c0 = blockIdx.x * (THREADS * V * W);
  float b[W][V];
  bool ok[W];
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const int c = c0 + (w * THREADS + threadIdx.x) * V;
    ok[w] = c < cols;
    if (ok[w]) load_vec_nc<V>(bias + c, b[w]);
  }
  const long long r0 = static_cast<long long>(blockIdx.y) * TILE_ROWS;
  const long long r1 = r0 + TILE_ROWS < rows ? r0 + TILE_ROWS : rows;
  for (long long r = r0; r < r1; r += UNROLL) {
    float v[UNROLL][W][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const int c = c0 + (w * THREADS + threadIdx.x) * V;
        if (r + u < r1 && ok[w]) load_vec<V>(x + (r + u) * cols + c, v[u][w]);
      }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const int c = c0 + (w * THREADS + threadIdx.x) * V;
        if (r + u < r1 && ok[w]) {
#pragma unroll
          for (int i = 0; i < V; ++i) v[u][w][i] = gelu(v[u][w][i] + b[w][i]);
          store_vec<V>(y + (r + u) * cols + c, v[u][w]);
        }
      }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) bias_gelu_rowtile(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const elem_t* x = static_cast<const elem_t*>(a.in[0]);
  const elem_t* bias = static_cast<const elem_t*>(a.in[1]);
  elem_t* y = static_cast<elem_t*>(a.out[0]);
  if (cols % VEC == 0) {
    bias_gelu_tile<VEC, 1>(x, bias, y, rows, cols);
  } else {
    bias_gelu_tile<1, VEC>(x, bias, y, rows, cols);
  }
}
