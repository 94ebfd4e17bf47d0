/* The mma.sync pieces of the skinny-m GEMM families (splitk.cu, stream.cu, bulk.cu), which load
 * 16-byte runs of a row straight into mma.sync.m16n8k16 fragments, without ldmatrix.
 *
 * Fragment trick: the dot product may visit k in any order, so lane l = 4g + t loads the 8
 * elements k0 + 8t .. k0 + 8t + 7 of w row g and of x rows g and g + 8 (one 16-byte run each,
 * q, p and w below); the first mma takes a = {q.x, p.x, q.y, p.y}, b = {w.x, w.y}, the second
 * a = {q.z, p.z, q.w, p.w}, b = {w.z, w.w}: both operands see the same k at every position,
 * because the position of a k depends on t alone. Together they cover the 32 k of one k-step.
 * With e4m3 elements (m16n8k32, a fragment word holding 4 of them) the same words cover 64 k:
 * a 16-byte run is 16 elements, and the k-step is 64 bytes of a row either way.
 *
 * u32x4 is a 16-byte run as four words. load_cached reads one from global memory through L1
 * (x: small and read by every block); lds128 from shared memory. mma_bf16 accumulates one
 * m16n8k16 product (bf16 in, fp32 accumulators d); mma_kstep the two of a k-step;
 * mma_kstep_e4m3 the two m16n8k32 products of an e4m3 k-step (sm_89 and later). */
#ifndef ARC_GEMM_MMA_SYNC_CUH_
#define ARC_GEMM_MMA_SYNC_CUH_

namespace {

struct u32x4 {
  unsigned x, y, z, w;
};

__device__ __forceinline__ u32x4 load_cached(const arc_bf16* p) {
  u32x4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ u32x4 lds128(unsigned addr) {
  u32x4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One 32-wide k-step of a 16 x 8 tile: x rows g (q) and g + 8 (p), w row g (w), as above.
__device__ __forceinline__ void mma_kstep(float (&d)[4], const u32x4& q, const u32x4& p, const u32x4& w) {
  mma_bf16(d, q.x, p.x, q.y, p.y, w.x, w.y);
  mma_bf16(d, q.z, p.z, q.w, p.w, w.z, w.w);
}

// One 64-wide k-step of e4m3 x and w (fp32 accumulators), with the same operands as mma_kstep.
__device__ __forceinline__ void mma_kstep_e4m3(float (&d)[4], const u32x4& q, const u32x4& p, const u32x4& w) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(q.x), "r"(p.x), "r"(q.y), "r"(p.y), "r"(w.x), "r"(w.y));
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(q.z), "r"(p.z), "r"(q.w), "r"(p.w), "r"(w.z), "r"(w.w));
}

}  // namespace

#endif /* ARC_GEMM_MMA_SYNC_CUH_ */
