// Host peaks for the SOL bound (eval/worker.h, measure_peaks): upper bounds measured on every
// hardware thread at once.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "eval/worker.h"

namespace arc::eval {
namespace {

using Clock = std::chrono::steady_clock;

using V16 = float __attribute__((vector_size(64)));
using V8 = float __attribute__((vector_size(32)));
using V4 = float __attribute__((vector_size(16)));

// Independent multiply-add chains: enough of them to cover the FMA latency on every port.
// Returns the sum so the compiler cannot drop the work.
// TARGET is a string and VEC a type: neither can take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ARC_MULADD_LOOP(NAME, TARGET, VEC, CHAINS)                                       \
  __attribute__((target(TARGET), noinline)) double NAME(long iters) {                    \
    VEC acc[CHAINS];                                                                     \
    _Pragma("GCC unroll 32") for (int k = 0; k < CHAINS; ++k) acc[k] =                   \
        VEC{} + static_cast<float>(k + 1) * 1e-3f;                                       \
    const VEC m = VEC{} + 0.999999f;                                                     \
    const VEC a = VEC{} + 1e-7f;                                                         \
    for (long i = 0; i < iters; ++i) {                                                   \
      _Pragma("GCC unroll 32") for (int k = 0; k < CHAINS; ++k) acc[k] = acc[k] * m + a; \
    }                                                                                    \
    VEC s = acc[0];                                                                      \
    _Pragma("GCC unroll 32") for (int k = 1; k < CHAINS; ++k) s += acc[k];               \
    double r = 0;                                                                        \
    for (size_t l = 0; l < sizeof(VEC) / sizeof(float); ++l) r += s[l];                  \
    return r;                                                                            \
  }

// NOLINTEND(bugprone-macro-parentheses)

ARC_MULADD_LOOP(muladd_avx512, "avx512f", V16, 16)
ARC_MULADD_LOOP(muladd_avx2, "avx2,fma", V8, 12)
ARC_MULADD_LOOP(muladd_sse, "sse2", V4, 12)

struct ComputeKernel {
  const char* name;
  double (*fn)(long);
  int lanes, chains;
  bool available;
};

struct ThreadPeaks {
  double bandwidth = 0, flops = 0;
  const char* isa = "";
};

constexpr int kTrials = 20;
volatile double g_sink;

ThreadPeaks measure_thread_peaks() {
  ThreadPeaks best;
  for (size_t bytes : {size_t{16} << 10, size_t{128} << 10}) {
    void* src = std::aligned_alloc(64, bytes);
    void* dst = std::aligned_alloc(64, bytes);
    if (src != nullptr && dst != nullptr) {
      std::memset(src, 1, bytes);
      std::memset(dst, 2, bytes);
      const int reps = static_cast<int>((size_t{128} << 20) / bytes);
      for (int t = 0; t < kTrials; ++t) {
        auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) {
          std::memcpy(dst, src, bytes);
          asm volatile("" : : "r"(dst), "r"(src) : "memory");
        }
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (s > 0)
          best.bandwidth = std::max(best.bandwidth, 2.0 * static_cast<double>(bytes) * reps / s);
      }
    }
    std::free(src);
    std::free(dst);
  }
  __builtin_cpu_init();
  const ComputeKernel kernels[] = {
      {"avx512f", muladd_avx512, 16, 16, __builtin_cpu_supports("avx512f") != 0},
      {"avx2+fma", muladd_avx2, 8, 12,
       __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0},
      {"sse2", muladd_sse, 4, 12, true},
  };
  constexpr long kIters = 300000;
  for (const auto& k : kernels) {
    if (!k.available) continue;
    for (int t = 0; t < kTrials; ++t) {
      auto t0 = Clock::now();
      g_sink = k.fn(kIters);
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      double rate = 2.0 * k.lanes * k.chains * static_cast<double>(kIters) / s;
      if (s > 0 && rate > best.flops) {
        best.flops = rate;
        best.isa = k.name;
      }
    }
  }
  return best;
}

}  // namespace

Peaks measure_peaks() {
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<ThreadPeaks> per(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  try {
    for (unsigned i = 1; i < n; ++i) {
      threads.emplace_back([&per, i] { per[i] = measure_thread_peaks(); });
    }
  } catch (const std::exception&) {
    // Fewer threads than cores: the sum covers only those measured, and says so below.
  }
  per[0] = measure_thread_peaks();
  for (auto& t : threads) t.join();
  per.resize(threads.size() + 1);
  Peaks p;
  const char* isa = per[0].isa;
  for (const auto& t : per) {
    p.bandwidth_bytes_per_s += t.bandwidth;
    p.flops_per_s += t.flops;
  }
  p.method = "host upper bounds, best of " + std::to_string(kTrials) + " trials on each of " +
             std::to_string(per.size()) +
             " threads at once, summed; bandwidth: memcpy between in-cache buffers of 16 KiB "
             "and 128 KiB, bytes read + written; compute: independent float multiply-add "
             "chains (GCC vector extensions, best ISA " +
             std::string(isa) + "), a multiply-add counting 2 flops";
  return p;
}

}  // namespace arc::eval
