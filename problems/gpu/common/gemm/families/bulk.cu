/* Skinny-m GEMM that streams w through shared memory with bulk asynchronous copies (sm_90):
 * y[m, n] = sum_k x[m, k] * w[n, k] (+ y[m, n] in place when ARC_RESIDUAL is 1), bf16 inputs, or
 * e4m3 with ARC_GEMM_FP8 = 1 (the products' sum times the per-tensor scales, gemm_scale.cuh);
 * fp32 accumulation, bf16 y.
 *
 * Block (tile n, tile m, split s) computes BLOCK_N columns of y (n0 = BLOCK_N * tile n ..) for
 * TILE_M rows (m0 = TILE_M * tile m ..) over the k-blocks of BLOCK_K that split s of SPLIT_K
 * owns. Warp 0 is the producer: its lanes issue one bulk copy (cp.async.bulk, no tensor map)
 * per row and k-block, BLOCK_N rows of w and TILE_M rows of x of BLOCK_K elements each, into a
 * STAGES-deep ring of shared-memory stages; a stage's copies complete on its "full" mbarrier.
 * With EVICT_W = 1 the copies of w carry an L2 evict-first policy (w is read once, x by every
 * block). So the bytes in flight per block are the ring's, not the registers': a block keeps up
 * to STAGES * (BLOCK_N + TILE_M) rows of BLOCK_K elements on their way.
 *
 * Rows lie kStride bytes apart, 64 more than a multiple of 128: the 8 lanes of a quarter warp
 * read 16 bytes at the same offset of two rows, which then fall in 32 distinct banks. Warps 1 ..
 * WARPS are the consumers: each takes every WARPS-th k-step (64 bytes of a row: 32 bf16 or 64
 * e4m3 elements) of a stage, loads its fragments with 16-byte shared loads (gemm_mma_sync.cuh's
 * fragment trick: lane 4g + t reads 16 bytes at byte 16t of the k-step from w row g and x rows
 * g, g + 8), accumulates the mma.sync products of all TILE_M x
 * BLOCK_N outputs, and releases the stage on its "empty" mbarrier. At the end the consumers sum
 * their tiles in shared memory (the ring's space, idle by then); with SPLIT_K > 1 the SPLIT_K
 * consecutive blocks of a thread-block cluster are the splits of one tile, and each block sums
 * a share of the tile over the cluster through distributed shared memory and stores it.
 *
 * Rows beyond m and n are never copied and read as zeros, and are not stored; the k beyond K
 * of the last k-block are read as zeros. Needs rows of whole 16-byte runs (k a multiple of 8, of
 * 16 in e4m3) and 16-byte aligned x and w: otherwise the kernel writes nothing. For large m it re-reads w once per
 * TILE_M rows (by as many blocks): a family for skinny m.
 *
 * Constraints (problem.toml's `constraints`; the static_asserts repeat them): a stage's row of
 * 128 to 1024 bytes, WARPS at most its k-steps (whole k-steps per consumer and stage) and the
 * ring within 227 KiB of shared memory. */
#include "arc_cuda.h"

#ifndef BLOCK_N
#define BLOCK_N 16
#endif
#ifndef BLOCK_K
#define BLOCK_K 256
#endif
#ifndef STAGES
#define STAGES 6
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef TILE_M
#define TILE_M 16
#endif
#ifndef EVICT_W
#define EVICT_W 1
#endif
#ifndef ARC_GEMM_FP8
#define ARC_GEMM_FP8 0
#endif
// ARC_RESIDUAL is the problem's parameter (problem.toml's [params], given as a -D define):
// 1 adds what y holds when the kernel starts (the residual, which y aliases) to each output;
// 0 overwrites y with the product.
#if !defined(ARC_RESIDUAL) || (ARC_RESIDUAL != 0 && ARC_RESIDUAL != 1)
#error "ARC_RESIDUAL must be defined as 0 or 1: set it in problem.toml's [params]"
#endif

static_assert(BLOCK_N == 8 || BLOCK_N == 16 || BLOCK_N == 32 || BLOCK_N == 64, "BLOCK_N: 8, 16, 32 or 64");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES: 2 to 8");
static_assert(WARPS == 1 || WARPS == 2 || WARPS == 4 || WARPS == 8, "WARPS: 1, 2, 4 or 8");
static_assert(SPLIT_K == 1 || SPLIT_K == 2 || SPLIT_K == 4 || SPLIT_K == 8, "SPLIT_K: 1, 2, 4 or 8");
static_assert(TILE_M == 16 || TILE_M == 32 || TILE_M == 64, "TILE_M: 16, 32 or 64");
static_assert(EVICT_W == 0 || EVICT_W == 1, "EVICT_W: 0 or 1");

#include "gemm_cluster.cuh"    // cluster_sync, cluster_ctarank, ld_dsmem
#include "gemm_mbarrier.cuh"   // smem_addr, mbar_*
#include "gemm_mma_sync.cuh"   // u32x4, lds128, mma_kstep, mma_kstep_e4m3
#include "gemm_scale.cuh"      // output_scale
#include "gemm_store.cuh"      // store_pair

namespace {

constexpr int kElemBytes = ARC_GEMM_FP8 ? 1 : 2;
constexpr int kRowBytes = BLOCK_K * kElemBytes;  // a stage's row
constexpr int kRun = 16 / kElemBytes;            // elements per 16-byte run
constexpr int kStepElems = 4 * kRun;             // elements per k-step (64 bytes)
static_assert(kRowBytes == 128 || kRowBytes == 256 || kRowBytes == 512 || kRowBytes == 1024,
              "BLOCK_K: a stage's row of 128, 256, 512 or 1024 bytes (bf16 64 to 512, e4m3 128 to 1024)");
constexpr int NT = BLOCK_N / 8;         // n8 tiles
constexpr int MT = TILE_M / 16;         // m16 tiles
constexpr int kThreads = 32 * (WARPS + 1);
constexpr int kStride = kRowBytes + 64;  // bytes from one row of a stage to the next
constexpr int kStageBytes = (BLOCK_N + TILE_M) * kStride;  // w rows, then x rows
constexpr int kSteps = kRowBytes / 64;  // k-steps per stage
static_assert(WARPS <= kSteps, "WARPS at most BLOCK_K's k-steps (64 bytes each): each consumer takes whole k-steps of a stage");
constexpr int kRed = BLOCK_N + 4;       // floats per row of a consumer's tile when summing
constexpr int kTile = TILE_M * kRed;    // floats per consumer's tile
static_assert(STAGES * kStageBytes <= 232448 - 2 * 8 * STAGES, "the ring exceeds 227 KiB of shared memory");

// Copies `bytes` (a multiple of 16, 16-byte aligned ends) from global `src` to shared `dst`,
// completing on the mbarrier `bar` (its expect_tx counts them).
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// The same with an L2 cache policy (createpolicy).
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar,
                                          unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}
__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// A barrier of the consumer warps alone (hardware barrier 1; 0 is __syncthreads').
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(32 * WARPS) : "memory");
}

}  // namespace

// One block per SM at least is all the launch bounds ask: without it NVRTC holds a cluster
// kernel to 96 registers and spills.
// grid (cdiv(n, BLOCK_N) * cdiv(m, TILE_M) * SPLIT_K), block 32 * (WARPS + 1), shared
// max(STAGES * (BLOCK_N + TILE_M) * kStride, WARPS * TILE_M * (BLOCK_N + 4) * 4) bytes, kStride
// = BLOCK_K * (2 in bf16, 1 in e4m3) + 64.
extern "C" __global__ void
#if SPLIT_K > 1
__cluster_dims__(SPLIT_K, 1, 1)
#endif
__launch_bounds__(kThreads, 1) bulk_gemm(arc_args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Bulk copies and mbarrier transaction counts need sm_90: refuse rather than compute nothing.
  __trap();
#else
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full_bar[STAGES];
  __shared__ __align__(8) unsigned long long empty_bar[STAGES];

  const unsigned char* x = static_cast<const unsigned char*>(a.in[0]);
  const unsigned char* w = static_cast<const unsigned char*>(a.in[1]);
  arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
  const int M = static_cast<int>(a.axes[0]);
  const int N = static_cast<int>(a.axes[1]);
  const int K = static_cast<int>(a.axes[2]);
  // Uniform over the grid, so every block of a cluster leaves together.
  if (K % kRun != 0 || ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(w)) & 15) != 0)
    return;

  const int tiles_n = (N + BLOCK_N - 1) / BLOCK_N;
  const int tile = static_cast<int>(blockIdx.x) / SPLIT_K;
  const int split = SPLIT_K > 1 ? static_cast<int>(cluster_ctarank()) : 0;
  const int n0 = (tile % tiles_n) * BLOCK_N, m0 = (tile / tiles_n) * TILE_M;
  const int k_blocks_all = (K + BLOCK_K - 1) / BLOCK_K;
  const int per_split = (k_blocks_all + SPLIT_K - 1) / SPLIT_K;
  const int kb0 = min(k_blocks_all, split * per_split);
  const int k_blocks = min(k_blocks_all, kb0 + per_split) - kb0;
  const int w_rows = min(BLOCK_N, N - n0), x_rows = min(TILE_M, M - m0);
  const unsigned ring = smem_addr(smem);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);
      mbar_init(smem_addr(&empty_bar[s]), WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  float* red = reinterpret_cast<float*>(smem);  // WARPS tiles of [TILE_M][kRed], after the mainloop
  const int ct = static_cast<int>(threadIdx.x) - 32;  // consumer thread, 0 .. 32 * WARPS - 1
  constexpr int kPairs = TILE_M * BLOCK_N / 2;
  const float scale = output_scale(a);

  if (warp == 0) {
    // Producer: stage s = i % STAGES holds k-block kb0 + i; its use u = i / STAGES waits for
    // the consumers' release of use u - 1 (phase u - 1 of its empty barrier).
#if EVICT_W
    const unsigned long long policy = evict_first_policy();
#endif
    for (int i = 0; i < k_blocks; ++i) {
      const int s = i % STAGES;
      if (i >= STAGES) mbar_wait(smem_addr(&empty_bar[s]), static_cast<unsigned>((i / STAGES - 1) & 1));
      const int k0 = (kb0 + i) * BLOCK_K;
      const unsigned bytes = static_cast<unsigned>(min(BLOCK_K, K - k0) * kElemBytes);
      const unsigned full = smem_addr(&full_bar[s]);
      if (lane == 0) mbar_expect_tx(full, bytes * static_cast<unsigned>(w_rows + x_rows));
      __syncwarp();
      const unsigned stage = ring + static_cast<unsigned>(s * kStageBytes);
      for (int r = lane; r < w_rows + x_rows; r += 32) {
        if (r < w_rows) {
          const unsigned char* src = w + (static_cast<long long>(n0 + r) * K + k0) * kElemBytes;
#if EVICT_W
          bulk_load(stage + static_cast<unsigned>(r * kStride), src, bytes, full, policy);
#else
          bulk_load(stage + static_cast<unsigned>(r * kStride), src, bytes, full);
#endif
        } else {
          const int xr = r - w_rows;
          bulk_load(stage + static_cast<unsigned>((BLOCK_N + xr) * kStride),
                    x + (static_cast<long long>(m0 + xr) * K + k0) * kElemBytes, bytes, full);
        }
      }
    }
  } else {
    // Consumers.
    const int cw = warp - 1, g = lane >> 2, t = lane & 3;
    float acc[MT][NT][4] = {};
    const u32x4 zero = {0u, 0u, 0u, 0u};

    for (int i = 0; i < k_blocks; ++i) {
      const int s = i % STAGES;
      mbar_wait(smem_addr(&full_bar[s]), static_cast<unsigned>((i / STAGES) & 1));
      const int k0 = (kb0 + i) * BLOCK_K;
      const unsigned stage = ring + static_cast<unsigned>(s * kStageBytes);
#pragma unroll
      for (int u = 0; u < kSteps / WARPS; ++u) {
        const int kk = (u * WARPS + cw) * kStepElems + kRun * t;  // this lane's run of the stage
        const bool kin = k0 + kk < K;
        const unsigned at = stage + static_cast<unsigned>(kk * kElemBytes);
        u32x4 wf[NT];
#pragma unroll
        for (int j = 0; j < NT; ++j)
          wf[j] = (kin && j * 8 + g < w_rows) ? lds128(at + static_cast<unsigned>((j * 8 + g) * kStride)) : zero;
#pragma unroll
        for (int mi = 0; mi < MT; ++mi) {
          const int row = BLOCK_N + mi * 16 + g;
          const u32x4 q = (kin && mi * 16 + g < x_rows) ? lds128(at + static_cast<unsigned>(row * kStride)) : zero;
          const u32x4 p = (kin && mi * 16 + 8 + g < x_rows) ? lds128(at + static_cast<unsigned>((row + 8) * kStride)) : zero;
#pragma unroll
          for (int j = 0; j < NT; ++j) {
#if ARC_GEMM_FP8
            mma_kstep_e4m3(acc[mi][j], q, p, wf[j]);
#else
            mma_kstep(acc[mi][j], q, p, wf[j]);
#endif
          }
        }
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(smem_addr(&empty_bar[s]));
    }

    // Every consumer is past its last read of the ring: its space holds the WARPS tiles now.
    consumers_sync();
    float* mine = red + cw * kTile;
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int r = mi * 16 + g, c = j * 8 + 2 * t;
        mine[r * kRed + c] = acc[mi][j][0];
        mine[r * kRed + c + 1] = acc[mi][j][1];
        mine[(r + 8) * kRed + c] = acc[mi][j][2];
        mine[(r + 8) * kRed + c + 1] = acc[mi][j][3];
      }
    consumers_sync();
    // Output pair e (row e / (BLOCK_N / 2), columns 2 (e % (BLOCK_N / 2)) + 0, 1), summed over
    // the consumers by one thread: into tile 0 with SPLIT_K > 1 (only this thread touches it),
    // else stored.
    for (int e = ct; e < kPairs; e += 32 * WARPS) {
      const int r = e / (BLOCK_N / 2), c = 2 * (e % (BLOCK_N / 2));
      float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
      for (int v = 0; v < WARPS; ++v) {
        s0 += red[v * kTile + r * kRed + c];
        s1 += red[v * kTile + r * kRed + c + 1];
      }
      if (SPLIT_K > 1) {
        red[r * kRed + c] = s0;
        red[r * kRed + c + 1] = s1;
      } else {
        store_pair(y, M, N, m0 + r, n0 + c, scale * s0, scale * s1);
      }
    }
  }

#if SPLIT_K > 1
  // Every block's tile 0 is its split's sum; block `split` sums its share of the pairs over the
  // cluster and stores them; the second barrier keeps each block's shared memory alive until the
  // cluster has read it.
  cluster_sync();
  if (warp > 0) {
    const unsigned tile0 = smem_addr(red);
    for (int e = split * 32 * WARPS + ct; e < kPairs; e += SPLIT_K * 32 * WARPS) {
      const int r = e / (BLOCK_N / 2), c = 2 * (e % (BLOCK_N / 2));
      const unsigned at = tile0 + static_cast<unsigned>((r * kRed + c) * 4);
      float s0 = 0.0f, s1 = 0.0f;
      for (int q = 0; q < SPLIT_K; ++q) {
        s0 += ld_dsmem(at, static_cast<unsigned>(q));
        s1 += ld_dsmem(at + 4u, static_cast<unsigned>(q));
      }
      store_pair(y, M, N, m0 + r, n0 + c, scale * s0, scale * s1);
    }
  }
  cluster_sync();
#endif
#endif
}
