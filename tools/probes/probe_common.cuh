// Shared by the skinny-GEMM probes (flush_probe.cu, stream_probe.cu): error checks, bf16
// conversion, the read kernels (an L2 flush that leaves clean lines, a streaming read of w),
// cuBLASLt's plans for y[m, n] = x[m, k] w[n, k]^T as the worker builds them, and the
// family's argument block.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "arc_cuda.h"

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)
#define CL(x)                                                         \
  do {                                                                \
    cublasStatus_t s_ = (x);                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                \
      std::printf("%s:%d %s: %d\n", __FILE__, __LINE__, #x, int(s_)); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

// Reads n 16-byte words through L2 and never stores (the worker's arc_flush).
__global__ void read_flush(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = p[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

// A plain streaming read (L1 bypassed), the floor of any kernel that must read the same bytes.
__global__ void read_only(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
#pragma unroll 4
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

inline unsigned short f2bf(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<unsigned short>(u >> 16);
}
inline float bf2f(unsigned short h) {
  unsigned u = unsigned(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// cuBLASLt bf16 GEMM with fp32 accumulation, y^T = w x^T in column-major terms, and the
// heuristic's first `kPlans` plans (64 MiB of workspace), as the worker's library family.
struct LtGemm {
  static constexpr int kPlans = 8;
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t res[kPlans];
  int plans = 0;
  void* ws = nullptr;
  uint64_t ws_bytes = uint64_t(64) << 20;

  LtGemm(int m, int n, int k) {
    CL(cublasLtCreate(&lt));
    CL(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CL(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CL(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CL(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, n, k));
    CL(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    CL(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
    CL(cublasLtMatmulPreferenceCreate(&pref));
    CL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                            sizeof ws_bytes));
    CL(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, kPlans, res, &plans));
    CK(cudaMalloc(&ws, ws_bytes));
  }
  ~LtGemm() {
    cudaFree(ws);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
  }
  void run(int plan, const void* x, const void* w, void* y, cudaStream_t st) {
    const float alpha = 1, beta = 0;
    CL(cublasLtMatmul(lt, desc, &alpha, w, la, x, lb, &beta, y, lc, y, lc, &res[plan].algo, ws,
                      res[plan].workspaceSize, st));
  }
};

// The family's argument block for y = x w^T.
inline arc_args gemm_args(const void* x, const void* w, void* y, int m, int n, int k) {
  arc_args a{};
  a.in[0] = const_cast<void*>(x);
  a.in[1] = const_cast<void*>(w);
  a.out[0] = y;
  a.axes[0] = m;
  a.axes[1] = n;
  a.axes[2] = k;
  a.n_in = 2;
  a.n_out = 1;
  a.n_axes = 3;
  return a;
}

// Median CUDA-event time in microseconds of run(set) over `reps` runs after `warm` warm-ups,
// rotating `sets` buffer sets, flush() issued before every run outside the timed interval.
template <class Flush, class Run>
double median_event_us(cudaStream_t st, int warm, int reps, int sets, Flush&& flush, Run&& run) {
  std::vector<cudaEvent_t> a(reps), b(reps);
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventCreate(&a[i]));
    CK(cudaEventCreate(&b[i]));
  }
  for (int i = 0; i < warm; ++i) {
    flush();
    run(i % sets);
  }
  for (int i = 0; i < reps; ++i) {
    flush();
    CK(cudaEventRecord(a[i], st));
    run(i % sets);
    CK(cudaEventRecord(b[i], st));
  }
  CK(cudaStreamSynchronize(st));
  CK(cudaGetLastError());
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&t[i], a[i], b[i]));
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventDestroy(a[i]));
    CK(cudaEventDestroy(b[i]));
  }
  std::sort(t.begin(), t.end());
  return double(t[reps / 2]) * 1000;
}
