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
 * shared-memory descriptors and release the stage on its "empty" mbarrier once the wgmmas that
 * read it have retired (one wgmma group stays in flight).
 *
 * Schedule. PINGPONG = 0 (cooperative): the consumers share every tile, each owning
 * BLOCK_M / CONSUMERS of its rows (in wgmma's 64-row steps) and all BLOCK_N columns, and all of
 * them run the epilogue together. PINGPONG = 1: each consumer owns whole tiles in turn (tile j
 * of the block's sequence goes to consumer j % CONSUMERS); the producer fills the ring in
 * sequence order, so one consumer's mainloop runs while the other stores its last tile and the
 * tensor cores do not stop for the epilogue.
 *
 * Shared memory. A stage holds A as [BLOCK_K / atom][BLOCK_M][atom] and B as
 * [BLOCK_K / atom][BLOCK_N][atom], where an atom is SWIZZLE bytes of K (32, 64 or 128): TMA
 * writes each atom column with that hardware swizzle and the wgmma descriptors read it with the
 * same swizzle mode, so neither side has bank conflicts.
 *
 * Tiles. The grid walks output tiles in units of clusters of CLUSTER_M x CLUSTER_N x SPLIT_K
 * blocks. PERSIST = 1: the grid has min(OCCUPANCY * sm_count, tiles) blocks (rounded to whole
 * clusters; with PINGPONG, tiles / CONSUMERS) and each cluster strides over the tiles, so the
 * producer loads the next tile while the consumers finish the last. OCCUPANCY (1 or 2) blocks
 * share an SM: each takes that share of the registers and shared memory, so that small tiles
 * (a skinny m) keep more loads in flight per SM. The tile order is RASTER (0: down M first, 1: along N first) in bands of
 * GROUP tiles, so that consecutive tiles share panels of A or B in L2.
 *
 * Clusters. With CLUSTER_M or CLUSTER_N > 1 the blocks of a cluster compute neighbouring tiles
 * (CLUSTER_M along M, CLUSTER_N along N). MULTICAST = 1: each block loads only its slice of
 * the A tile (shared along N) and of the B tile (shared along M) and TMA multicasts it to every
 * block of the cluster that needs it; a stage is then free only when the consumers of every
 * block of the cluster have released it.
 *
 * Split-K. SPLIT_K > 1 (skinny M', one tile per cluster): the cluster's SPLIT_K blocks each
 * take a contiguous share of K and leave their fp32 partial tile in shared memory; each block
 * then adds every block's partials for its share of the tile's output pairs through distributed
 * shared memory and stores them (no workspace, one launch, the reduction spread over the
 * cluster).
 *
 * Epilogue. The consumers scale their accumulators and convert them to bf16, adding the
 * residual that y holds when ARC_RESIDUAL is 1. EPILOGUE = 0: each thread stores from registers
 * (pairs of columns at once when n is even). EPILOGUE = 1: each consumer writes 64 x 64
 * sub-tiles into one of its two shared-memory buffers (128-byte swizzled, conflict-free) and
 * one thread stores each with a TMA tensor store (cp.async.bulk.tensor, tensor map 4: y), so
 * the writes are whole lines and the next sub-tile is written while the last one is stored.
 * Rows and columns beyond m and n are zero-filled by TMA on load and never stored; k must be a
 * multiple of 16 bytes of elements (a tensor map's stride rule) and, for the TMA store, n of 8.
 *
 * Constraints (the family's `constraints` in problem.toml exclude other combinations; the
 * static_asserts below repeat them): a consumer's rows (BLOCK_M / CONSUMERS, or BLOCK_M with
 * PINGPONG) a multiple of 64; BLOCK_K a multiple of the atom; accumulators per consumer thread
 * (a consumer's rows * BLOCK_N / 128) within the register budget (twice that with fp8, which
 * adds every PROMOTE k-blocks' products into fp32 accumulators); the stages and epilogue
 * buffers within 227 KiB of shared memory; at most 8 blocks per cluster; SPLIT_K > 1 only
 * without CLUSTER_M / CLUSTER_N, PERSIST and PINGPONG and with at most two consumers (three
 * spill registers in its epilogue); EPILOGUE = 1 only with BLOCK_N a multiple of 64, without
 * SWAP_AB and SPLIT_K; with OCCUPANCY = 2 the accumulators within the launch's share of the
 * registers and the shared memory within half an SM's. */
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
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef EPILOGUE
#define EPILOGUE 0
#endif
#ifndef PROMOTE
#define PROMOTE 1
#endif
#ifndef OCCUPANCY
#define OCCUPANCY 1
#endif
#ifndef ARC_GEMM_FP8
#define ARC_GEMM_FP8 0
#endif
#if !defined(ARC_RESIDUAL) || (ARC_RESIDUAL != 0 && ARC_RESIDUAL != 1)
#error "ARC_RESIDUAL must be defined as 0 or 1: set it in problem.toml's [params]"
#endif
#include "gemm_cluster.cuh"  // cluster_sync, ld_dsmem
#include "gemm_mbarrier.cuh"  // smem_addr, mbar_*
#include "gemm_scale.cuh"     // output_scale
#include "gemm_store.cuh"    // store_pair

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
constexpr bool kPingPong = PINGPONG != 0;
constexpr int kWgRows = kPingPong ? BLOCK_M : BLOCK_M / CONSUMERS;  // a consumer's rows of a tile
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
// Registers per thread at launch: __launch_bounds__ gives ptxas 64 K / (OCCUPANCY x threads),
// in steps of 8 below 256 (168 for 384 threads, 80 for two blocks of 384).
constexpr int kLaunchRegsRaw = 65536 / (OCCUPANCY * 128 * (CONSUMERS + 1)) / 8 * 8;
constexpr int kLaunchRegs = kLaunchRegsRaw > 248 ? 248 : kLaunchRegsRaw;
// What the consumers may take: the registers the block was launched with less the producer's,
// per thread, in steps of 8, at most 240. setmaxnreg moves registers within the block: the
// consumers' increase must not exceed what the producer's decrease gives back (e.g. 232 for
// two consumers, as 40 x 128 + 232 x 256 = 168 x 384).
constexpr int kConsumerRegsRaw = (kLaunchRegs * 128 * (CONSUMERS + 1) - 128 * kProducerRegs) / (128 * CONSUMERS) / 8 * 8;
constexpr int kConsumerRegs = kConsumerRegsRaw > 240 ? 240 : kConsumerRegsRaw;
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * CONSUMERS <= kLaunchRegs * 128 * (CONSUMERS + 1),
              "setmaxnreg may not take more registers than the block was launched with");
// The TMA-store epilogue: two 64 x 64 bf16 sub-tile buffers per consumer after the stages.
constexpr int kEpiTile = 64;
constexpr int kEpiBytes = kEpiTile * kEpiTile * 2;

static_assert(kWgRows % 64 == 0 && (kPingPong || BLOCK_M % CONSUMERS == 0), "a consumer's rows of a tile must be a multiple of 64");
static_assert(BLOCK_N % 8 == 0 && BLOCK_N >= 8 && BLOCK_N <= 256, "BLOCK_N: 8..256, a multiple of 8");
static_assert(SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128, "SWIZZLE: 32, 64 or 128 bytes");
static_assert(BLOCK_K % kAtom == 0 && BLOCK_K % kKStep == 0, "BLOCK_K must be a multiple of the swizzle atom");
static_assert(CONSUMERS >= 1 && CONSUMERS <= 3, "CONSUMERS: 1..3");
static_assert(STAGES >= 2 && STAGES <= 12, "STAGES: 2..12");
static_assert(kClusterSize <= 8, "at most 8 blocks per cluster");
static_assert(SPLIT_K == 1 || (CLUSTER_M == 1 && CLUSTER_N == 1 && PERSIST == 0 && PINGPONG == 0 && CONSUMERS < 3),
              "SPLIT_K > 1 needs CLUSTER_M = CLUSTER_N = 1, PERSIST = 0, PINGPONG = 0 and CONSUMERS < 3");
static_assert(!kMulticast || (kASlice % 8 == 0 && kBSlice % 8 == 0),
              "a multicast slice must be a multiple of 8 rows");
static_assert((ARC_GEMM_FP8 ? 2 : 1) * kAccum + 40 <= kConsumerRegs,
              "accumulators exceed the consumers' register budget");
// With two blocks per SM ptxas holds the whole kernel to the launch's share of the register
// file (kLaunchRegs), whatever setmaxnreg gives the consumers later.
static_assert(OCCUPANCY == 1 || (ARC_GEMM_FP8 ? 2 : 1) * kAccum + 48 <= kLaunchRegs,
              "accumulators exceed the registers of two blocks per SM");
static_assert(PROMOTE >= 1 && PROMOTE <= 16, "PROMOTE: 1..16 k-blocks");
static_assert(OCCUPANCY == 1 || OCCUPANCY == 2, "OCCUPANCY: 1 or 2 blocks per SM");
static_assert(EPILOGUE == 0 || EPILOGUE == 1, "EPILOGUE: 0 (registers) or 1 (TMA store)");
static_assert(EPILOGUE == 0 || (BLOCK_N % kEpiTile == 0 && SWAP_AB == 0 && SPLIT_K == 1),
              "EPILOGUE = 1 needs BLOCK_N a multiple of 64, SWAP_AB = 0 and SPLIT_K = 1");

// smem_addr and the mbarriers: gemm_mbarrier.cuh.
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
__device__ __forceinline__ unsigned cluster_rank() { return kClusterSize > 1 ? cluster_ctarank() : 0u; }

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
// Stores the box at shared-memory `src` into the tensor at (c0, c1) (innermost first), as one
// bulk async-group of this thread; elements outside the tensor are not written.
__device__ __forceinline__ void tma_store(const arc_tensor_map* map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(c0), "r"(c1), "r"(src)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's bulk stores still read their shared-memory source.
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until every bulk store of this thread is complete.
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Makes this thread's shared-memory writes visible to the async proxy (the TMA store).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// A barrier of `count` threads on hardware barrier `id` (0 is __syncthreads'): the consumers,
// or one consumer warpgroup, without the producer.
__device__ __forceinline__ void named_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// ---- the ring ----------------------------------------------------------------------------
// Advances a ring position (stage, phase) by n k-blocks: the phase flips at every wrap.
__device__ __forceinline__ void advance(int& stage, unsigned& phase, int n) {
  stage += n;
  phase ^= static_cast<unsigned>(stage / STAGES) & 1u;
  stage %= STAGES;
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

// Issues one stage's wgmmas for a consumer: every 32-byte step of K in the stage, for each of
// the consumer's 64-row steps from tile row `rows`, into d (fresh: the first step overwrites d
// instead of adding).
__device__ __forceinline__ void mma_stage(float (&d)[kMReps][BLOCK_N / 2], unsigned sa, unsigned sb, int rows,
                                          bool fresh) {
#pragma unroll
  for (int kk = 0; kk < BLOCK_K / kKStep; ++kk) {
    const int byte = kk * 32;  // along K within the stage
    const int atom = byte / SWIZZLE, within = byte % SWIZZLE;
    const unsigned long long db = descriptor(sb + atom * BLOCK_N * SWIZZLE + within);
#pragma unroll
    for (int r = 0; r < kMReps; ++r) {
      const int row = rows + r * 64;
      const unsigned long long da = descriptor(sa + (atom * BLOCK_M + row) * SWIZZLE + within);
      Wgmma<BLOCK_N, WgmmaType>::mma(d[r], da, db, fresh && kk == 0 ? 0 : 1);
    }
  }
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

// output_scale: gemm_scale.cuh.

// Stores one accumulator pair: rows/columns of the kernel's A x B^T tile, mapped to y (SWAP_AB:
// transposed).
__device__ __forceinline__ void store_tile_pair(arc_bf16* y, int m, int n, int r, int c, float v0, float v1) {
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
  store_pair(y, m, n, r, c, v0, v1);
#endif
}

// ---- consumers ---------------------------------------------------------------------------
typedef float Accum[kMReps][BLOCK_N / 2];

// A consumer's mainloop for one tile: waits for each of the tile's k_blocks stages from ring
// position (stage, phase), issues its wgmmas for the consumer's rows (from tile row `rows`) into
// acc and releases each stage once the wgmmas that read it have retired. Leaves (stage, phase)
// after the tile's k-blocks and acc complete (no wgmma in flight).
__device__ __forceinline__ void mainloop(Accum& acc, unsigned char* smem, unsigned long long* full_bar,
                                         unsigned long long* empty_bar, int& stage, unsigned& phase, int k_blocks,
                                         int rows, int tid) {
#pragma unroll
  for (int r = 0; r < kMReps; ++r)
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) acc[r][i] = 0.0f;
  int pending = -1;  // the stage read by the wgmma group still in flight
  if constexpr (!ARC_GEMM_FP8) {
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(smem_addr(&full_bar[stage]), phase);
      const unsigned sa = smem_addr(smem + stage * kStageBytes);
      fence_accumulators(acc);
      wgmma_fence();
      mma_stage(acc, sa, sa + kAStage, rows, false);
      wgmma_commit();
      wgmma_wait<1>();
      fence_accumulators(acc);
      if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);
      pending = stage;
      advance(stage, phase, 1);
    }
  } else {
    // fp8 wgmma keeps fewer accumulator bits than fp32: PROMOTE k-blocks accumulate into
    // `block` from zero (one wgmma group in flight across them, as for bf16), which is then
    // added to acc in full fp32 once its wgmmas have retired (promotion every PROMOTE * BLOCK_K
    // of K).
    Accum block;
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(smem_addr(&full_bar[stage]), phase);
      const unsigned sa = smem_addr(smem + stage * kStageBytes);
      fence_accumulators(block);
      wgmma_fence();
      mma_stage(block, sa, sa + kAStage, rows, kb % PROMOTE == 0);
      wgmma_commit();
      if (kb % PROMOTE == PROMOTE - 1 || kb == k_blocks - 1) {
        wgmma_wait<0>();
        fence_accumulators(block);
#pragma unroll
        for (int r = 0; r < kMReps; ++r)
#pragma unroll
          for (int i = 0; i < BLOCK_N / 2; ++i) acc[r][i] += block[r][i];
        if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);
        release_stage(smem_addr(&empty_bar[stage]), tid);
        pending = -1;
      } else {
        wgmma_wait<1>();
        fence_accumulators(block);
        if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);
        pending = stage;
      }
      advance(stage, phase, 1);
    }
  }
  wgmma_wait<0>();
  fence_accumulators(acc);
  if (pending >= 0) release_stage(smem_addr(&empty_bar[pending]), tid);
}

// EPILOGUE = 0: stores the consumer's rows of the tile from registers, row0 and col0 its first
// output row and column in the kernel's M' x N'. Thread (warp, lane) holds, in each 64-row step
// r, the column pairs q: row 16 * warp + lane / 4 + 8 * (q % 2), columns 8 * (q / 2) +
// 2 * (lane % 4) (+ 1). With SPLIT_K > 1 this block stores only its share of the pairs (every
// SPLIT_K-th from `split`), each the sum of every block's partial in `part` (the block's own
// from registers).
__device__ __forceinline__ void store_registers(const Accum& acc, arc_bf16* y, int m_rows, int n_cols, int row0,
                                                int col0, float scale, int split, const float* part, int tid) {
  const int warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int r = 0; r < kMReps; ++r) {
#pragma unroll
    for (int q = 0; q < BLOCK_N / 4; ++q) {
      if (SPLIT_K > 1 && (r * (BLOCK_N / 4) + q) % SPLIT_K != split) continue;
      float v0 = acc[r][2 * q], v1 = acc[r][2 * q + 1];
      if (SPLIT_K > 1) {
        for (int s = 0; s < SPLIT_K; ++s) {
          if (s == split) continue;
          v0 += ld_dsmem(smem_addr(&part[(r * (BLOCK_N / 2) + 2 * q) * 128 + tid]), static_cast<unsigned>(s));
          v1 += ld_dsmem(smem_addr(&part[(r * (BLOCK_N / 2) + 2 * q + 1) * 128 + tid]), static_cast<unsigned>(s));
        }
      }
      const int row = row0 + r * 64 + warp * 16 + lane / 4 + 8 * (q % 2);
      const int col = col0 + 8 * (q / 2) + 2 * (lane % 4);
      store_tile_pair(y, m_rows, n_cols, row, col, v0 * scale, v1 * scale);
    }
  }
}

// EPILOGUE = 1: the consumer's rows of the tile in 64 x 64 sub-tiles, each written to one of the
// consumer's two buffers at `epi` (128-byte rows, the 16-byte chunk c of row rr at chunk
// c ^ (rr % 8), TMA's 128-byte swizzle) and stored by thread 0 with a TMA store into y (tensor
// map `map_y`); `sub` counts the consumer's sub-tiles so the buffers alternate across tiles. A
// buffer is rewritten only once the store that read it has finished reading. Needs n even (the
// map's stride rule), so a pair is inside y or outside it whole.
__device__ __forceinline__ void store_tma(const Accum& acc, const arc_tensor_map* map_y, unsigned epi, const arc_bf16* y,
                                          int m_rows, int n_cols, int row0, int col0, float scale, int consumer,
                                          int tid, int& sub) {
  const int warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int r = 0; r < kMReps; ++r) {
#pragma unroll
    for (int cc = 0; cc < BLOCK_N / kEpiTile; ++cc) {
      const unsigned buf = epi + static_cast<unsigned>(sub & 1) * kEpiBytes;
      if (tid == 0) tma_store_wait_read<1>();
      named_sync(2 + consumer, 128);
#pragma unroll
      for (int g = 0; g < kEpiTile / 8; ++g) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = (cc * (kEpiTile / 8) + g) * 4 + 2 * h;
          const int rr = warp * 16 + lane / 4 + 8 * h;
          float v0 = acc[r][i] * scale, v1 = acc[r][i + 1] * scale;
#if ARC_RESIDUAL
          const int row = row0 + r * 64 + rr, col = col0 + cc * kEpiTile + g * 8 + 2 * (lane % 4);
          if (row < m_rows && col < n_cols) {
            const float2 res =
                arc_bf16x2_to_f32x2(*reinterpret_cast<const unsigned*>(y + static_cast<long long>(row) * n_cols + col));
            v0 += res.x;
            v1 += res.y;
          }
#else
          (void)y;
          (void)m_rows;
          (void)n_cols;
#endif
          const unsigned at = buf + static_cast<unsigned>(rr * 128 + ((g ^ (rr & 7)) << 4) + 4 * (lane % 4));
          asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(at), "r"(arc_f32x2_to_bf16x2(v0, v1)) : "memory");
        }
      }
      fence_async_shared();
      named_sync(2 + consumer, 128);
      if (tid == 0) tma_store(map_y, buf, col0 + cc * kEpiTile, row0 + r * 64);
      ++sub;
    }
  }
}

}  // namespace

extern "C" __global__ void
#if 1 < CLUSTER_M * CLUSTER_N * SPLIT_K
__cluster_dims__(CLUSTER_M * CLUSTER_N * SPLIT_K, 1, 1)
#endif
__launch_bounds__(128 * (CONSUMERS + 1), OCCUPANCY) gemm_hopper(arc_args a, const __grid_constant__ arc_tensor_maps t) {
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
  // Ping-pong: consumer c may start a mainloop once order_bar[c] says the consumer before it
  // has finished its own (consumer 0 starts its first one unasked).
  __shared__ __align__(8) unsigned long long order_bar[CONSUMERS];

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
      mbar_init(smem_addr(&empty_bar[s]), (kPingPong ? 1 : CONSUMERS) * (kMulticast ? CLUSTER_M * CLUSTER_N : 1));
    }
    for (int c = 0; c < CONSUMERS; ++c) mbar_init(smem_addr(&order_bar[c]), 1);
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
    arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
    const float scale = output_scale(a);
    const int rows = kPingPong ? 0 : consumer * kWgRows;  // the consumer's first row of a tile
    const unsigned epi = smem_addr(smem + STAGES * kStageBytes + consumer * 2 * kEpiBytes);
    int sub = 0;  // TMA-store sub-tiles so far
    Accum acc;
    int stage = 0;
    unsigned phase = 0;
    // Cooperative: every tile of the cluster's sequence. Ping-pong: every CONSUMERS-th from the
    // consumer's, skipping the ring positions of the others' tiles.
    // The mainloops alternate strictly: besides keeping one consumer's wgmmas on the tensor
    // cores at a time, this keeps a consumer's waits on the ring's barriers at most one phase
    // ahead of them (a parity wait cannot tell further phases apart).
    const int turn = kPingPong ? CONSUMERS : 1;
    if (kPingPong) advance(stage, phase, consumer * k_blocks);
    int round = 0;  // the consumer's tiles so far
    for (int c = cluster_id + (kPingPong ? consumer : 0) * clusters; c < tiles; c += turn * clusters, ++round) {
      const Tile tile = tile_of(c, tm, tn, cm, cn);
      if (kPingPong && (consumer > 0 || round > 0)) {
        mbar_wait(smem_addr(&order_bar[consumer]), static_cast<unsigned>(consumer > 0 ? round : round - 1) & 1u);
      }
      mainloop(acc, smem, full_bar, empty_bar, stage, phase, k_blocks, rows, tid);
      if (kPingPong) {
        if (tid == 0) mbar_arrive(smem_addr(&order_bar[(consumer + 1) % CONSUMERS]));
        advance(stage, phase, (CONSUMERS - 1) * k_blocks);
      }

      // Split-K: every load has landed and been consumed by every consumer (they wait for each
      // other: a partial must not overwrite a stage another consumer's wgmmas still read), so
      // the stages hold the partial sums, thread-major so that remote reads are coalesced.
      float* part = reinterpret_cast<float*>(smem) + consumer * kAccum * 128;
      if (SPLIT_K > 1) {
        if (CONSUMERS > 1) named_sync(1, 128 * CONSUMERS);
#pragma unroll
        for (int r = 0; r < kMReps; ++r)
#pragma unroll
          for (int i = 0; i < BLOCK_N / 2; ++i) part[(r * (BLOCK_N / 2) + i) * 128 + tid] = acc[r][i];
        cluster_sync();
      }
      const int row0 = tile.m * BLOCK_M + rows, col0 = tile.n * BLOCK_N;
      if (EPILOGUE == 1) {
        store_tma(acc, &t.map[4], epi, y, static_cast<int>(m_rows), static_cast<int>(n_cols), row0, col0, scale,
                  consumer, tid, sub);
      } else {
        store_registers(acc, y, static_cast<int>(m_rows), static_cast<int>(n_cols), row0, col0, scale, split, part,
                        tid);
      }
    }
    // The shared-memory buffers stay until every TMA store has read them.
    if (EPILOGUE == 1 && tid == 0) tma_store_wait_all();
  }
  if (SPLIT_K > 1 && wg == 0) {
    // The producer warpgroup takes part in the consumers' cluster barrier (partials written).
    cluster_sync();
  }
  // No block of a cluster leaves while another may still multicast into its shared memory,
  // arrive on its barriers or read its split-K partials.
  if (kClusterSize > 1) cluster_sync();
#endif
}
