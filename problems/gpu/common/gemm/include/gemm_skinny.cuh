/* The global load of w in the skinny-m GEMM families that stream w through registers (splitk.cu,
 * stream.cu), on top of gemm_mma_sync.cuh's fragments.
 *
 * load_stream reads w, which is read once: ld.global.nc with L1::no_allocate and, with
 * PREFETCH_L2 = 64, 128 or 256, an L2 prefetch hint of that many bytes. PREFETCH_L2 is the
 * including family's knob and must be defined before this header. */
#pragma once

#include "arc_cuda.h"
#include "gemm_mma_sync.cuh"  // u32x4, load_cached, lds128, mma_bf16, mma_kstep

#ifndef PREFETCH_L2
#error "define PREFETCH_L2 (0, 64, 128 or 256) before including gemm_skinny.cuh"
#endif

namespace {

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

}  // namespace
