/* y = 2x in double: what every ITER and ALIAS computes. */
#include "arc_cuda.h"

ARC_KERNEL __launch_bounds__(256) power_reference(arc_args a) {
  const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (i >= a.axes[0]) return;
  static_cast<double*>(a.out[0])[i] = 2.0 * static_cast<const float*>(a.in[0])[i];
}
