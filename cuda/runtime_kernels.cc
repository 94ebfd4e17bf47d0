#include "cuda/runtime_kernels.h"

namespace arc::cuda {

const char* runtime_kernels_source() {
  return R"CUDA(
#include "arc_cuda.h"

__device__ __forceinline__ unsigned long long arc_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
__device__ __forceinline__ double arc_uniform(unsigned long long seed, unsigned long long i) {
  return static_cast<double>(arc_mix(seed + (i + 1) * 0x9e3779b97f4a7c15ULL) >> 11) * 0x1.0p-53;
}

extern "C" __global__ void arc_fill(void* dst, long long n, int dtype, int normal, double low,
                                    double high, unsigned long long seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    double v;
    if (normal) {
      double s = 0;
      for (int k = 0; k < 12; ++k) s += arc_uniform(seed, static_cast<unsigned long long>(i) * 12 + k);
      v = (s - 6.0) * high;
    } else {
      v = low + (high - low) * arc_uniform(seed, static_cast<unsigned long long>(i));
    }
    switch (dtype) {
      case 0: static_cast<float*>(dst)[i] = static_cast<float>(v); break;
      case 1: static_cast<arc_bf16*>(dst)[i] = arc_f32_to_bf16(static_cast<float>(v)); break;
      case 2: static_cast<arc_f16*>(dst)[i] = arc_f32_to_f16(static_cast<float>(v)); break;
      case 4: static_cast<arc_fp8_e4m3*>(dst)[i] = arc_f32_to_e4m3(static_cast<float>(v)); break;
      case 5: static_cast<arc_fp8_e5m2*>(dst)[i] = arc_f32_to_e5m2(static_cast<float>(v)); break;
      default: static_cast<double*>(dst)[i] = v; break;
    }
  }
}

__device__ __forceinline__ double arc_load(const void* p, int dtype, long long i) {
  switch (dtype) {
    case 0: return static_cast<double>(static_cast<const float*>(p)[i]);
    case 1: return static_cast<double>(arc_bf16_to_f32(static_cast<const arc_bf16*>(p)[i]));
    case 2: return static_cast<double>(arc_f16_to_f32(static_cast<const arc_f16*>(p)[i]));
    case 4: return static_cast<double>(arc_e4m3_to_f32(static_cast<const arc_fp8_e4m3*>(p)[i]));
    case 5: return static_cast<double>(arc_e5m2_to_f32(static_cast<const arc_fp8_e5m2*>(p)[i]));
    default: return static_cast<const double*>(p)[i];
  }
}

__device__ __forceinline__ unsigned long long arc_warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ unsigned long long arc_warp_max(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long u = __shfl_down_sync(0xffffffffu, v, o);
    v = u > v ? u : v;
  }
  return v;
}
__device__ __forceinline__ unsigned long long arc_warp_min(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long u = __shfl_down_sync(0xffffffffu, v, o);
    v = u < v ? u : v;
  }
  return v;
}

// blockDim.x must be a multiple of 32.
extern "C" __global__ void arc_compare(const void* out, int dtype, const double* ref, long long n,
                                       double atol, double rtol, unsigned long long* c) {
  unsigned long long matched = 0, nan = 0, inf = 0, out_nz = 0, ref_nz = 0, ref_bad = 0;
  unsigned long long worst = 0, first_bad = ~0ULL, first_nan = ~0ULL;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double r = ref[i];
    const double y = arc_load(out, dtype, i);
    const unsigned long long ui = static_cast<unsigned long long>(i);
    if (!isfinite(r)) {
      ++ref_bad;
      continue;
    }
    if (r != 0) ++ref_nz;
    if (isnan(y) || isinf(y)) {
      if (isnan(y)) ++nan; else ++inf;
      if (ui < first_nan) first_nan = ui;
      if (ui < first_bad) first_bad = ui;
      continue;
    }
    if (y != 0) ++out_nz;
    const double err = fabs(y - r);
    if (err <= atol + rtol * fabs(r)) {
      ++matched;
    } else if (ui < first_bad) {
      first_bad = ui;
    }
    const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(err));
    if (bits > worst) worst = bits;
  }
  matched = arc_warp_sum(matched);
  nan = arc_warp_sum(nan);
  inf = arc_warp_sum(inf);
  out_nz = arc_warp_sum(out_nz);
  ref_nz = arc_warp_sum(ref_nz);
  ref_bad = arc_warp_sum(ref_bad);
  worst = arc_warp_max(worst);
  first_bad = arc_warp_min(first_bad);
  first_nan = arc_warp_min(first_nan);
  if ((threadIdx.x & 31) == 0) {
    if (matched) atomicAdd(&c[0], matched);
    if (nan) atomicAdd(&c[1], nan);
    if (inf) atomicAdd(&c[2], inf);
    if (out_nz) atomicAdd(&c[3], out_nz);
    if (ref_nz) atomicAdd(&c[4], ref_nz);
    if (ref_bad) atomicAdd(&c[5], ref_bad);
    if (worst) atomicMax(&c[6], worst);
    if (first_bad != ~0ULL) atomicMin(&c[7], first_bad);
    if (first_nan != ~0ULL) atomicMin(&c[8], first_nan);
  }
}

extern "C" __global__ void arc_digest(const unsigned* p, long long words, unsigned long long* out) {
  unsigned long long h = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    h ^= arc_mix((static_cast<unsigned long long>(i) << 32) ^ p[i] ^ 0x5bd1e9955bd1e995ULL);
  }
  for (int o = 16; o > 0; o >>= 1) h ^= __shfl_down_sync(0xffffffffu, h, o);
  if ((threadIdx.x & 31) == 0 && h != 0) atomicXor(out, h);
}

extern "C" __global__ void arc_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                    long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = src[i];
  }
}

// Reads n 16-byte words (an L2-sized buffer) and keeps only a data-dependent branch that never
// stores, so the L2 is left full of clean lines of this buffer: nothing a timed kernel evicts
// next costs a write-back.
extern "C" __global__ void arc_flush(const uint4* __restrict__ p, long long n, unsigned key,
                                     unsigned* sink) {
  unsigned acc = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = p[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == key) sink[0] = acc;
}
)CUDA";
}

}  // namespace arc::cuda
