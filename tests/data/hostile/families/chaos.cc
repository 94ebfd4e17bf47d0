// y = 2 x, or one of the faults a candidate can have (FAULT knob).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "eval/host_abi.h"

#define FAULT_IS(name) (__builtin_strcmp(ARC_STR(FAULT), #name) == 0)
#define ARC_STR2(x) #x
#define ARC_STR(x) ARC_STR2(x)
#ifndef FAULT
#define FAULT none
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

extern "C" int arc_kernel(const arc_host_args* a) {
  const int64_t n = a->axes[0];
  const float* x = a->inputs[0];
  float* y = a->outputs[0];
  if (FAULT_IS(segv)) {
    volatile int* p = nullptr;
    *p = 1;
  }
  if (FAULT_IS(abort)) std::abort();
  if (FAULT_IS(hang)) {
    for (volatile int i = 0;; i = i + 1) {
    }
  }
  if (FAULT_IS(alloc)) {
    std::vector<char*> hoard;
    for (;;) hoard.push_back(new char[1 << 20]());
  }
  if (FAULT_IS(print)) {
    for (int i = 0; i < 20000; ++i) std::printf("candidate output that nobody reads %d\n", i);
  }
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int k = 0; k < UNROLL; ++k) y[i + k] = 2.0f * x[i + k];
  }
  for (; i < n; ++i) y[i] = 2.0f * x[i];
  if (FAULT_IS(wrong)) y[n / 2] += 1.0f;
  if (FAULT_IS(zero)) {
    for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  }
  return 0;
}
