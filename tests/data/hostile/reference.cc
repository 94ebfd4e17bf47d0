// Reference of the hostile test problem: y = 2 x, in double (eval/host_abi.h).
#include "eval/host_abi.h"

extern "C" int arc_reference(const arc_host_ref_args* a) {
  const int64_t n = a->axes[0];
  const double* x = a->inputs[0];
  double* y = a->outputs[0];
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0 * x[i];
  return 0;
}
