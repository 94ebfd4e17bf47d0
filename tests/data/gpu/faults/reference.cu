#include "arc_cuda.h"

ARC_KERNEL scale_reference(arc_args a) {
  const float* x = static_cast<const float*>(a.in[0]);
  double* y = static_cast<double*>(a.out[0]);
  const long long n = a.axes[0];
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0 * static_cast<double>(x[i]);
}
