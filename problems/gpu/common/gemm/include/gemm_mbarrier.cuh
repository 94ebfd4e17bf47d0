/* Shared-memory addresses and mbarriers (sm_90), shared by the GEMM families whose stages are
 * filled by asynchronous copies (hopper.cu, bulk.cu). A stage's "full" barrier completes when
 * its copies have landed (expect_tx counts their bytes); its "empty" barrier when its readers
 * have arrived. */
#ifndef ARC_GEMM_MBARRIER_CUH_
#define ARC_GEMM_MBARRIER_CUH_

namespace {

// The shared-memory (shared::cta) address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// Initializes the barrier for `count` arrivals per phase (one thread, before any use).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Arrives once and expects `bytes` more of asynchronous copies in the current phase.
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Waits until the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// Arrives once.
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

}  // namespace

#endif /* ARC_GEMM_MBARRIER_CUH_ */
