// Times an exported cuBLASLt GEMM launcher (arcd export --format cuda) against cuBLASLt's
// default in one process: the heuristic's first algorithm, with its descriptors, layouts and
// workspace made before anything is timed. Built by tests/replay/export_speed_test.cc with
//   nvcc -std=c++17 -arch=sm_90a -I<export> -DARC_EXPORT=<name> -DARC_EXPORT_HEADER='"<name>.h"'
//        export_gemm_bench.cu <name>.cu -lcublasLt
// The export must be a problem whose axes are (m, n, k) and whose tensors are A [m, k],
// B [n, k] (and C [m, n], updated in place: D aliases C), D [m, n], bf16 (gemm_bf16,
// attn_out_proj_bf16).
//
//   bench PROBLEM ATOL RTOL REPS WORKLOAD M N K [WORKLOAD M N K ...]
//
// Per shape: correctness first (the export, with the caller's workspace and with none, against
// the default on the same inputs, every element within ATOL + RTOL * |default|), then REPS
// repetitions of each, interleaved (default, export, default, export, ...), each timed alone by
// CUDA events with L2 flushed (a memset of twice its size) before it; the medians and their
// ratio are printed as a Markdown table row. Exit 0: every shape correct; 1: a mismatch or a
// failed call (named); 77: no CUDA device.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include ARC_EXPORT_HEADER

#define ARC_CAT2(a, b) a##b
#define ARC_CAT(a, b) ARC_CAT2(a, b)
#define ARC_FN(suffix) ARC_CAT(ARC_EXPORT, suffix)

namespace {

[[noreturn]] void die(const std::string& what) {
  std::printf("FAILED: %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) die(std::string(call) + ": " + cudaGetErrorString(e));
}
void check_lt(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) die(std::string(call) + ": " + cublasLtGetStatusName(s));
}
#define CUDA(call) check_cuda((call), #call)
#define LT(call) check_lt((call), #call)

__global__ void fill(__nv_bfloat16* p, size_t n, float lo, float hi, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed * 2246822519u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    p[i] = __float2bfloat16(lo + (hi - lo) * (h >> 8) * (1.0f / 16777216.0f));
  }
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes > 0) CUDA(cudaMalloc(&p, bytes));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// cuBLASLt's default for D = A B^T (+ C): the heuristic's first algorithm with the workspace
// the campaign allowed (64 MiB), set up once.
struct Default {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;
  Default(cublasLtHandle_t h, long long m, long long n, long long k) : handle(h) {
    LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn));
    LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, n, k));
    LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref = nullptr;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t max_ws = uint64_t(64) << 20;
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &max_ws, sizeof max_ws));
    cublasLtMatmulHeuristicResult_t r[1] = {};
    int returned = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, 1, r, &returned));
    LT(cublasLtMatmulPreferenceDestroy(pref));
    if (returned == 0) die("cublasLtMatmulAlgoGetHeuristic: no algorithm");
    algo = r[0].algo;
    workspace = r[0].workspaceSize;
  }
  ~Default() {
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(desc);
  }
  void run(const void* a, const void* b, const void* c, void* d, void* ws, cudaStream_t s) const {
    const float alpha = 1.0f, beta = c != nullptr ? 1.0f : 0.0f;
    LT(cublasLtMatmul(handle, desc, &alpha, b, la, a, lb, &beta, c != nullptr ? c : d, ld, d, ld,
                      &algo, ws, workspace, s));
  }
};

std::vector<float> to_host(const void* d, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  CUDA(cudaMemcpy(h.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// Every element of `got` within atol + rtol * |want|; else names the worst.
bool matches(const std::vector<float>& got, const std::vector<float>& want, double atol,
             double rtol, const std::string& what) {
  size_t bad = 0, worst = 0;
  double worst_err = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    if (!(err <= atol + rtol * std::fabs(double(want[i])))) ++bad;
    if (!(err <= worst_err)) {
      worst_err = err;
      worst = i;
    }
  }
  if (bad == 0) return true;
  std::printf("MISMATCH %s: %zu of %zu elements out of tolerance; worst at %zu: %g vs %g\n",
              what.c_str(), bad, got.size(), worst, got[worst], want[worst]);
  return false;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 9 || (argc - 5) % 4 != 0) {
    std::printf("usage: %s PROBLEM ATOL RTOL REPS WORKLOAD M N K [...]\n", argv[0]);
    return 1;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  const std::string problem = argv[1];
  const double atol = std::atof(argv[2]), rtol = std::atof(argv[3]);
  const int reps = std::max(1, std::atoi(argv[4]));
  const bool has_c = ARC_CAT(ARC_EXPORT, _NUM_INPUTS) == 3;
  cudaDeviceProp prop;
  CUDA(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasLtHandle_t handle = nullptr;
  LT(cublasLtCreate(&handle));
  // L2 flush: a memset of twice the L2 before every timed repetition.
  const size_t flush_bytes = 2 * size_t(std::max(prop.l2CacheSize, 1 << 20));
  DeviceBuffer flush(flush_bytes);

  std::printf("%s on %s (sm_%d%d), cuBLASLt %zu: medians of %d repetitions, interleaved, L2 "
              "flushed before each; default = the heuristic's first algorithm, set up outside the "
              "timed region\n\n",
              problem.c_str(), prop.name, prop.major, prop.minor, cublasLtGetVersion(), reps);
  std::printf("| problem | workload | m x n x k | cuBLASLt default (us) | export (us) | "
              "default / export |\n|---|---|---|---:|---:|---:|\n");
  std::vector<std::string> plans;
  double worst_ratio = 1e30;
  bool all_correct = true;
  for (int arg = 5; arg + 3 < argc; arg += 4) {
    const std::string workload = argv[arg];
    const long long m = std::atoll(argv[arg + 1]), n = std::atoll(argv[arg + 2]),
                    k = std::atoll(argv[arg + 3]);
    const long long axes[3] = {m, n, k};
    DeviceBuffer a(size_t(m * k) * 2), b(size_t(n * k) * 2), c(has_c ? size_t(m * n) * 2 : 0);
    DeviceBuffer d_default(size_t(m * n) * 2), d_export(size_t(m * n) * 2);
    fill<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(a.p), size_t(m * k), -1.f, 1.f, 1);
    fill<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(b.p), size_t(n * k), -0.0625f,
                                   0.0625f, 2);
    if (has_c) {
      fill<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(c.p), size_t(m * n), -1.f, 1.f,
                                     3);
    }
    CUDA(cudaGetLastError());
    const Default def(handle, m, n, k);
    DeviceBuffer ws_default(def.workspace);
    const size_t export_ws = ARC_FN(_workspace_bytes)(axes);
    DeviceBuffer ws_export(export_ws);
    const void* inputs_export[3] = {a.p, b.p, d_export.p};
    void* out_export[1] = {d_export.p};
    // D = C + A B^T in place (D aliases C) when there is a C; D = A B^T otherwise.
    auto reset = [&]() {
      if (!has_c) return;
      CUDA(cudaMemcpyAsync(d_default.p, c.p, size_t(m * n) * 2, cudaMemcpyDeviceToDevice, stream));
      CUDA(cudaMemcpyAsync(d_export.p, c.p, size_t(m * n) * 2, cudaMemcpyDeviceToDevice, stream));
    };
    auto run_default = [&]() {
      def.run(a.p, b.p, has_c ? d_default.p : nullptr, d_default.p, ws_default.p, stream);
    };
    auto run_export = [&](void* ws) {
      if (ARC_FN(_launch)(inputs_export, out_export, axes, ws, stream) != cudaSuccess) {
        die(workload + ": " + ARC_CAT(ARC_EXPORT, _last_error)());
      }
    };

    // Correctness: the caller's workspace, then none (the launcher's own).
    bool correct = true;
    for (int own = 0; own < 2; ++own) {
      reset();
      run_default();
      run_export(own ? nullptr : ws_export.p);
      CUDA(cudaStreamSynchronize(stream));
      correct &= matches(to_host(d_export.p, size_t(m * n)), to_host(d_default.p, size_t(m * n)),
                         atol, rtol,
                         workload + (own ? " (the launcher's workspace)" : " (caller's workspace)"));
    }
    all_correct &= correct;
    plans.push_back(workload + ": " + ARC_FN(_plan)(axes));

    // Timing: warm-ups, then interleaved repetitions, each alone between its events.
    for (int i = 0; i < 5; ++i) {
      run_default();
      run_export(ws_export.p);
    }
    std::vector<cudaEvent_t> ev(4 * size_t(reps));
    for (auto& e : ev) CUDA(cudaEventCreate(&e));
    for (int r = 0; r < reps; ++r) {
      for (int side = 0; side < 2; ++side) {
        CUDA(cudaMemsetAsync(flush.p, r & 0xff, flush_bytes, stream));
        CUDA(cudaEventRecord(ev[4 * r + 2 * side], stream));
        if (side == 0) {
          run_default();
        } else {
          run_export(ws_export.p);
        }
        CUDA(cudaEventRecord(ev[4 * r + 2 * side + 1], stream));
      }
    }
    CUDA(cudaStreamSynchronize(stream));
    std::vector<double> t_default, t_export;
    for (int r = 0; r < reps; ++r) {
      float ms = 0;
      CUDA(cudaEventElapsedTime(&ms, ev[4 * r], ev[4 * r + 1]));
      t_default.push_back(1e3 * ms);
      CUDA(cudaEventElapsedTime(&ms, ev[4 * r + 2], ev[4 * r + 3]));
      t_export.push_back(1e3 * ms);
    }
    for (auto& e : ev) CUDA(cudaEventDestroy(e));
    const double md = median(t_default), me = median(t_export), ratio = md / me;
    worst_ratio = std::min(worst_ratio, ratio);
    std::printf("| %s | %s | %lldx%lldx%lld | %.1f | %.1f | %.3fx%s |\n", problem.c_str(),
                workload.c_str(), m, n, k, md, me, ratio, correct ? "" : " (WRONG)");
  }
  std::printf("\nlowest default / export: %.3fx (the figure to reach: >= 0.97x)\n", worst_ratio);
  for (const auto& p : plans) std::printf("plan %s\n", p.c_str());
  cublasLtDestroy(handle);
  cudaStreamDestroy(stream);
  return all_correct ? 0 : 1;
}
