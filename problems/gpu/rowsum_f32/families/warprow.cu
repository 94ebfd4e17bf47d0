/* Row sums, one warp per row: blocks of BLOCK_ROWS warps; each lane sums batches of UNROLL
 * vectors of VEC floats (UNROLL independent loads and accumulators in flight) in the
 * accumulator type ACC, then the warp reduces with shuffles (no block barrier). Rows whose
 * length is not a multiple of VEC take the scalar (VEC = 1) path. */
#include "arc_cuda.h"

#ifndef BLOCK_ROWS
#define BLOCK_ROWS 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef ACC
#define ACC float
#endif
static_assert(BLOCK_ROWS >= 1 && BLOCK_ROWS <= 32, "BLOCK_ROWS must be in [1, 32]");
static_assert(UNROLL >= 1 && UNROLL <= 32, "UNROLL must be in [1, 32]");

/* ---- Element I/O: f32 in memory, f32 in registers. ---- */
#define ARC_ELEM_BYTES 4
typedef float elem_t;
__device__ __forceinline__ float elem_to_f32(elem_t v) { return v; }
__device__ __forceinline__ elem_t f32_to_elem(float f) { return f; }
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");

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

/* Sums in the accumulator type (ACC=float or ACC=double). */
typedef ACC acc_t;
__device__ __forceinline__ acc_t warp_sum(acc_t v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int V>
__device__ __forceinline__ acc_t row_partial(const elem_t* __restrict__ xr, int cols, int lane) {
  const int nvec = cols / V;
  acc_t acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0;
  for (int base = lane; base < nvec; base += 32 * UNROLL) {
    float v[UNROLL][V];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int j = base + u * 32;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) acc[u] += static_cast<acc_t>(v[u][i]);
  }
  acc_t s = 0;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) s += acc[u];
  return s;
}

ARC_KERNEL __launch_bounds__(32 * BLOCK_ROWS) rowsum_warprow(arc_args a) {
  const long long rows = a.axes[0];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = static_cast<long long>(blockIdx.x) * BLOCK_ROWS + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warps only: no block barrier follows
  const int lane = threadIdx.x & 31;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  acc_t s = cols % VEC == 0 ? row_partial<VEC>(xr, cols, lane) : row_partial<1>(xr, cols, lane);
  s = warp_sum(s);
  if (lane == 0) static_cast<float*>(a.out[0])[row] = static_cast<float>(s);
}
