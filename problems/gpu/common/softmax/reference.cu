/* Row softmax reference in double: one block of 256 threads per row, three passes (max, sum
 * of exp, exp / sum), shared-memory tree reductions in double. The inputs are read in the
 * problem's element type (problem.toml's [params] ARC_ELEM_BYTES). */
#include "arc_cuda.h"
#include "elem_io.cuh"  // elem_t from ARC_ELEM_BYTES ([params]: 2 bf16, 4 f32)

#define REF_THREADS 256

ARC_KERNEL __launch_bounds__(REF_THREADS) softmax_reference(arc_args a) {
  __shared__ double red[REF_THREADS];
  const int cols = static_cast<int>(a.axes[1]);
  const long long row = blockIdx.x;
  const elem_t* xr = static_cast<const elem_t*>(a.in[0]) + row * cols;
  double* yr = static_cast<double*>(a.out[0]) + row * cols;
  const int tid = threadIdx.x;

  double m = -__longlong_as_double(0x7ff0000000000000ll);  // -inf
  for (int c = tid; c < cols; c += REF_THREADS) m = fmax(m, static_cast<double>(elem_to_f32(xr[c])));
  red[tid] = m;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] = fmax(red[tid], red[tid + h]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  double s = 0.0;
  for (int c = tid; c < cols; c += REF_THREADS) s += exp(static_cast<double>(elem_to_f32(xr[c])) - m);
  red[tid] = s;
  __syncthreads();
  for (int h = REF_THREADS / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] += red[tid + h];
    __syncthreads();
  }
  s = red[0];

  for (int c = tid; c < cols; c += REF_THREADS) yr[c] = exp(static_cast<double>(elem_to_f32(xr[c])) - m) / s;
}
