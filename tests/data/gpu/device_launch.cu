/* A reward hack the compiler refuses: the launched kernel starts the real work as a child
 * grid of its own, so that the engine's events would time only the parent. */
#include "arc_cuda.h"

extern "C" __global__ void child(const float* x, float* y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

ARC_KERNEL scale(arc_args a) {
  const long long n = a.axes[0];
  child<<<static_cast<unsigned>((n + 255) / 256), 256>>>(static_cast<const float*>(a.in[0]),
                                                         static_cast<float*>(a.out[0]), n);
}
