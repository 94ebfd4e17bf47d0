/* Element I/O for the row kernels: the element type in memory (elem_t), its conversion to and
 * from the f32 registers the arithmetic runs in, and vectors of V consecutive elements moved as
 * one aligned 2- to 16-byte word. ARC_ELEM_BYTES chooses the element:
 *   2: bf16 in memory, f32 in registers (round to nearest even on store);
 *   4: f32 in memory, f32 in registers.
 * A source for one dtype defines ARC_ELEM_BYTES before including this header; a source shared by
 * several problems receives it from each problem.toml's [params]. */
#pragma once
#include "arc_cuda.h"

#if !defined(ARC_ELEM_BYTES)
#error "ARC_ELEM_BYTES must be defined (by problem.toml [params] or the source): 2 (bf16) or 4 (f32)"
#elif ARC_ELEM_BYTES == 2
typedef arc_bf16 elem_t;
__device__ __forceinline__ float elem_to_f32(elem_t v) { return arc_bf16_to_f32(v); }
__device__ __forceinline__ elem_t f32_to_elem(float f) { return arc_f32_to_bf16(f); }
#elif ARC_ELEM_BYTES == 4
typedef float elem_t;
__device__ __forceinline__ float elem_to_f32(elem_t v) { return v; }
__device__ __forceinline__ elem_t f32_to_elem(float f) { return f; }
#else
#error "ARC_ELEM_BYTES must be 2 (bf16) or 4 (f32)"
#endif

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
