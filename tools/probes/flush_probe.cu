// L2-flush probe: skinny bf16 GEMM y[m,n] = x[m,k] w[n,k]^T timed like the worker, under several L2
// flush methods, beside cuBLASLt's default plan and a plain read of w. tools/probes/flush_probe.sh
// builds and runs it; it answers whether the worker's flush (a memset over 2 x L2, which
// leaves the L2 full of dirty lines) charges a read-bound kernel for write-backs.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "probe_common.cuh"
#include "splitk.cu"  // gemm_bf16's skinny family (problems/gpu/common/gemm), knobs as -D defines

int main(int argc, char** argv) {
  const int m = argc > 1 ? std::atoi(argv[1]) : 16;
  const int n = argc > 2 ? std::atoi(argv[2]) : 4096;
  const int k = argc > 3 ? std::atoi(argv[3]) : 4096;
  const int reps = 50, warm = 10;
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  std::vector<unsigned short> hx(size_t(m) * k), hw(size_t(n) * k);
  srand(1);
  for (auto& v : hx) v = f2bf(rand() / float(RAND_MAX) * 2 - 1);
  for (auto& v : hw) v = f2bf((rand() / float(RAND_MAX) * 2 - 1) / 16);
  const int sets = 2;
  void *x[sets], *w[sets], *y[sets];
  for (int s = 0; s < sets; ++s) {
    CK(cudaMalloc(&x[s], hx.size() * 2));
    CK(cudaMalloc(&w[s], hw.size() * 2));
    CK(cudaMalloc(&y[s], size_t(m) * n * 2));
    CK(cudaMemcpy(x[s], hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w[s], hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  }
  size_t fbytes = size_t(2) * l2;
  void *fl1, *fl2;
  unsigned* sink;
  CK(cudaMalloc(&fl1, fbytes));
  CK(cudaMalloc(&fl2, fbytes));
  CK(cudaMemset(fl2, 1, fbytes));
  CK(cudaMalloc(&sink, 64));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  LtGemm gemm(m, n, k);  // cuBLASLt's default heuristic plan, as the worker makes it

  std::vector<double> ref(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int kk = 0; kk < k; ++kk) acc += double(bf2f(hx[size_t(i) * k + kk])) * bf2f(hw[size_t(j) * k + kk]);
      ref[size_t(i) * n + j] = acc;
    }

  auto family = [&](int s) {
    skinny_direct<<<(n + TILE_N - 1) / TILE_N, THREADS, (THREADS / 32 * 16 * (TILE_N + 4) + 16 * TILE_N) * 4, st>>>(
        gemm_args(x[s], w[s], y[s], m, n, k));
  };
  auto lib = [&](int s) { gemm.run(0, x[s], w[s], y[s], st); };
  auto readw = [&](int s) {
    read_only<<<sms * 8, 512, 0, st>>>(static_cast<const uint4*>(w[s]), size_t(n) * k * 2 / 16, sink);
  };
  auto check = [&](const char* name) {
    std::vector<unsigned short> hy(size_t(m) * n);
    CK(cudaMemcpy(hy.data(), y[0], hy.size() * 2, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < hy.size(); ++i)
      worst = std::max(worst, std::abs(bf2f(hy[i]) - ref[i]) / (0.01 + 0.016 * std::abs(ref[i])));
    std::printf("  check %-10s worst error / tolerance = %.3f %s\n", name, worst, worst <= 1 ? "ok" : "FAIL");
  };
  const char* flush_names[] = {"none", "memset", "read", "memset+read"};
  auto flush = [&](int mode) {
    if (mode == 1 || mode == 3) CK(cudaMemsetAsync(fl1, mode, fbytes, st));
    if (mode == 2 || mode == 3) read_flush<<<sms * 4, 512, 0, st>>>(static_cast<const uint4*>(fl2), fbytes / 16, sink);
  };
  auto time = [&](auto&& fn, int mode) {
    return median_event_us(st, warm, reps, sets, [&] { flush(mode); }, fn);
  };
  CK(cudaMemset(y[0], 0xff, size_t(m) * n * 2));
  lib(0);
  CK(cudaStreamSynchronize(st));
  check("cublaslt");
  CK(cudaMemset(y[0], 0xff, size_t(m) * n * 2));
  family(0);
  CK(cudaStreamSynchronize(st));
  CK(cudaGetLastError());
  check(FAMILY_NAME);
  std::printf("m=%d n=%d k=%d  L2 %d MB  W %.1f MiB  (%s)\n", m, n, k, l2 >> 20, double(n) * k * 2 / (1 << 20),
              FAMILY_NAME);
  std::printf("%-12s %10s %10s %10s %8s\n", "flush", "cublaslt", FAMILY_NAME, "read W", "ratio");
  for (int mode = 0; mode < 4; ++mode) {
    double tl = time(lib, mode), tf = time(family, mode), tr = time(readw, mode);
    std::printf("%-12s %8.2fus %8.2fus %8.2fus %7.3fx\n", flush_names[mode], tl, tf, tr, tl / tf);
  }
  return 0;
}
