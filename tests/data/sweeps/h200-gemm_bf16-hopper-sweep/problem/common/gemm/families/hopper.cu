/* Hopper-native GEMM (sm_90a): y[m, n] = sum_k x[m, k] * w[n, k] (+ y[m, n] in place when
 * ARC_RESIDUAL is 1), bf16 inputs (e4m3 with ARC_GEMM_FP8 = 1, times the per-tensor scales),
 * fp32 accumulation, bf16 output.
 *
 * Operands. The kernel multiplies A [M', K] by B [N', K]^T, both K-major. SWAP_AB = 0: A is x,
 * B is w (M' = m, N' = n). SWAP_AB = 1: A is w, B is x (M' = n, N' = m) and the epilogue writes
 * the transposed tile: a skinny m becomes wgmma's N (as small as 8) instead of wasting most of
 * its 64-row M. The family's tensor maps (problem.toml [[families.tensor_maps]]) are, in order:
 * 0 x as A, 1 w as B, 2 w as A, 3 x as B; the kernel uses 0 and 1, or 2 and 3.
 *
 * Block. CONSUMERS + 1 warpgroups of 128 threads. Warpgroup 0 is the producer: it gives back
 * registers (setmaxnreg.dec) and one thread issues TMA loads (cp.async.bulk.tensor) of each
 * BLOCK_K slice of the A tile (BLOCK_M rows) and the B tile (BLOCK_N rows) into a STAGES-deep
 * ring of shared-memory buffers, each completing on the stage's "full" mbarrier. The consumer
 * warpgroups take registers (setmaxnreg.inc), wait on "full", issue wgmma.mma_async from
 * shared-memory descriptors (each consumer owns BLOCK_M / CONSUMERS rows of the tile, in
 * wgmma's 64-row steps, and all BLOCK_N columns) and release the stage on its "empty" mbarrier
 * once the wgmmas that read it have retired (one wgmma group stays in flight).
 *
 * Shared memory. A stage holds A as [BLOCK_K / atom][BLOCK_M][atom] and B as
 * [BLOCK_K / atom][BLOCK_N][atom], where an atom is SWIZZLE bytes of K (32, 64 or 128): TMA
 * writes each atom column with that hardware swizzle and the wgmma descriptors read it with the
 * same swizzle mode, so neither side has bank conflicts.
 *
 * Tiles. The grid walks output tiles in units of clusters of CLUSTER_M x CLUSTER_N x SPLIT_K
 * blocks. PERSIST = 1: the grid has min(sm_count, tiles) blocks (rounded to whole clusters) and
 * each cluster strides over the tiles, so the producer loads the next tile while the consumers
 * finish the last. The tile order is RASTER (0: down M first, 1: along N first) in bands of
 * GROUP tiles, so that consecutive tiles share panels of A or B in L2.
 *
 * Clusters. With CLUSTER_M or CLUSTER_N > 1 the blocks of a cluster compute neighbouring tiles
 * (CLUSTER_M along M, CLUSTER_N along N). MULTICAST = 1: each block loads only its slice of
 * the A tile (shared along N) and of the B tile (shared along M) and TMA multicasts it to every
 * block of the cluster that needs it; a stage is then free only when the consumers of every
 * block of the cluster have released it.
 *
 * Split-K. SPLIT_K > 1 (skinny M', one tile per cluster): the cluster's SPLIT_K blocks each
 * take a contiguous share of K, and block 0 adds the others' accumulators through distributed
 * shared memory before its epilogue (no workspace, one launch).
 *
 * Epilogue. The consumers convert their accumulators to bf16 and store them straight from
 * registers (pairs of columns at once when n is even), adding the residual that y holds when
 * ARC_RESIDUAL is 1. Rows and columns beyond m and n are zero-filled by TMA on load and never
 * stored; k must be a multiple of 16 bytes of elements (a tensor map's stride rule).
 *
 * Constraints (the family's `constraints` in problem.toml exclude other combinations; the
 * static_asserts below repeat them): BLOCK_M / CONSUMERS a multiple of 64; BLOCK_K a multiple
 * of the atom; accumulators per consumer thread BLOCK_M * BLOCK_N / (128 * CONSUMERS) within
 * the register budget; the stages within 227 KiB of shared memory; at most 8 blocks per
 * cluster; SPLIT_K > 1 only without CLUSTER_M / CLUSTER_N and PERSIST. */
#include "arc_cuda.h"
#include "wgmma_ops.cuh"

#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef BLOCK_K
#define BLOCK_K 64
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef SWIZZLE
#define SWIZZLE 128
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
#ifndef MULTICAST
#define MULTICAST 0
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef PERSIST
#define PERSIST 1
#endif
#ifndef RASTER
#define RASTER 0
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef SWAP_AB
#define SWAP_AB 0
#endif
#ifndef ARC_GEMM_FP8
#define ARC_GEMM_FP8 0
#endif
#if !defined(ARC_RESIDUAL) || (ARC_RESIDUAL != 0 && ARC_RESIDUAL != 1)
#error "ARC_RESIDUAL must be defined as 0 or 1: set it in problem.toml's [params]"
#endif

namespace {

#if ARC_GEMM_FP8
constexpr int kElemBytes = 1;
typedef ArcWgmmaE4m3 WgmmaType;
#else
constexpr int kElemBytes = 2;
typedef ArcWgmmaBf16 WgmmaType;
#endif
constexpr int kKStep = 32 / kElemBytes;  // K per wgmma: 32 bytes
constexpr int kClusterSize = CLUSTER_M * CLUSTER_N * SPLIT_K;
constexpr int kWgRows = BLOCK_M / CONSUMERS;
constexpr int kMReps = kWgRows / 64;
constexpr int kAtom = SWIZZLE / kElemBytes;  // K elements per swizzle atom
constexpr int kAtoms = BLOCK_K / kAtom;
constexpr int kAStage = BLOCK_M * BLOCK_K * kElemBytes;
constexpr int kBStage = BLOCK_N * BLOCK_K * kElemBytes;
constexpr int kStageBytes = kAStage + kBStage;
constexpr bool kMulticast = MULTICAST && (CLUSTER_M * CLUSTER_N > 1);
constexpr int kASlice = kMulticast ? BLOCK_M / CLUSTER_N : BLOCK_M;  // rows of A a block loads
constexpr int kBSlice = kMulticast ? BLOCK_N / CLUSTER_M : BLOCK_N;
constexpr int kAccum = kMReps * BLOCK_N / 2;  // floats per consumer thread
constexpr int kProducerRegs = 40;
// What the consumers may take: the register file (64 K) less the producer's, per thread, in
// steps of 8, at most 240.
constexpr int kConsumerRegsRaw = (65536 - 128 * kProducerRegs) / (128 * CONSUMERS) / 8 * 8;
constexpr int kConsumerRegs = kConsumerRegsRaw > 240 ? 240 : kConsumerRegsRaw;

static_assert(BLOCK_M % (64 * CONSUMERS) == 0, "BLOCK_M / CONSUMERS must be a multiple of 64");
static_assert(BLOCK_N % 8 == 0 && BLOCK_N >= 8 && BLOCK_N <= 256, "BLOCK_N: 8..256, a multiple of 8");
static_assert(SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128, "SWIZZLE: 32, 64 or 128 bytes");
static_assert(BLOCK_K % kAtom == 0 && BLOCK_K % kKStep == 0, "BLOCK_K must be a multiple of the swizzle atom");
static_assert(CONSUMERS >= 1 && CONSUMERS <= 3, "CONSUMERS: 1..3");
static_assert(STAGES >= 2 && STAGES <= 12, "STAGES: 2..12");
static_assert(kClusterSize <= 8, "at most 8 blocks per cluster");
static_assert(SPLIT_K == 1 || (CLUSTER_M == 1 && CLUSTER_N == 1 && PERSIST == 0),
              "SPLIT_K > 1 needs CLUSTER_M = CLUSTER_N = 1 and PERSIST = 0");
static_assert(!kMulticast || (kASlice % 8 == 0 && kBSlice % 8 == 0),
              "a multicast slice must be a multiple of 8 rows");
static_assert(kAccum + 40 <= kConsumerRegs, "accumulators exceed the consumers' register budget");

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers ---------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
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
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrives on the barrier at the same shared-memory offset in block `rank` of the cluster. The
// consumers only read the stage (through wgmma, already retired): no memory to release.
__device__ __forceinline__ void mbar_arrive_remote(unsigned bar, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}
// A consumer warpgroup releases a stage: to its own producer, or with multicast to every
// block of the cluster (whose producers write into this block's stage), one thread per block.
__device__ __forceinline__ void release_stage(unsigned bar, int tid) {
  if (kMulticast) {
    if (tid < CLUSTER_M * CLUSTER_N) mbar_arrive_remote(bar, static_cast<unsigned>(tid));
  } else if (tid == 0) {
    mbar_arrive(bar);
  }
}

// ---- cluster -----------------------------------------------------------------------------
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r = 0;
  if (kClusterSize > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster; shared-memory writes before are visible after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ float ld_dsmem(unsigned local_addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local_addr), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

// ---- TMA ---------------------------------------------------------------------------------
__device__ __forceinline__ void tma_load(unsigned dst, const arc_tensor_map* map, int c0, int c1, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const arc_tensor_map* map, int c0, int c1, unsigned bar,
                                                   unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], "
      "[%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------
// A shared-memory matrix descriptor for a K-major operand whose rows are SWIZZLE bytes,
// swizzled, in groups of 8 rows (the stride byte offset).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr) {
  constexpr unsigned long long kLayout = SWIZZLE == 128 ? 1 : SWIZZLE == 64 ? 2 : 3;
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) | (1ull << 16) |
         (static_cast<unsigned long long>((8 * SWIZZLE) >> 4) << 32) | (kLayout << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of the accumulators across a wgmma fence or wait.
__device__ __forceinline__ void fence_accumulators(float (&acc)[kMReps][BLOCK_N / 2]) {
#pragma unroll
  for (int r = 0; r < kMReps; ++r)
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) asm volatile("" : "+f"(acc[r][i])::"memory");
}

// ---- tiles -------------------------------------------------------------------------------
struct Tile {
  int m, n;  // block tile indices along M' and N'
};

// Cluster tile t of a grid of tm x tn cluster tiles, in bands of GROUP along the minor
// direction, then this block's tile inside the cluster.
__device__ __forceinline__ Tile tile_of(int t, int tm, int tn, int cm, int cn) {
  int a, b;  // along the raster's major and minor directions
  const int major = RASTER == 0 ? tm : tn;
  const int minor = RASTER == 0 ? tn : tm;
  const int band = t / (GROUP * major);
  const int first = band * GROUP;
  const int width = min(GROUP, minor - first);
  const int within = t - band * GROUP * major;
  a = within / width;
  b = first + within % width;
  const int ctm = RASTER == 0 ? a : b;
  const int ctn = RASTER == 0 ? b : a;
  return Tile{ctm * CLUSTER_M + cm, ctn * CLUSTER_N + cn};
}

__device__ __forceinline__ float output_scale(const arc_args& a) {
#if ARC_GEMM_FP8
  return *static_cast<const float*>(a.in[ARC_SCALE_X]) * *static_cast<const float*>(a.in[ARC_SCALE_W]);
#else
  (void)a;
  return 1.0f;
#endif
}

// Stores one accumulator pair: rows/columns of the kernel's A x B^T tile, mapped to y.
__device__ __forceinline__ void store_pair(arc_bf16* y, int m, int n, int r, int c, float v0, float v1) {
#if SWAP_AB
  // A row r is y's column, B rows c and c + 1 are y's rows.
  if (r >= n) return;
  if (c < m) {
    arc_bf16* p = y + static_cast<long long>(c) * n + r;
#if ARC_RESIDUAL
    v0 += arc_bf16_to_f32(*p);
#endif
    *p = arc_f32_to_bf16(v0);
  }
  if (c + 1 < m) {
    arc_bf16* p = y + static_cast<long long>(c + 1) * n + r;
#if ARC_RESIDUAL
    v1 += arc_bf16_to_f32(*p);
#endif
    *p = arc_f32_to_bf16(v1);
  }
#else
  if (r >= m) return;
  arc_bf16* p = y + static_cast<long long>(r) * n + c;
  if ((n & 1) == 0 && c + 1 < n) {
#if ARC_RESIDUAL
    const float2 old = arc_bf16x2_to_f32x2(*reinterpret_cast<const unsigned*>(p));
    v0 += old.x;
    v1 += old.y;
#endif
    *reinterpret_cast<unsigned*>(p) = arc_f32x2_to_bf16x2(v0, v1);
    return;
  }
  if (c < n) {
#if ARC_RESIDUAL
    v0 += arc_bf16_to_f32(p[0]);
#endif
    p[0] = arc_f32_to_bf16(v0);
  }
  if (c + 1 < n) {
#if ARC_RESIDUAL
    v1 += arc_bf16_to_f32(p[1]);
#endif
    p[1] = arc_f32_to_bf16(v1);
  }
#endif
}

}  // namespace

extern "C" __global__ void
#if 1 < CLUSTER_M * CLUSTER_N * SPLIT_K
__cluster_dims__(CLUSTER_M * CLUSTER_N * SPLIT_K, 1, 1)
#endif
__launch_bounds__(128 * (CONSUMERS + 1), 1) gemm_hopper(arc_args a, const __grid_constant__ arc_tensor_maps t) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // A pass for another target than sm_90a (nvcc also embeds compute_90 PTX): wgmma and
  // setmaxnreg do not exist there, so the kernel refuses to run rather than compute nothing.
  __trap();
#else
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The stages start at the first 1024-byte boundary (128-byte swizzle repeats every 1024).
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  __shared__ __align__(8) unsigned long long full_bar[STAGES];
  __shared__ __align__(8) unsigned long long empty_bar[STAGES];

  const long long m_rows = a.axes[0], n_cols = a.axes[1], k_len = a.axes[2];
  const int M = static_cast<int>(SWAP_AB ? n_cols : m_rows);  // the kernel's M' and N'
  const int N = static_cast<int>(SWAP_AB ? m_rows : n_cols);
  const int K = static_cast<int>(k_len);
  const arc_tensor_map* map_a = &t.map[SWAP_AB ? 2 : 0];
  const arc_tensor_map* map_b = &t.map[SWAP_AB ? 3 : 1];

  const unsigned rank = cluster_rank();
  const int cm = SPLIT_K > 1 ? 0 : static_cast<int>(rank % CLUSTER_M);
  const int cn = SPLIT_K > 1 ? 0 : static_cast<int>(rank / CLUSTER_M);
  const int split = SPLIT_K > 1 ? static_cast<int>(rank) : 0;
  const int tm = (M + BLOCK_M * CLUSTER_M - 1) / (BLOCK_M * CLUSTER_M);
  const int tn = (N + BLOCK_N * CLUSTER_N - 1) / (BLOCK_N * CLUSTER_N);
  const int tiles = tm * tn;
  const int cluster_id = static_cast<int>(blockIdx.x) / kClusterSize;
  const int clusters = static_cast<int>(gridDim.x) / kClusterSize;
  const int k_blocks_all = (K + BLOCK_K - 1) / BLOCK_K;
  const int k_per_split = (k_blocks_all + SPLIT_K - 1) / SPLIT_K;
  const int k_first = split * k_per_split;
  const int k_blocks = max(0, min(k_blocks_all, k_first + k_per_split) - k_first);

  const int wg = static_cast<int>(threadIdx.x) / 128;
  const int tid = static_cast<int>(threadIdx.x) % 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), CONSUMERS * (kMulticast ? CLUSTER_M * CLUSTER_N : 1));
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if (kClusterSize > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  if (wg == 0) {
    // Producer.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
    if (tid == 0) {
      unsigned short mask_a = 0, mask_b = 0;
      if (kMulticast) {
        for (int j = 0; j < CLUSTER_N; ++j) mask_a |= static_cast<unsigned short>(1u << (cm + j * CLUSTER_M));
        for (int i = 0; i < CLUSTER_M; ++i) mask_b |= static_cast<unsigned short>(1u << (i + cn * CLUSTER_M));
      }
      int stage = 0;
      unsigned phase = 0;
      for (int c = cluster_id; c < tiles; c += clusters) {
        const Tile tile = tile_of(c, tm, tn, cm, cn);
        const int m0 = tile.m * BLOCK_M, n0 = tile.n * BLOCK_N;
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbar_wait(smem_addr(&empty_bar[stage]), phase ^ 1);
          const unsigned full = smem_addr(&full_bar[stage]);
          mbar_expect_tx(full, kStageBytes);
          const unsigned sa = smem_addr(smem + stage * kStageBytes);
          const unsigned sb = sa + kAStage;
          const int k0 = (k_first + kb) * BLOCK_K;
#pragma unroll
          for (int j = 0; j < kAtoms; ++j) {
            const int kc = k0 + j * kAtom;
            if (kMulticast) {
              tma_load_multicast(sa + (j * BLOCK_M + cn * kASlice) * SWIZZLE, map_a, kc, m0 + cn * kASlice, full, mask_a);
              tma_load_multicast(sb + (j * BLOCK_N + cm * kBSlice) * SWIZZLE, map_b, kc, n0 + cm * kBSlice, full, mask_b);
            } else {
              tma_load(sa + j * BLOCK_M * SWIZZLE, map_a, kc, m0, full);
              tma_load(sb + j * BLOCK_N * SWIZZLE, map_b, kc, n0, full);
            }
          }
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // Consumers.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegs));
    const int consumer = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
    const float scale = output_scale(a);
    float acc[kMReps][BLOCK_N / 2];
    int stage = 0;
    unsigned phase = 0;
    for (int c = cluster_id; c < tiles; c += clusters) {
      const Tile tile = tile_of(c, tm, tn, cm, cn);
#pragma unroll
      for (int r = 0; r < kMReps; ++r)
#pragma unroll
        for (int i = 0; i < BLOCK_N / 2; ++i) acc[r][i] = 0.0f;
      int pending = -1;  // the stage read by the wgmma group still in flight
      for (int kb = 0; kb < k_blocks; ++kb) {
        mbar_wait(smem_addr(&full_bar[stage]), phase);
        const unsigned sa = smem_addr(smem + stage * kStageBytes);
        const unsigned sb = sa + kAStage;
        fence_accumulators(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / kKStep; ++kk) {
          const int byte = kk * 32;  // along K within the stage
          const int atom = byte / SWIZZLE, within = byte % SWIZZLE;
          const unsigned long long db = descriptor(sb + atom * BLOCK_N * SWIZZLE + within);
#pragma unroll
          for (int r = 0; r < kMReps; ++r) {
            const int row = consumer * kWgRows + r * 64;
            const unsigned long long da = descriptor(sa + (atom * BLOCK_M + row) * SWIZZLE + within);
            Wgmma<BLOCK_N, WgmmaType>::mma(acc[r], da, db, 1);
          }
        }
        wgmma_commit();
        wgmma_wait<1>();
        fence_accumulators(acc);
        if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);
        pending = stage;
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);

      if (SPLIT_K > 1) {
        // Every load has landed and been consumed: the stages are free to hold the partial
        // sums, thread-major so that block 0's remote reads are coalesced.
        float* part = reinterpret_cast<float*>(smem) + consumer * kAccum * 128;
        if (split != 0) {
#pragma unroll
          for (int r = 0; r < kMReps; ++r)
#pragma unroll
            for (int i = 0; i < BLOCK_N / 2; ++i) part[(r * (BLOCK_N / 2) + i) * 128 + tid] = acc[r][i];
        }
        cluster_sync();
        if (split == 0) {
          for (int s = 1; s < SPLIT_K; ++s) {
#pragma unroll
            for (int r = 0; r < kMReps; ++r)
#pragma unroll
              for (int i = 0; i < BLOCK_N / 2; ++i)
                acc[r][i] += ld_dsmem(smem_addr(&part[(r * (BLOCK_N / 2) + i) * 128 + tid]), static_cast<unsigned>(s));
          }
        }
        cluster_sync();
        if (split != 0) continue;
      }

      // Epilogue: thread (warp, lane) holds rows 16 * warp + lane / 4 (+ 8) of each 64-row
      // step and columns 8 * i + 2 * (lane % 4) (+ 1).
#pragma unroll
      for (int r = 0; r < kMReps; ++r) {
        const int row = tile.m * BLOCK_M + consumer * kWgRows + r * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int i = 0; i < BLOCK_N / 8; ++i) {
          const int col = tile.n * BLOCK_N + i * 8 + 2 * (lane % 4);
          store_pair(y, static_cast<int>(m_rows), static_cast<int>(n_cols), row, col, acc[r][4 * i] * scale,
                     acc[r][4 * i + 1] * scale);
          store_pair(y, static_cast<int>(m_rows), static_cast<int>(n_cols), row + 8, col, acc[r][4 * i + 2] * scale,
                     acc[r][4 * i + 3] * scale);
        }
      }
    }
  }
  if (SPLIT_K > 1 && wg == 0) {
    // The producer warpgroup takes part in the consumers' two cluster barriers.
    cluster_sync();
    cluster_sync();
  }
  // No block of a cluster leaves while another may still multicast into its shared memory or
  // arrive on its barriers.
  if (kClusterSize > 1) cluster_sync();
#endif
}
