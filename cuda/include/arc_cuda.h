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
 *   a.in[i]   input i, in problem.toml order, in its declared dtype (f32, bf16, f16, fp8_e4m3,
 *             fp8_e5m2), dense row-major; a shape [] input is one element (a scalar such as a
 *             per-tensor scale); never write to inputs (an output with `alias` is the exception).
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

typedef unsigned short arc_bf16;    /* bfloat16 bits */
typedef unsigned short arc_f16;     /* IEEE half bits */
typedef unsigned char arc_fp8_e4m3; /* OCP E4M3: bias 7, no infinities, 0x7f NaN, max 448 */
typedef unsigned char arc_fp8_e5m2; /* OCP E5M2: bias 15, IEEE infinities, max 57344 */

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

/* Tensor maps (TMA descriptors). A family that declares `[[families.tensor_maps]]`
 * (docs/problem-format-cuda.md, "Tensor maps") has kernels with a second parameter:
 *
 *   ARC_KERNEL my_kernel(arc_args a, const __grid_constant__ arc_tensor_maps t) { ... }
 *
 *   t.map[i]  the i-th declared map, encoded by the engine with cuTensorMapEncodeTiled for this
 *             launch's buffers (outside the timed region), ready for cp.async.bulk.tensor:
 *             pass &t.map[i] (a generic address of the kernel parameter) as the tensor map.
 * Maps beyond the declared ones are zero. A CUtensorMap is 128 bytes, 64-byte aligned. */
#define ARC_MAX_TENSOR_MAPS 8

#if defined(__CUDACC__)
#define ARC_ALIGN64 __align__(64)
#else
#define ARC_ALIGN64 alignas(64)
#endif
typedef struct ARC_ALIGN64 arc_tensor_map {
  unsigned long long opaque[16];
} arc_tensor_map;

typedef struct arc_tensor_maps {
  arc_tensor_map map[ARC_MAX_TENSOR_MAPS];
} arc_tensor_maps;

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
/* fp8 -> f32, exact. */
__device__ __forceinline__ float arc_e4m3_to_f32(arc_fp8_e4m3 v) {
  const unsigned e = (v >> 3) & 15u, m = v & 7u;
  float mag;
  if ((v & 0x7fu) == 0x7fu) {
    mag = __uint_as_float(0x7fc00000u);
  } else if (e == 0) {
    mag = static_cast<float>(m) * 0x1p-9f;
  } else {
    mag = __uint_as_float(((e + 120u) << 23) | (m << 20));
  }
  return (v & 0x80u) ? -mag : mag;
}
__device__ __forceinline__ float arc_e5m2_to_f32(arc_fp8_e5m2 v) {
  const unsigned e = (v >> 2) & 31u, m = v & 3u;
  float mag;
  if (e == 31) {
    mag = __uint_as_float(m != 0 ? 0x7fc00000u : 0x7f800000u);
  } else if (e == 0) {
    mag = static_cast<float>(m) * 0x1p-16f;
  } else {
    mag = __uint_as_float(((e + 112u) << 23) | (m << 21));
  }
  return (v & 0x80u) ? -mag : mag;
}
/* f32 -> fp8 with BIAS and MBITS mantissa bits: round to nearest even, saturated to the largest
 * finite code MAX (infinities too, as cvt.rn.satfinite does); NaN gives 0x7f (with the sign). */
__device__ __forceinline__ unsigned char arc_f32_to_fp8_(float f, int bias, int mbits,
                                                         unsigned max) {
  const unsigned u = __float_as_uint(f);
  const unsigned sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<unsigned char>(sign | 0x7fu);
  /* Zero and f32 subnormals lie far below half the smallest fp8 subnormal. */
  if (a < 0x00800000u) return static_cast<unsigned char>(sign);
  int e = static_cast<int>(a >> 23) - 127 + bias; /* the biased fp8 exponent */
  const unsigned mant = (a & 0x7fffffu) | 0x800000u;
  int shift = 23 - mbits;
  if (e <= 0) { /* an fp8 subnormal: multiples of 2^(1 - bias - mbits) */
    shift += 1 - e;
    e = 0;
  }
  if (shift > 25) return static_cast<unsigned char>(sign);
  unsigned q = mant >> shift;
  const unsigned rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) ++q;
  /* A normal q holds the implicit bit; a carry out of the mantissa steps the exponent. */
  unsigned code = e > 0 ? (static_cast<unsigned>(e - 1) << mbits) + q : q;
  if (code > max) code = max;
  return static_cast<unsigned char>(sign | code);
}
__device__ __forceinline__ arc_fp8_e4m3 arc_f32_to_e4m3(float f) {
  return arc_f32_to_fp8_(f, 7, 3, 0x7eu);
}
__device__ __forceinline__ arc_fp8_e5m2 arc_f32_to_e5m2(float f) {
  return arc_f32_to_fp8_(f, 15, 2, 0x7bu);
}
#endif /* __CUDACC__ */
#endif /* ARC_CUDA_H_ */
