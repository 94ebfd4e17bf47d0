/* Row sums over rows of elements (elem_io.cuh): one thread's share of a row. */
#pragma once
#include "elem_io.cuh"

/* The threads that share one row: a whole block of NT threads, or the 32 lanes of one warp. */
template <int NT> struct block_group {
  static constexpr int size = NT;
  static __device__ __forceinline__ int rank() { return threadIdx.x; }
};
struct warp_group {
  static constexpr int size = 32;
  static __device__ __forceinline__ int rank() { return threadIdx.x & 31; }
};

/* Group G shares a row of `cols` elements (cols % V == 0): its thread t sums the vectors t,
 * t + G::size, t + 2 * G::size, ... of V elements, in batches of U vectors (U independent loads
 * and accumulators of type Acc in flight). */
template <typename Acc, typename G, int U, int V>
__device__ __forceinline__ Acc row_partial(const elem_t* __restrict__ xr, int cols) {
  const int nvec = cols / V;
  Acc acc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = 0;
  for (int base = G::rank(); base < nvec; base += G::size * U) {
    float v[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = base + u * G::size;
      if (j < nvec) {
        load_vec<V>(xr + j * V, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) v[u][i] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) acc[u] += static_cast<Acc>(v[u][i]);
  }
  Acc s = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) s += acc[u];
  return s;
}
