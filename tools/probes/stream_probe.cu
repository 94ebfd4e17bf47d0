// Skinny-GEMM probe: gemm_bf16's stream family (problems/gpu/common/gemm/families/stream.cu,
// knobs and ARC_RESIDUAL=0 as -D defines) beside cuBLASLt's default plan and the best of its
// first 8 heuristic plans, and a plain read of w, timed like the worker: CUDA events around each
// run, the L2 flushed before every run by a read over 2 x L2, two buffer sets, medians of 50 runs
// after 10 warm-ups. Every kernel's output is checked against a double reference first.
// tools/probes/stream_probe.sh builds a knob sweep and runs it. Usage: stream_probe M N K [M N K ...]
#include <algorithm>
#include <cmath>
#include <vector>

#include "probe_common.cuh"
#include "stream.cu"

__global__ void reference(const unsigned short* x, const unsigned short* w, double* y, int m, int n, int k) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= n) return;
  double acc = 0;
  for (int kk = 0; kk < k; ++kk)
    acc += double(__uint_as_float(unsigned(x[size_t(i) * k + kk]) << 16)) *
           double(__uint_as_float(unsigned(w[size_t(j) * k + kk]) << 16));
  y[size_t(i) * n + j] = acc;
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

  LtGemm gemm(m, n, k);

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
    stream_gemm<<<(n + TILE_N - 1) / TILE_N, THREADS, smem, st>>>(gemm_args(x[s], w[s], y[s], m, n, k));
  };
  int algo = 0;
  auto lib = [&](int s) { gemm.run(algo, x[s], w[s], y[s], st); };
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
    auto flush = [&] { read_flush<<<sms * 4, 512, 0, st>>>(static_cast<const uint4*>(fl), fbytes / 16, sink); };
    return median_event_us(st, warm, reps, sets, flush, fn);
  };
  const double err = check(family);
  const double tf = time(family);
  double tdef = 0, tbest = 1e30;
  int best = 0;
  for (algo = 0; algo < gemm.plans; ++algo) {
    if (check(lib) > 1) continue;
    const double t = time(lib);
    if (algo == 0) tdef = t;
    if (t < tbest) tbest = t, best = algo;
  }
  const double tr = time(readw);
  std::printf("m=%-5d n=%-5d k=%-5d TILE_N=%d THREADS=%d UNROLL=%d TILE_M=%d PF=%d  stream %7.2fus  cublasLt default %7.2fus  "
              "best-of-%d %7.2fus (#%d)  read-w %7.2fus  speedup vs default %.3fx  err/tol %.3f %s\n",
              m, n, k, TILE_N, THREADS, UNROLL, TILE_M, PREFETCH_L2, tf, tdef, gemm.plans, tbest, best, tr, tdef / tf, err,
              err <= 1 ? "ok" : "FAIL");
  std::fflush(stdout);
  for (int s = 0; s < sets; ++s) {
    CK(cudaFree(x[s]));
    CK(cudaFree(w[s]));
    CK(cudaFree(y[s]));
  }
  CK(cudaFree(fl));
  CK(cudaFree(sink));
  CK(cudaStreamDestroy(st));
}

int main(int argc, char** argv) {
  for (int i = 1; i + 2 < argc; i += 3) probe(std::atoi(argv[i]), std::atoi(argv[i + 1]), std::atoi(argv[i + 2]));
  return 0;
}
