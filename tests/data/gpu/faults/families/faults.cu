/* MODE: 0 correct; 1 illegal address; 2 trap; 3 hang; 4 wrong (2.001 x); 5 writes its input;
 * 6 stops writing after SKIP_AFTER calls; 7 writes only the first half; 8 writes NaN. */
#include "arc_cuda.h"

#ifndef MODE
#define MODE 0
#endif
#ifndef SKIP_AFTER
#define SKIP_AFTER 1
#endif

__device__ unsigned long long calls;

ARC_KERNEL scale(arc_args a) {
  float* x = static_cast<float*>(a.in[0]);
  float* y = static_cast<float*>(a.out[0]);
  const long long n = a.axes[0];
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
#if MODE == 6
  // Every block counts itself; launches run one after another on the stream, so a block's
  // ticket divided by the grid size is the number of earlier calls.
  __shared__ unsigned long long ticket;
  if (threadIdx.x == 0) ticket = atomicAdd(&calls, 1ull);
  __syncthreads();
  if (ticket / gridDim.x >= SKIP_AFTER) return;
#endif
  if (i >= n) return;
#if MODE == 1
  y[i + (1ll << 40)] = 2.0f * x[i];
#elif MODE == 2
  if (i == 0) __trap();
  y[i] = 2.0f * x[i];
#elif MODE == 3
  for (;;) asm volatile("nanosleep.u32 1000;");  // a side effect every turn: never removed
#elif MODE == 4
  y[i] = 2.001f * x[i];
#elif MODE == 5
  y[i] = 2.0f * x[i];
  x[i] = 0.0f;
#elif MODE == 7
  if (i < n / 2) y[i] = 2.0f * x[i];
#elif MODE == 8
  y[i] = __int_as_float(0x7fc00000);
#else
  y[i] = 2.0f * x[i];
#endif
}
