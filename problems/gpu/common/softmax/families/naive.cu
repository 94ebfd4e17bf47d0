/* Row softmax, naive: one block of 256 threads per row and three passes over the row in
 * global memory (max, sum of exp, exp / sum), one element per thread per step, reductions
 * through a shared-memory tree. exp is computed twice per element and the row is read three
 * times (later passes mostly hit L2). */
#include "arc_cuda.h"
#include "elem_io.cuh"  // elem_t from ARC_ELEM_BYTES ([params]: 2 bf16, 4 f32)

#define NAIVE_THREADS 256
#define ARC_NEG_INF (__int_as_float(0xff800000u))

ARC_KERNEL __launch_bounds__(NAIVE_THREADS) softmax_naive(arc_args a) {
  __shared__ float red[NAIVE_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  elem_t* yr = static_cast<elem_t*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  float m = ARC_NEG_INF;
  for (int c = tid; c < cols; c += NAIVE_THREADS) m = fmaxf(m, elem_to_f32(xr[c]));
  red[tid] = m;
  __syncthreads();
  for (int h = NAIVE_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] = fmaxf(red[tid], red[tid + h]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();  // everyone has read red[0] before it is reused

  float s = 0.f;
  for (int c = tid; c < cols; c += NAIVE_THREADS) s += expf(elem_to_f32(xr[c]) - m);
  red[tid] = s;
  __syncthreads();
  for (int h = NAIVE_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  s = red[0];

  for (int c = tid; c < cols; c += NAIVE_THREADS) yr[c] = f32_to_elem(expf(elem_to_f32(xr[c]) - m) / s);
}
