#pragma once
// A correct host softmax candidate slowed to ~20 ms a call, so that an evaluation lasts long
// enough for a signal or a killed worker to land in the middle of it.
#include "problem/candidate.h"

namespace arc::testing {

inline problem::Candidate slow_softmax() {
  problem::Candidate c;
  c.base.source = R"(#include <cmath>
#include <cstdint>
#include <unistd.h>
#include "eval/host_abi.h"
extern "C" int arc_kernel(const arc_host_args* a) {
  const int64_t rows = a->axes[0], cols = a->axes[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a->inputs[0] + r * cols;
    float* y = a->outputs[0] + r * cols;
    float m = -INFINITY;
    for (int64_t i = 0; i < cols; ++i) m = x[i] > m ? x[i] : m;
    float s = 0;
    for (int64_t i = 0; i < cols; ++i) s += std::exp(x[i] - m);
    for (int64_t i = 0; i < cols; ++i) y[i] = std::exp(x[i] - m) / s;
  }
  usleep(20000);
  return 0;
}
)";
  return c;
}

}  // namespace arc::testing
