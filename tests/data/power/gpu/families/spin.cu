/* y = 2x behind ITER dependent FMAs per element (base: 1000, extra: 1030). The chain's value
 * decides nothing but a branch no input takes, so it must run, and the kernel's time is
 * proportional to ITER (compute-bound). ALIAS is not used: it only changes the candidate's
 * hash. */
#include "arc_cuda.h"

#ifndef ITER
#define ITER extra
#endif
#define base 1000
#define extra 1030

ARC_KERNEL __launch_bounds__(256) power_spin(arc_args a) {
  const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (i >= a.axes[0]) return;
  const float x = static_cast<const float*>(a.in[0])[i];
  float v = x;
#pragma unroll 1
  for (int k = 0; k < ITER; ++k) v = fmaf(v, 0.999f, 0.001f);
  static_cast<float*>(a.out[0])[i] = v == -12345.0f ? v : 2.0f * x;
}
