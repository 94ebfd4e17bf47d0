/* The CUDA backend's kernel ABI. Every family kernel and every reference kernel is a
 * `__global__` function with C linkage taking one `arc_args` by value:
 *
 *   ARC_KERNEL my_kernel(arc_args a) { ... }
 *
 * The engine launches the kernels a family's `[[families.launches]]` lists, in that order, on
 * one stream, with the grid, block and dynamic shared memory computed from the workload's
 * axes and the variant's numeric knobs (docs/problem-format.md, "CUDA problems"). Kernels
 * cannot launch work themselves: what is timed is exactly what the family declares.
 *
 *   a.in[i]   input i, in problem.toml order, in its declared dtype (f32, bf16, f16), dense
 *             row-major; never write to inputs (an output with `alias` is the exception).
 *   a.out[i]  output i. Family kernels: the declared dtype. Reference kernels: double.
 *             An output with `alias = "<input>"` is that input's buffer, updated in place.
 *   a.ws      the family's workspace (`workspace` bytes, 256-byte aligned, contents undefined
 *             at entry: clear it yourself if you need zeros); null when the size is 0.
 *   a.axes[j] the workload's axis values, in the order of problem.toml's `axes`.
 *
 * Knobs arrive as preprocessor defines (-DNAME=VALUE), like on the host backend. NVRTC
 * compiles with -std=c++17 for the device's architecture (sm_90a on the H200); the CUDA
 * toolkit's include folder is on the include path when it exists, so cuda_bf16.h works, but
 * the helpers below need no header at all. */
#ifndef ARC_CUDA_H_
#define ARC_CUDA_H_

#define ARC_MAX_TENSORS 8
#define ARC_MAX_AXES 8

typedef unsigned short arc_bf16; /* bfloat16 bits */
typedef unsigned short arc_f16;  /* IEEE half bits */

typedef struct arc_args {
  void* in[ARC_MAX_TENSORS];
  void* out[ARC_MAX_TENSORS];
  void* ws;
  long long axes[ARC_MAX_AXES];
  int n_in;
  int n_out;
  int n_axes;
  int pad_;
} arc_args;

#ifdef __CUDACC__
#define ARC_KERNEL extern "C" __global__ void

__device__ __forceinline__ float arc_bf16_to_f32(arc_bf16 h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}
/* Round to nearest even; NaN stays NaN. */
__device__ __forceinline__ arc_bf16 arc_f32_to_bf16(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<arc_bf16>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<arc_bf16>(u >> 16);
}
/* Two bf16 packed in one 32-bit word (low half first in memory). */
__device__ __forceinline__ float2 arc_bf16x2_to_f32x2(unsigned w) {
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}
__device__ __forceinline__ unsigned arc_f32x2_to_bf16x2(float lo, float hi) {
  return static_cast<unsigned>(arc_f32_to_bf16(lo)) |
         (static_cast<unsigned>(arc_f32_to_bf16(hi)) << 16);
}
__device__ __forceinline__ float arc_f16_to_f32(arc_f16 h) {
  float f;
  asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ arc_f16 arc_f32_to_f16(float f) {
  arc_f16 h;
  asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h) : "f"(f));
  return h;
}
#endif /* __CUDACC__ */
#endif /* ARC_CUDA_H_ */
