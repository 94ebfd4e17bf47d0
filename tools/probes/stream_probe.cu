// Skinny-GEMM probe: the gemm_bf16 problem's stream family (knobs as -D defines) beside
// cuBLASLt's default plan and the best of its first 8 heuristic plans, and a plain read of w,
// timed like the worker: CUDA events around each run, the L2 flushed before every run by a
// read over 2 x L2, two buffer sets, medians of 50 runs after 10 warm-ups. Every kernel's
// output is checked against a double reference first. tools/probes/stream_probe.sh builds a
// knob sweep and runs it. Usage: stream_probe M N K [M N K ...]
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "stream.cu"

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)
#define CL(x)                                                              \
  do {                                                                     \
    cublasStatus_t s_ = (x);                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
      std::printf("%s:%d %s: %d\n", __FILE__, __LINE__, #x, int(s_));      \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

__global__ void read_flush(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = p[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

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

__global__ void reference(const unsigned short* x, const unsigned short* w, double* y, int m, int n, int k) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= n) return;
  double acc = 0;
  for (int kk = 0; kk < k; ++kk)
    acc += double(__uint_as_float(unsigned(x[size_t(i) * k + kk]) << 16)) *
           double(__uint_as_float(unsigned(w[size_t(j) * k + kk]) << 16));
  y[size_t(i) * n + j] = acc;
}

static unsigned short f2bf(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<unsigned short>(u >> 16);
}
static float bf2f(unsigned short h) {
  unsigned u = unsigned(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

static void probe(int m, int n, int k) {
  const int reps = 50, warm = 10, sets = 2;
  int l2 = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<unsigned short> hx(size_t(m) * k), hw(size_t(n) * k);
  srand(1);
  for (auto& v : hx) v = f2bf(rand() / float(RAND_MAX) * 2 - 1);
  for (auto& v : hw) v = f2bf((rand() / float(RAND_MAX) * 2 - 1) / 16);
  void *x[sets], *w[sets], *y[sets];
  for (int s = 0; s < sets; ++s) {
    CK(cudaMalloc(&x[s], hx.size() * 2));
    CK(cudaMalloc(&w[s], hw.size() * 2));
    CK(cudaMalloc(&y[s], size_t(m) * n * 2));
    CK(cudaMemcpy(x[s], hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w[s], hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  }
  const size_t fbytes = size_t(2) * l2;
  void* fl;
  unsigned* sink;
  CK(cudaMalloc(&fl, fbytes));
  CK(cudaMemset(fl, 1, fbytes));
  CK(cudaMalloc(&sink, 64));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));

  cublasLtHandle_t lt;
  CL(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CL(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CL(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CL(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  cublasLtMatrixLayout_t la, lb, lc;
  CL(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, n, k));
  CL(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
  CL(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
  cublasLtMatmulPreference_t pref;
  CL(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t wsb = uint64_t(64) << 20;
  CL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
  cublasLtMatmulHeuristicResult_t res[8];
  int got = 0;
  CL(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 8, res, &got));
  void* ws;
  CK(cudaMalloc(&ws, wsb));
  float alpha = 1, beta = 0;

  std::vector<double> ref(size_t(m) * n);
  {
    double* dref;
    CK(cudaMalloc(&dref, ref.size() * 8));
    reference<<<dim3((n + 255) / 256, m), 256>>>(static_cast<const unsigned short*>(x[0]),
                                                static_cast<const unsigned short*>(w[0]), dref, m, n, k);
    CK(cudaMemcpy(ref.data(), dref, ref.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(dref));
  }

  const int smem = THREADS / 32 * 16 * (TILE_N + 4) * 4;
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(stream_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto family = [&](int s) {
    arc_args a{};
    a.in[0] = x[s];
    a.in[1] = w[s];
    a.out[0] = y[s];
    a.axes[0] = m;
    a.axes[1] = n;
    a.axes[2] = k;
    a.n_in = 2;
    a.n_out = 1;
    a.n_axes = 3;
    stream_gemm<<<(n + TILE_N - 1) / TILE_N, THREADS, smem, st>>>(a);
  };
  int algo = 0;
  auto lib = [&](int s) {
    CL(cublasLtMatmul(lt, desc, &alpha, w[s], la, x[s], lb, &beta, y[s], lc, y[s], lc, &res[algo].algo, ws,
                      res[algo].workspaceSize, st));
  };
  auto readw = [&](int s) {
    read_only<<<sms * 8, 512, 0, st>>>(static_cast<const uint4*>(w[s]), size_t(n) * k * 2 / 16, sink);
  };
  auto check = [&](auto&& fn) {
    CK(cudaMemset(y[0], 0xff, size_t(m) * n * 2));
    fn(0);
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<unsigned short> hy(size_t(m) * n);
    CK(cudaMemcpy(hy.data(), y[0], hy.size() * 2, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < hy.size(); ++i) {
      const double e = std::abs(bf2f(hy[i]) - ref[i]) / (0.01 + 0.016 * std::abs(ref[i]));
      worst = std::max(worst, std::isnan(e) ? 1e9 : e);
    }
    return worst;
  };
  auto time = [&](auto&& fn) {
    std::vector<cudaEvent_t> a(reps), b(reps);
    for (int i = 0; i < reps; ++i) {
      CK(cudaEventCreate(&a[i]));
      CK(cudaEventCreate(&b[i]));
    }
    auto flush = [&] { read_flush<<<sms * 4, 512, 0, st>>>(static_cast<const uint4*>(fl), fbytes / 16, sink); };
    for (int i = 0; i < warm; ++i) {
      flush();
      fn(i % sets);
    }
    for (int i = 0; i < reps; ++i) {
      flush();
      CK(cudaEventRecord(a[i], st));
      fn(i % sets);
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
  };
  const double err = check(family);
  const double tf = time(family);
  double tdef = 0, tbest = 1e30;
  int best = 0;
  for (algo = 0; algo < got; ++algo) {
    if (check(lib) > 1) continue;
    const double t = time(lib);
    if (algo == 0) tdef = t;
    if (t < tbest) tbest = t, best = algo;
  }
  const double tr = time(readw);
  std::printf("m=%-5d n=%-5d k=%-5d TILE_N=%d THREADS=%d UNROLL=%d TILE_M=%d PF=%d  stream %7.2fus  cublasLt default %7.2fus  "
              "best-of-%d %7.2fus (#%d)  read-w %7.2fus  speedup vs default %.3fx  err/tol %.3f %s\n",
              m, n, k, TILE_N, THREADS, UNROLL, TILE_M, PREFETCH_L2, tf, tdef, got, tbest, best, tr, tdef / tf, err,
              err <= 1 ? "ok" : "FAIL");
  std::fflush(stdout);
  for (int s = 0; s < sets; ++s) {
    CK(cudaFree(x[s]));
    CK(cudaFree(w[s]));
    CK(cudaFree(y[s]));
  }
  CK(cudaFree(fl));
  CK(cudaFree(sink));
  CK(cudaFree(ws));
  CK(cudaStreamDestroy(st));
  CL(cublasLtDestroy(lt));
}

int main(int argc, char** argv) {
  for (int i = 1; i + 2 < argc; i += 3) probe(std::atoi(argv[i]), std::atoi(argv[i + 1]), std::atoi(argv[i + 2]));
  return 0;
}
