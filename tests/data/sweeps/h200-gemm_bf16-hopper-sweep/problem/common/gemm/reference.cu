/* Reference for y[m, n] = sum_k x[m, k] * w[n, k] (+ residual[m, n] when ARC_RESIDUAL is 1).
 *
 * A plain tiled SIMT GEMM: each block computes a 128 x 128 tile of y, staging 16-wide slices
 * of x and w in shared memory as floats; each thread accumulates an 8 x 8 register block with
 * fp32 fused multiply-adds. Products of two bf16 values are exact in fp32, so the only error
 * is the fp32 summation (about sqrt(k) * 2^-24 relative to the partial sums, far below the
 * tolerance). The result is written as double. Every load and store is bounds-checked, so any
 * m, n and k work. */
#include "arc_cuda.h"

// ARC_RESIDUAL is the problem's parameter (problem.toml's [params], given as a -D define):
// 1 adds residual[m, n], input 2, to each output; 0 computes the product alone.
#if !defined(ARC_RESIDUAL) || (ARC_RESIDUAL != 0 && ARC_RESIDUAL != 1)
#error "ARC_RESIDUAL must be defined as 0 or 1: set it in problem.toml's [params]"
#endif

#define REF_BM 128
#define REF_BN 128
#define REF_BK 16
#define REF_THREADS 256

ARC_KERNEL gemm_reference(arc_args a) {
  const arc_bf16* x = static_cast<const arc_bf16*>(a.in[0]);
  const arc_bf16* w = static_cast<const arc_bf16*>(a.in[1]);
#if ARC_RESIDUAL
  const arc_bf16* residual = static_cast<const arc_bf16*>(a.in[2]);
#endif
  double* y = static_cast<double*>(a.out[0]);
  const long long M = a.axes[0], N = a.axes[1], K = a.axes[2];

  __shared__ float xs[REF_BK][REF_BM + 4];
  __shared__ float ws[REF_BK][REF_BN + 4];

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const long long m0 = static_cast<long long>(blockIdx.y) * REF_BM;
  const long long n0 = static_cast<long long>(blockIdx.x) * REF_BN;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  for (long long k0 = 0; k0 < K; k0 += REF_BK) {
    // 128 rows x 16 k of each operand: 2048 elements, 8 per thread, k fastest.
#pragma unroll
    for (int i = 0; i < (REF_BM * REF_BK) / REF_THREADS; ++i) {
      const int e = tid + i * REF_THREADS;
      const int r = e / REF_BK, kk = e % REF_BK;
      const long long gk = k0 + kk;
      const long long gm = m0 + r, gn = n0 + r;
      xs[kk][r] = (gm < M && gk < K) ? arc_bf16_to_f32(x[gm * K + gk]) : 0.0f;
      ws[kk][r] = (gn < N && gk < K) ? arc_bf16_to_f32(w[gn * K + gk]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < REF_BK; ++kk) {
      float av[8], bv[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        av[i] = xs[kk][ty * 4 + i];
        av[4 + i] = xs[kk][64 + ty * 4 + i];
        bv[i] = ws[kk][tx * 4 + i];
        bv[4 + i] = ws[kk][64 + tx * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }

  // Thread (ty, tx) owns rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, and the same for columns.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const long long gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (gm >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const long long gn = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
      if (gn >= N) continue;
      double v = static_cast<double>(acc[i][j]);
#if ARC_RESIDUAL
      v += static_cast<double>(arc_bf16_to_f32(residual[gm * N + gn]));
#endif
      y[gm * N + gn] = v;
    }
  }
}
