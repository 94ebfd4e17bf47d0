/* The host backend's C ABI. A host family source or reference includes this header and defines
 * one entry point with C linkage:
 *   family sources:  int arc_kernel(const arc_host_args* args);      float tensors
 *   reference:       int arc_reference(const arc_host_ref_args* args); double tensors
 * Tensors are dense, row-major, in the order problem.toml declares them; axes[] holds the
 * workload's axis values in the order of problem.toml's `axes`. Return 0 on success; any other
 * value fails the candidate with that code. Knobs arrive as preprocessor defines. */
#ifndef ARC_EVAL_HOST_ABI_H_
#define ARC_EVAL_HOST_ABI_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct arc_host_args {
  const float* const* inputs;
  int32_t n_inputs;
  float* const* outputs;
  int32_t n_outputs;
  const int64_t* axes;
  int32_t n_axes;
} arc_host_args;

typedef struct arc_host_ref_args {
  const double* const* inputs;
  int32_t n_inputs;
  double* const* outputs;
  int32_t n_outputs;
  const int64_t* axes;
  int32_t n_axes;
} arc_host_ref_args;

typedef int (*arc_kernel_fn)(const arc_host_args*);
typedef int (*arc_reference_fn)(const arc_host_ref_args*);

#ifdef __cplusplus
}
#endif
#endif /* ARC_EVAL_HOST_ABI_H_ */
