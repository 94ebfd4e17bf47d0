/* Thread-block cluster helpers shared by the GEMM families (sm_90): a cluster-wide barrier and
 * reads of another block's shared memory (distributed shared memory). */
#ifndef ARC_GEMM_CLUSTER_CUH_
#define ARC_GEMM_CLUSTER_CUH_

namespace {

// Every thread of every block of the cluster: shared-memory writes before are visible to the
// cluster's reads after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// This block's rank in its cluster (0 outside a cluster).
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Reads a float at a shared-memory address of block `rank` of the cluster.
__device__ __forceinline__ float ld_dsmem(unsigned local_addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local_addr), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

}  // namespace

#endif /* ARC_GEMM_CLUSTER_CUH_ */
