/* Fragment loads and the mma of the skinny-m GEMM families (splitk.cu, stream.cu), which feed
 * 16-byte global loads straight into mma.sync.m16n8k16 fragments, without shared memory or
 * ldmatrix for w.
 *
 * load_stream reads w, which is read once: ld.global.nc with L1::no_allocate and, with
 * PREFETCH_L2 = 64, 128 or 256, an L2 prefetch hint of that many bytes. PREFETCH_L2 is the
 * including family's knob and must be defined before this header. load_cached reads x through
 * L1 (x is small and read by every block). mma_bf16 accumulates one m16n8k16 product (bf16 in,
 * fp32 accumulators d) from the a fragment words a0..a3 and the b fragment words b0, b1. */
#pragma once

#include "arc_cuda.h"

#ifndef PREFETCH_L2
#error "define PREFETCH_L2 (0, 64, 128 or 256) before including gemm_skinny.cuh"
#endif

namespace {

struct u32x4 {
  unsigned x, y, z, w;
};

__device__ __forceinline__ u32x4 load_stream(const arc_bf16* p) {
  u32x4 v;
#if PREFETCH_L2 == 0
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
#elif PREFETCH_L2 == 64
  asm volatile("ld.global.nc.L1::no_allocate.L2::64B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
#elif PREFETCH_L2 == 128
  asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
#else
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
#endif
  return v;
}

__device__ __forceinline__ u32x4 load_cached(const arc_bf16* p) {
  u32x4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

}  // namespace
