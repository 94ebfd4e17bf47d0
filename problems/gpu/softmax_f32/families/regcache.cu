/* Row softmax, single pass with the row held in registers: one block of THREADS threads per
 * row; thread t loads vectors t, t + THREADS, ..., UNROLL of them of VEC elements each, all
 * loads in flight at once. Block max, then exp in place and block sum, then the scaled
 * values are stored: x is read from memory exactly once, exp computed once per element.
 * A row longer than THREADS * VEC * UNROLL elements does not fit the cache and falls back to
 * the two-pass online method (pass 2 re-reads x). Rows whose length is not a multiple of VEC
 * take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef EXP
#define EXP accurate
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(UNROLL >= 1 && UNROLL <= 64, "UNROLL must be in [1, 64]");

/* ---- Element I/O: f32 in memory, f32 in registers. ---- */
#define ARC_ELEM_BYTES 4
typedef float elem_t;
__device__ __forceinline__ float elem_to_f32(elem_t v) { return v; }
__device__ __forceinline__ elem_t f32_to_elem(float f) { return f; }
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");
static_assert(VEC * ARC_ELEM_BYTES <= 16, "a vector is at most 16 bytes");

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

/* exp(x - m) for softmax, with m prepared once per row by arc_exp_prep(m).
 * EXP=accurate: expf(x - m) (a few ulp).
 * EXP=fast: ex2.approx(x * log2(e) - m * log2(e)): one FFMA and one MUFU op per element. On the
 * arguments softmax sees here (x - m in [-8, 0]) the relative error stays near 1e-6;
 * results below 2^-126 flush to zero. */
#define ARC_EXP_accurate 1
#define ARC_EXP_fast 2
#define ARC_CAT_(a, b) a##b
#define ARC_CAT(a, b) ARC_CAT_(a, b)
#if ARC_CAT(ARC_EXP_, EXP) == 1
__device__ __forceinline__ float arc_exp(float v) { return expf(v); }
__device__ __forceinline__ float arc_exp_prep(float m) { return m; }
__device__ __forceinline__ float arc_exp_from(float x, float mp) { return expf(x - mp); }
#elif ARC_CAT(ARC_EXP_, EXP) == 2
__device__ __forceinline__ float arc_ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float arc_exp(float v) { return arc_ex2(v * 1.4426950408889634f); }
__device__ __forceinline__ float arc_exp_prep(float m) { return m * 1.4426950408889634f; }
__device__ __forceinline__ float arc_exp_from(float x, float mp) { return arc_ex2(fmaf(x, 1.4426950408889634f, -mp)); }
#else
#error "EXP must be accurate or fast"
#endif

#define ARC_NEG_INF (__int_as_float(0xff800000u))

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
/* Block-wide reductions: every thread of the block must call them and every thread gets the
 * result. `sh` holds at least 32 floats; the leading barrier lets one buffer serve
 * consecutive reductions (the previous reduction's readers are done before it is rewritten). */
template <int NT>
__device__ __forceinline__ float block_sum(float v, float* sh) {
  v = warp_sum(v);
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < NT / 32 ? sh[lane] : 0.f;
    v = warp_sum(v);
  }
  return v;
}
template <int NT>
__device__ __forceinline__ float block_max(float v, float* sh) {
  v = warp_max(v);
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = lane < NT / 32 ? sh[lane] : ARC_NEG_INF;
    v = warp_max(v);
  }
  return v;
}

/* Online softmax statistics: (m, s) stands for sum_i exp(x_i - m) with m the running max.
 * Merging two pairs rescales both sums to the larger max; an empty pair is (-inf, 0). */
__device__ __forceinline__ void ms_merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  const float a = m == ARC_NEG_INF ? 0.f : s * arc_exp(m - nm);
  const float b = om == ARC_NEG_INF ? 0.f : os * arc_exp(om - nm);
  m = nm;
  s = a + b;
}
template <int NT>
__device__ __forceinline__ void block_reduce_ms(float& m, float& s, float* sh_m, float* sh_s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, o);
    const float os = __shfl_xor_sync(0xffffffffu, s, o);
    ms_merge(m, s, om, os);
  }
  if (NT > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
      sh_m[warp] = m;
      sh_s[warp] = s;
    }
    __syncthreads();
    m = lane < NT / 32 ? sh_m[lane] : ARC_NEG_INF;
    s = lane < NT / 32 ? sh_s[lane] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float om = __shfl_xor_sync(0xffffffffu, m, o);
      const float os = __shfl_xor_sync(0xffffffffu, s, o);
      ms_merge(m, s, om, os);
    }
  }
}

/* Fallback for rows longer than the register cache: online (max, sum) pass, then a write pass. */
template <int V>
__device__ __noinline__ void softmax_row_stream(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                                float* sh_m, float* sh_s) {
  constexpr int B = UNROLL < 4 ? UNROLL : 4;  // vectors per batch
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  float m = ARC_NEG_INF, s = 0.f;
  for (int base = tid; base < nvec; base += THREADS * B) {
    float v[B][V];
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const int j = base + u * THREADS;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = ARC_NEG_INF;
      }
    }
    float bm = ARC_NEG_INF;
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bm = fmaxf(bm, v[u][i]);
    const float nm = fmaxf(m, bm);
    const float nmp = arc_exp_prep(nm);
    float bs = 0.f;
#pragma unroll
    for (int u = 0; u < B; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) bs += arc_exp_from(v[u][i], nmp);
    s = s * arc_exp(m - nm) + bs;
    m = nm;
  }
  block_reduce_ms<THREADS>(m, s, sh_m, sh_s);
  const float inv = 1.0f / s;
  const float mp = arc_exp_prep(m);
  for (int j = tid; j < nvec; j += THREADS) {
    float v[V];
    load_vec<V>(xr + j * V, v);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = arc_exp_from(v[i], mp) * inv;
    store_vec<V>(yr + j * V, v);
  }
}

template <int V>
__device__ __forceinline__ void softmax_row(const elem_t* __restrict__ xr, elem_t* __restrict__ yr, int cols,
                                            float* sh_m, float* sh_s) {
  const int nvec = cols / V;
  if (nvec > THREADS * UNROLL) {
    softmax_row_stream<V>(xr, yr, cols, sh_m, sh_s);
    return;
  }
  const int tid = threadIdx.x;
  float v[UNROLL][V];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
    if (j < nvec) {
      load_vec<V>(xr + j * V, v[u]);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) v[u][i] = ARC_NEG_INF;
    }
  }
  float m = ARC_NEG_INF;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
#pragma unroll
    for (int i = 0; i < V; ++i) m = fmaxf(m, v[u][i]);
  m = block_max<THREADS>(m, sh_m);
  const float mp = arc_exp_prep(m);
  float s = 0.f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
#pragma unroll
    for (int i = 0; i < V; ++i) {
      v[u][i] = arc_exp_from(v[u][i], mp);  // padding: exp(-inf) = 0
      s += v[u][i];
    }
  s = block_sum<THREADS>(s, sh_s);
  const float inv = 1.0f / s;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int j = tid + u * THREADS;
    if (j < nvec) {
#pragma unroll
      for (int i = 0; i < V; ++i) v[u][i] *= inv;
      store_vec<V>(yr + j * V, v[u]);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) softmax_regcache(arc_args a) {
  __shared__ float sh_m[32], sh_s[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    softmax_row<VEC>(xr, yr, cols, sh_m, sh_s);
  } else {
    softmax_row<1>(xr, yr, cols, sh_m, sh_s);
  }
}
