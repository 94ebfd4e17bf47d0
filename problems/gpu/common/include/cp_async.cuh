/* Asynchronous global -> shared copies (cp.async, sm_80+) and the staging of element vectors
 * (elem_io.cuh) into shared memory. Each thread later reads only the shared-memory words it
 * copied itself, so cp.async.wait_group alone orders copy and use. */
#pragma once
#include "elem_io.cuh"

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
 * bytes, a plain load and store for a single 2-byte element. */
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

/* Stage thread t's vectors j = t + k * NT (k < kmax, j < nvec) of V elements of the row xr into
 * srow, in NG commit groups of `per` consecutive k each. Every thread commits NG groups, empty
 * ones included, so after cp_async_wait(NG - 1 - g) groups 0..g of this thread have landed. */
template <int NT, int NG, int V>
__device__ __forceinline__ void stage_row(elem_t* srow, const elem_t* __restrict__ xr, int nvec, int kmax,
                                          int per) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    const int k1 = min((g + 1) * per, kmax);
    for (int k = g * per; k < k1; ++k) {
      const int j = tid + k * NT;
      if (j < nvec) stage_vec<V>(srow + j * V, xr + j * V);
    }
    cp_async_commit();
  }
}
