/* Skinny-m GEMM, y[m, n] = sum_k x[m, k] * w[n, k] (+ y[m, n] in place when ARC_RESIDUAL is
 * 1). For small m the cost is streaming w once, so both kernels feed 16-byte loads of w
 * straight into mma.sync.m16n8k16 fragments, without shared memory or ldmatrix for w.
 *
 * Fragment trick. The dot product may visit k in any order, so one lane's 16-byte load of 8
 * consecutive k serves two mma k-steps: for lane l (g = l / 4, t = l % 4) and a 32-wide k-step
 * at kb, the lane loads w[n0 + g][kb + 8t .. kb + 8t + 7] = words w0..w3, x[row g][same k] =
 * q0..q3 and x[row g + 8][same k] = p0..p3; the first mma takes a = {q0, p0, q1, p1},
 * b = {w0, w1}, the second a = {q2, p2, q3, p3}, b = {w2, w3}. In both operands the mma's
 * k index 2t + e maps to k = kb + 8t + e and 8 + 2t + e to kb + 8t + 2 + e (second mma: + 4),
 * so products pair equal k and each of the 32 k is used once. w is read with ld.global.nc
 * and L1::no_allocate (optionally an L2 prefetch hint of PREFETCH_L2 bytes); the UNROLL k-steps
 * of loads of a run are issued before their first use. m is done in passes of TILE_M rows
 * (TILE_M / 16 m-tiles; a pass with fewer rows uses a smaller compile-time instance, but the
 * kernel's register count is that of the largest); w is streamed once per pass.
 *
 * skinny_direct (one launch): a block owns TILE_N columns; its THREADS / 32 warps split the
 * block's K range in interleaved runs of UNROLL k-steps, read x through L1/L2, and sum their
 * [16, TILE_N] tiles in shared memory, one m-tile at a time, before writing bf16 y. With
 * GRID_CLUSTER > 1, a thread-block cluster of GRID_CLUSTER consecutive blocks shares a column
 * tile and splits K; the block sums are added through distributed shared memory.
 *
 * splitk_partial + splitk_reduce (two launches): block (bx, s) covers THREADS / 32 * TILE_N
 * columns and K slice s of GRID_SPLITK; it copies its slice of x to shared memory CHUNK_K at a
 * time (cp.async), each warp streams its own TILE_N rows of w over the slice and stores its
 * fp32 partial tile to ws[s][m][n] from registers; splitk_reduce sums the slices in order (and
 * the residual) into bf16 y.
 *
 * Rows beyond m and columns beyond n are predicated (zero-filled loads, skipped stores); k
 * must be a multiple of 8 (16-byte rows), otherwise the kernels write nothing. */
#include "arc_cuda.h"

#ifndef TILE_M
#define TILE_M 64
#endif
#ifndef TILE_N
#define TILE_N 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef GRID_SPLITK
#define GRID_SPLITK 8
#endif
#ifndef PREFETCH_L2
#define PREFETCH_L2 0
#endif
#ifndef GRID_CLUSTER
#define GRID_CLUSTER 1
#endif
#ifndef CHUNK_K
#define CHUNK_K 512
#endif
// ARC_RESIDUAL is the problem's parameter (problem.toml's [params], given as a -D define):
// 1 adds what y holds when the kernel starts (the residual, which y aliases) to each output;
// 0 overwrites y with the product.
#if !defined(ARC_RESIDUAL) || (ARC_RESIDUAL != 0 && ARC_RESIDUAL != 1)
#error "ARC_RESIDUAL must be defined as 0 or 1: set it in problem.toml's [params]"
#endif

static_assert(TILE_M == 16 || TILE_M == 32 || TILE_M == 64, "TILE_M: 16, 32 or 64");
static_assert(TILE_N == 8 || TILE_N == 16 || TILE_N == 32 || TILE_N == 64, "TILE_N: 8, 16, 32 or 64");
static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 1024, "THREADS: a multiple of 32 up to 1024");
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL: 1..16");
static_assert(GRID_SPLITK >= 1 && GRID_SPLITK <= 64, "GRID_SPLITK: 1..64");
static_assert(GRID_CLUSTER == 1 || GRID_CLUSTER == 2 || GRID_CLUSTER == 4 || GRID_CLUSTER == 8,
              "GRID_CLUSTER: 1, 2, 4 or 8");
static_assert(CHUNK_K == 256 || CHUNK_K == 512 || CHUNK_K == 1024 || CHUNK_K == 2048, "CHUNK_K: 256..2048");
static_assert(PREFETCH_L2 == 0 || PREFETCH_L2 == 64 || PREFETCH_L2 == 128 || PREFETCH_L2 == 256,
              "PREFETCH_L2: 0, 64, 128 or 256");

#include "gemm_cluster.cuh"  // cluster_sync, cluster_ctarank, ld_dsmem
#include "gemm_skinny.cuh"  // u32x4, load_stream (after PREFETCH_L2), load_cached, mma_bf16

namespace {

constexpr int kWarps = THREADS / 32;
constexpr int NW = TILE_N / 8;          // n8 tiles per block
constexpr int RED_STRIDE = TILE_N + 4;  // floats per row of a warp's tile in shared memory
constexpr int kStep = 32;               // k per step: 4 lanes x 8

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  unsigned r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// Where a block's summed tile goes.
struct Sink {
  arc_bf16* y;  // direct: bf16 output (holding the residual when ARC_RESIDUAL is 1)
  float* part;  // split: this slice's fp32 partial sums, [m][n]
};

// Rows m0 .. m0 + 16 * MT - 1 (those below M), columns n0 .. n0 + TILE_N - 1, k in [kb0, kb1).
template <int MT, bool DIRECT>
__device__ __forceinline__ void block_tile(const arc_bf16* __restrict__ x, const arc_bf16* __restrict__ w, Sink sink,
                                           float* red, int M, int N, int K, int m0, int n0, int kb0, int kb1) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;

  float acc[MT][NW][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NW; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.0f;

  const int steps = kb1 > kb0 ? (kb1 - kb0 + kStep - 1) / kStep : 0;

  // Row pointers of this lane (clamped to row 0 when out of range; such loads are skipped).
  const arc_bf16* wrow[NW];
  bool wok[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    const int n = n0 + j * 8 + g;
    wok[j] = n < N;
    wrow[j] = w + static_cast<long long>(wok[j] ? n : 0) * K + 8 * t;
  }
  const arc_bf16* xrow[MT][2];
  bool xok[MT][2];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = m0 + i * 16 + h * 8 + g;
      xok[i][h] = r < M;
      xrow[i][h] = x + static_cast<long long>(xok[i][h] ? r : 0) * K + 8 * t;
    }

  for (int s0 = warp * UNROLL; s0 < steps; s0 += kWarps * UNROLL) {
    u32x4 wv[UNROLL][NW];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int k = kb0 + (s0 + u) * kStep;  // this lane reads k + 8t .. k + 8t + 7
      const bool ok = s0 + u < steps && k + 8 * t < kb1;
#pragma unroll
      for (int j = 0; j < NW; ++j) {
        if (ok && wok[j]) {
          wv[u][j] = load_stream(wrow[j] + k);
        } else {
          wv[u][j] = u32x4{0u, 0u, 0u, 0u};
        }
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      if (s0 + u >= steps) break;  // warp-uniform
      const int k = kb0 + (s0 + u) * kStep;
      const bool ok = k + 8 * t < kb1;
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const u32x4 q = (ok && xok[i][0]) ? load_cached(xrow[i][0] + k) : u32x4{0u, 0u, 0u, 0u};
        const u32x4 p = (ok && xok[i][1]) ? load_cached(xrow[i][1] + k) : u32x4{0u, 0u, 0u, 0u};
#pragma unroll
        for (int j = 0; j < NW; ++j) {
          mma_bf16(acc[i][j], q.x, p.x, q.y, p.y, wv[u][j].x, wv[u][j].y);
          mma_bf16(acc[i][j], q.z, p.z, q.w, p.w, wv[u][j].z, wv[u][j].w);
        }
      }
    }
  }

  // Sum the warps' tiles, one m-tile at a time, through shared memory [warp][16][RED_STRIDE].
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    __syncthreads();  // the previous use of `red` is finished
    float* mine = red + warp * 16 * RED_STRIDE;
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      const int c = j * 8 + 2 * t;
      mine[g * RED_STRIDE + c] = acc[i][j][0];
      mine[g * RED_STRIDE + c + 1] = acc[i][j][1];
      mine[(g + 8) * RED_STRIDE + c] = acc[i][j][2];
      mine[(g + 8) * RED_STRIDE + c + 1] = acc[i][j][3];
    }
    __syncthreads();
#if GRID_CLUSTER > 1
    // The block's sum goes to `tile`; after the cluster barrier, rank q sums elements
    // e with (e / THREADS) % GRID_CLUSTER == q over the cluster's blocks and writes them.
    float* tile = red + kWarps * 16 * RED_STRIDE;
    for (int e = tid; e < 16 * TILE_N; e += THREADS) {
      const int r = e / TILE_N, c = e % TILE_N;
      float s = 0.0f;
#pragma unroll 4
      for (int v = 0; v < kWarps; ++v) s += red[(v * 16 + r) * RED_STRIDE + c];
      tile[e] = s;
    }
    cluster_sync();
    const unsigned tile_addr = smem_u32(tile);
    for (int e = static_cast<int>(cluster_ctarank()) * THREADS + tid; e < 16 * TILE_N; e += GRID_CLUSTER * THREADS) {
      const int r = e / TILE_N, c = e % TILE_N;
      float s = 0.0f;
#pragma unroll
      for (int q = 0; q < GRID_CLUSTER; ++q) s += ld_dsmem(tile_addr + 4u * e, q);
#else
    for (int e = tid; e < 16 * TILE_N; e += THREADS) {
      const int r = e / TILE_N, c = e % TILE_N;
      float s = 0.0f;
#pragma unroll 4
      for (int v = 0; v < kWarps; ++v) s += red[(v * 16 + r) * RED_STRIDE + c];
#endif
      const int row = m0 + i * 16 + r, col = n0 + c;
      if (row < M && col < N) {
        const long long o = static_cast<long long>(row) * N + col;
        if (DIRECT) {
#if ARC_RESIDUAL
          s += arc_bf16_to_f32(sink.y[o]);
#endif
          sink.y[o] = arc_f32_to_bf16(s);
        } else {
          sink.part[o] = s;
        }
      }
    }
#if GRID_CLUSTER > 1
    cluster_sync();  // no block reuses or releases `tile` while another still reads it
#endif
  }
}

// splitk_partial's tile: the block's THREADS / 32 warps each own TILE_N columns (the block
// kWarps * TILE_N) of rows m0 .. m0 + 16 * MT - 1 over the whole slice [kb0, kb1), which is
// walked in CHUNK_K pieces: the piece of x is copied to shared memory (cp.async, zero-filled
// outside m and the slice) while the warps' first w loads are in flight, then every warp
// reads its x fragments from there (LDS.128; rows padded by 64 bytes so the 8 rows x 4 chunks
// of one load hit distinct banks). Each warp stores its fp32 partial tile from registers.
constexpr int XS_STRIDE = CHUNK_K + 32;  // bf16 per staged x row

template <int MT>
__device__ __forceinline__ void staged_tile(const arc_bf16* __restrict__ x, const arc_bf16* __restrict__ w,
                                            float* part, arc_bf16* xs, int M, int N, int K, int m0, int n0,
                                            int kb0, int kb1) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wn0 = n0 + warp * TILE_N;

  float acc[MT][NW][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NW; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.0f;

  const arc_bf16* wrow[NW];
  bool wok[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    const int n = wn0 + j * 8 + g;
    wok[j] = n < N;
    wrow[j] = w + static_cast<long long>(wok[j] ? n : 0) * K + 8 * t;
  }
  const unsigned xs_addr = smem_u32(xs);

  for (int c0 = kb0; c0 < kb1; c0 += CHUNK_K) {
    const int c1 = min(kb1, c0 + CHUNK_K);
    const int steps = (c1 - c0 + kStep - 1) / kStep;
    __syncthreads();  // every warp is done with the previous piece of x
    for (int e = tid; e < MT * 16 * (CHUNK_K / 8); e += THREADS) {
      const int r = e / (CHUNK_K / 8), kc = (e % (CHUNK_K / 8)) * 8;
      const int gr = m0 + r, gk = c0 + kc;
      const bool ok = gr < M && gk < c1;
      cp_async16(xs_addr + 2u * (r * XS_STRIDE + kc), ok ? x + static_cast<long long>(gr) * K + gk : x, ok ? 16 : 0);
    }
    bool first = true;
    for (int s0 = 0; s0 < steps; s0 += UNROLL) {
      u32x4 wv[UNROLL][NW];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int k = c0 + (s0 + u) * kStep;
        const bool ok = s0 + u < steps && k + 8 * t < c1;
#pragma unroll
        for (int j = 0; j < NW; ++j) {
          if (ok && wok[j]) {
            wv[u][j] = load_stream(wrow[j] + k);
          } else {
            wv[u][j] = u32x4{0u, 0u, 0u, 0u};
          }
        }
      }
      if (first) {  // the piece of x lands while the first w loads are in flight
        cp_async_commit_wait_all();
        __syncthreads();
        first = false;
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        if (s0 + u >= steps) break;  // block-uniform
        const int kk = (s0 + u) * kStep + 8 * t;  // offset in the piece; zero-filled past c1
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          const u32x4 q = lds128(xs_addr + 2u * ((i * 16 + g) * XS_STRIDE + kk));
          const u32x4 p = lds128(xs_addr + 2u * ((i * 16 + 8 + g) * XS_STRIDE + kk));
#pragma unroll
          for (int j = 0; j < NW; ++j) {
            mma_bf16(acc[i][j], q.x, p.x, q.y, p.y, wv[u][j].x, wv[u][j].y);
            mma_bf16(acc[i][j], q.z, p.z, q.w, p.w, wv[u][j].z, wv[u][j].w);
          }
        }
      }
    }
  }

  // c0, c1 at (g, 2t + {0, 1}) and c2, c3 eight rows below, for each m16 x n8 tile.
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      const int col = wn0 + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + i * 16 + h * 8 + g;
        if (row >= M) continue;
        float* o = part + static_cast<long long>(row) * N + col;
        if ((N & 1) == 0 && col + 1 < N) {
          *reinterpret_cast<float2*>(o) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (col < N) o[0] = acc[i][j][2 * h];
          if (col + 1 < N) o[1] = acc[i][j][2 * h + 1];
        }
      }
    }
}

// Passes of up to TILE_M rows; the m-tile count of a pass is a compile-time constant (the
// kernel's registers are those of its largest instance, TILE_M / 16 m-tiles).
template <bool DIRECT>
__device__ __forceinline__ void run_passes(const arc_args& a, Sink sink, int n0, int kb0, int kb1) {
  extern __shared__ __align__(16) float red[];
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  const arc_bf16* w = static_cast<const arc_bf16*>(a.in[1]);
  const int M = static_cast<int>(a.axes[0]);
  const int N = static_cast<int>(a.axes[1]);
  const int K = static_cast<int>(a.axes[2]);
  for (int m0 = 0; m0 < M; m0 += TILE_M) {
    const int mt = (min(TILE_M, M - m0) + 15) / 16;
    if (TILE_M == 16 || mt == 1) {
      block_tile<1, DIRECT>(x, w, sink, red, M, N, K, m0, n0, kb0, kb1);
    } else if (TILE_M == 32 || mt == 2) {
      block_tile<(TILE_M >= 32 ? 2 : 1), DIRECT>(x, w, sink, red, M, N, K, m0, n0, kb0, kb1);
    } else if (mt == 3) {
      block_tile<(TILE_M >= 64 ? 3 : 1), DIRECT>(x, w, sink, red, M, N, K, m0, n0, kb0, kb1);
    } else {
      block_tile<(TILE_M >= 64 ? 4 : 1), DIRECT>(x, w, sink, red, M, N, K, m0, n0, kb0, kb1);
    }
  }
}

}  // namespace

// grid (cdiv(n, TILE_N) * GRID_CLUSTER), block THREADS, shared
// (kWarps * 16 * RED_STRIDE + 16 * TILE_N) * 4 bytes. With GRID_CLUSTER > 1 the consecutive
// blocks of a cluster share one column tile and split K into GRID_CLUSTER slices (chunk as in
// splitk_partial); their tiles are summed through distributed shared memory.
#if GRID_CLUSTER > 1
extern "C" __global__ void __cluster_dims__(GRID_CLUSTER, 1, 1) __launch_bounds__(THREADS) skinny_direct(arc_args a) {
#else
extern "C" __global__ void __launch_bounds__(THREADS) skinny_direct(arc_args a) {
#endif
  const int K = static_cast<int>(a.axes[2]);
  if ((K & 7) != 0) return;
  Sink sink{static_cast<arc_bf16*>(a.out[0]), nullptr};
#if GRID_CLUSTER > 1
  const int part = static_cast<int>(cluster_ctarank());
  const int chunk = ((K + kStep - 1) / kStep + GRID_CLUSTER - 1) / GRID_CLUSTER * kStep;
  const int kb0 = min(K, part * chunk);
  run_passes<true>(a, sink, (blockIdx.x / GRID_CLUSTER) * TILE_N, kb0, min(K, kb0 + chunk));
#else
  run_passes<true>(a, sink, blockIdx.x * TILE_N, 0, K);
#endif
}

// grid (cdiv(n, TILE_N * THREADS / 32), GRID_SPLITK), block THREADS, shared
// min(TILE_M, cdiv(m, 16) * 16) * (CHUNK_K + 32) * 2 bytes; workspace GRID_SPLITK * m * n * 4
// bytes. Slice s covers k in [s * chunk, min(K, (s + 1) * chunk)),
// chunk = cdiv(cdiv(K, 32), GRID_SPLITK) * 32; an empty slice writes zeros.
static_assert(TILE_M * XS_STRIDE * 2 <= 232448, "TILE_M x CHUNK_K staging above 227 KB of shared memory");
extern "C" __global__ void __launch_bounds__(THREADS) splitk_partial(arc_args a) {
  extern __shared__ __align__(16) arc_bf16 xs[];
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  const arc_bf16* w = static_cast<const arc_bf16*>(a.in[1]);
  const int M = static_cast<int>(a.axes[0]);
  const int N = static_cast<int>(a.axes[1]);
  const int K = static_cast<int>(a.axes[2]);
  if ((K & 7) != 0) return;
  const int chunk = ((K + kStep - 1) / kStep + GRID_SPLITK - 1) / GRID_SPLITK * kStep;
  const int kb0 = min(K, static_cast<int>(blockIdx.y) * chunk);
  const int kb1 = min(K, kb0 + chunk);
  float* part = static_cast<float*>(a.ws) + static_cast<long long>(blockIdx.y) * M * N;
  const int n0 = blockIdx.x * (TILE_N * kWarps);
  for (int m0 = 0; m0 < M; m0 += TILE_M) {
    const int mt = (min(TILE_M, M - m0) + 15) / 16;
    if (TILE_M == 16 || mt == 1) {
      staged_tile<1>(x, w, part, xs, M, N, K, m0, n0, kb0, kb1);
    } else if (TILE_M == 32 || mt == 2) {
      staged_tile<(TILE_M >= 32 ? 2 : 1)>(x, w, part, xs, M, N, K, m0, n0, kb0, kb1);
    } else if (mt == 3) {
      staged_tile<(TILE_M >= 64 ? 3 : 1)>(x, w, part, xs, M, N, K, m0, n0, kb0, kb1);
    } else {
      staged_tile<(TILE_M >= 64 ? 4 : 1)>(x, w, part, xs, M, N, K, m0, n0, kb0, kb1);
    }
  }
}

// grid (cdiv(m * n, 1024)), block 256: four consecutive outputs per thread (flattened [m * n]),
// summing the GRID_SPLITK partial slices in slice order.
extern "C" __global__ void __launch_bounds__(256) splitk_reduce(arc_args a) {
  const long long total = a.axes[0] * a.axes[1];
  const int K = static_cast<int>(a.axes[2]);
  if ((K & 7) != 0) return;
  const float* part = static_cast<const float*>(a.ws);
  arc_bf16* y = static_cast<arc_bf16*>(a.out[0]);
  const long long e0 = (static_cast<long long>(blockIdx.x) * 256 + threadIdx.x) * 4;
  if (e0 >= total) return;
  if ((total & 3) == 0) {  // every slice starts 16-byte aligned
    float4 s = *reinterpret_cast<const float4*>(part + e0);
#pragma unroll
    for (int sp = 1; sp < GRID_SPLITK; ++sp) {
      const float4 v = *reinterpret_cast<const float4*>(part + sp * total + e0);
      s.x += v.x;
      s.y += v.y;
      s.z += v.z;
      s.w += v.w;
    }
    uint2* dst = reinterpret_cast<uint2*>(y + e0);
#if ARC_RESIDUAL
    const uint2 r = *dst;
    const float2 r0 = arc_bf16x2_to_f32x2(r.x), r1 = arc_bf16x2_to_f32x2(r.y);
    s.x += r0.x;
    s.y += r0.y;
    s.z += r1.x;
    s.w += r1.y;
#endif
    *dst = make_uint2(arc_f32x2_to_bf16x2(s.x, s.y), arc_f32x2_to_bf16x2(s.z, s.w));
  } else {
    for (long long e = e0; e < e0 + 4 && e < total; ++e) {
      float s = 0.0f;
      for (int sp = 0; sp < GRID_SPLITK; ++sp) s += part[sp * total + e];
#if ARC_RESIDUAL
      s += arc_bf16_to_f32(y[e]);
#endif
      y[e] = arc_f32_to_bf16(s);
    }
  }
}
