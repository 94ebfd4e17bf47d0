/* RMSNorm, single pass with the row staged in shared memory: one block of THREADS threads per
 * row and 2 * cols bytes of dynamic shared memory. Each thread copies its vectors (VEC
 * elements) with cp.async in STAGES commit groups and accumulates the sum of squares of each
 * group as it lands, overlapping arithmetic with the copies in flight; after the block
 * reduction it writes y = x * rsqrt(mean(x^2) + eps) * weight from shared memory. x is read
 * from global memory exactly once. Rows whose length is not a multiple of VEC take the
 * VEC = 1 path. */
#include "arc_cuda.h"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef STAGES
#define STAGES 2
#endif
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS must be a multiple of 32 in [32, 1024]");
static_assert(STAGES >= 1 && STAGES <= 8, "STAGES must be in [1, 8]");
#define RMS_EPS 1e-6f

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

/* Asynchronous global -> shared copies (cp.async, sm_80+). Each thread later reads only the
 * shared-memory words it copied itself, so cp.async.wait_group alone orders copy and use. */
template <int BYTES>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
  } else {
    static_assert(BYTES == 4 || BYTES == 8, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(BYTES)
                 : "memory");
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Wait until at most n of this thread's committed groups are still in flight (n < 8). */
__device__ __forceinline__ void cp_async_wait(int n) {
  switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;\n" ::: "memory"); break;
  }
}
/* Stage V elements of global memory into shared memory: cp.async when the word is 4 to 16
 * bytes, a plain load and store for a single bf16. */
template <int V>
__device__ __forceinline__ void stage_vec(elem_t* smem, const elem_t* gmem) {
  if constexpr (V * ARC_ELEM_BYTES >= 4) {
    cp_async<V * ARC_ELEM_BYTES>(smem, gmem);
  } else {
    *smem = *gmem;
  }
}
/* Read V staged elements back from shared memory. */
template <int V>
__device__ __forceinline__ void load_smem_vec(const elem_t* p, float (&f)[V]) {
  elem_vec<V> t;
  t.w = *reinterpret_cast<const typename elem_vec<V>::word*>(p);
  unpack_vec<V>(t, f);
}

extern __shared__ __align__(16) unsigned char arc_smem[];

template <int V>
__device__ __forceinline__ void rms_row(const elem_t* __restrict__ xr, const elem_t* __restrict__ w,
                                        elem_t* __restrict__ yr, int cols, float* sh) {
  elem_t* srow = reinterpret_cast<elem_t*>(arc_smem);
  const int nvec = cols / V;
  const int tid = threadIdx.x;
  const int kmax = (nvec + THREADS - 1) / THREADS;
  const int per = (kmax + STAGES - 1) / STAGES;
#pragma unroll
  for (int st = 0; st < STAGES; ++st) {
    const int k1 = min((st + 1) * per, kmax);
    for (int k = st * per; k < k1; ++k) {
      const int j = tid + k * THREADS;
      if (j < nvec) stage_vec<V>(srow + j * V, xr + j * V);
    }
    cp_async_commit();
  }
  float ss = 0.f;
#pragma unroll
  for (int st = 0; st < STAGES; ++st) {
    cp_async_wait(STAGES - 1 - st);
    const int k1 = min((st + 1) * per, kmax);
    for (int k = st * per; k < k1; ++k) {
      const int j = tid + k * THREADS;
      if (j < nvec) {
        float v[V];
        load_smem_vec<V>(srow + j * V, v);
#pragma unroll
        for (int i = 0; i < V; ++i) ss = fmaf(v[i], v[i], ss);
      }
    }
  }
  ss = block_sum<THREADS>(ss, sh);
  const float r = rsqrtf(ss / cols + RMS_EPS);
  for (int k = 0; k < kmax; ++k) {
    const int j = tid + k * THREADS;
    if (j < nvec) {
      float v[V], g[V];
      load_smem_vec<V>(srow + j * V, v);
      load_vec_nc<V>(w + j * V, g);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] = v[i] * r * g[i];
      store_vec<V>(yr + j * V, v);
    }
  }
}

ARC_KERNEL __launch_bounds__(THREADS) rmsnorm_smem(arc_args a) {
  __shared__ float sh[32];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  const elem_t* w = static_cast<const elem_t*>(a.in[1]);
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  if (cols % VEC == 0) {
    rms_row<VEC>(xr, w, yr, cols, sh);
  } else {
    rms_row<1>(xr, w, yr, cols, sh);
  }
}
