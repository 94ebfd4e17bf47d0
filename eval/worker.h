#pragma once
// The evaluation worker: the loop `arc-eval --worker --in FD --out FD [--memory-mb N]` runs.
// It loads compiled candidates into its own process, so that whatever a candidate does (crash,
// hang, exhaust memory, print gigabytes) costs a worker, never the engine; the parent
// (eval/host_evaluator.h) restarts it.
//
// Messages (eval/protocol.h frames, JSON objects keyed by "op"):
//   worker -> parent  {"op":"ready","pid":N,"memory_limit_mb":M}           once, at start
//   parent -> worker  {"op":"peaks"}
//   worker -> parent  {"op":"peaks","bandwidth_bytes_per_s":B,"flops_per_s":F,"method":"..."}
//   parent -> worker  {"op":"evaluate","input_seed":S,"rounds":R,"warmup":W,"repetitions":N,
//                      "buffer_sets":K,"flush_cache":bool,"timing":"auto"|"cuda_events"|"cupti",
//                      "tolerance":{"atol","rtol","matched_ratio"},
//                      "peak_bandwidth_bytes_per_s":B,"peak_flops_per_s":F,   (0: no SOL check)
//                      "reference":"<ref .so>",
//                      "workloads":[{"name","index","object":"<.so>","axes":[int...],
//                                    "flops","bytes",
//                                    "inputs":[{"name","elements","init","low","high"}],
//                                    "outputs":[{"name","elements"}]}]}
//   worker -> parent  {"op":"progress","workload":i,"name":"...","phase":"correctness"|"timing"}
//                     before each workload and phase, so a parent whose worker dies knows where
//   worker -> parent  {"op":"workload","index":i,"result":{...}}  after each workload run (the
//                     same entry the result carries), so earlier results survive a later crash
//   worker -> parent  {"op":"result","workloads":[{"workload","status":"OK"|...,"error",
//                      "samples_ns":[...],"median_ns","p25_ns","p75_ns","min_ns","spread",
//                      "sol_ns","method","max_abs_error","matched_ratio","rounds"}],
//                      "exiting":bool}   exiting: the worker is no longer trustworthy (a
//                      candidate leaked memory up to the limit, or left a thread running)
//                      and exits after this reply
//   worker -> parent  {"op":"error","error":"..."}        a request it could not understand
//   parent -> worker  {"op":"shutdown"}                    the worker exits 0 (so does EOF)
//   worker -> parent  {"op":"fatal","signal":N,"address":A,"vm_size_kb":K,"vm_peak_kb":P}
//                     written from a signal handler just before the worker dies of SIGSEGV,
//                     SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP or SIGSYS
//
// Per workload, in problem order (the first failure makes the rest NOT_RUN):
//   load: dlopen the object, dlsym arc_kernel (eval/host_abi.h); failure -> LOAD_ERROR.
//   correctness: R rounds; inputs from derive_seed(input_seed, workload index, round) through
//     xoshiro256** (uniform low..high, or normal: mean 0, stddev `high`, as the sum of 12
//     uniforms - 6, which needs no libm and so is bit-identical on every machine); outputs
//     poisoned with NaN before every run; the reference (arc_reference) runs in double on the
//     same values. Pass iff no NaN/Inf, no output tensor all zero where the reference is not,
//     and the fraction within atol + rtol*|ref| >= matched_ratio. -> WRONG_RESULT.
//   timing: K buffer sets (separately allocated; inputs from stream 0x10000 + set), W warm-up
//     runs, then N timed runs rotating the sets; every use of a set moves its tensors to a new
//     address (64 bytes further into their allocations), so a cache keyed by address never
//     hits; before each run, outputs poisoned and, with flush_cache, a buffer of
//     min(2 x LLC, 64 MiB) written line by line (regular stores: a non-temporal memset would
//     not evict). Samples by steady_clock around the call.
//   the reference's outputs sit in pages of their own, mapped PROT_NONE while candidate code
//     runs, so a candidate searching its address space for the answer finds none.
//   re-check: the output of every timed run must match the reference for its set's inputs
//     -> STALE_OUTPUT (catches work skipped or replayed after the first calls).
//   threads: counted right after every call; a kernel that leaves threads running after it
//     returns -> WRONG_RESULT (work could escape the timed region), and the worker exits after
//     its reply.
//   SOL: sol_ns = max(flops / peak_flops, bytes / peak_bandwidth) * 1e9; median < sol_ns ->
//     IMPOSSIBLE.
//   std::bad_alloc from a kernel -> OUT_OF_MEMORY; other exceptions -> CRASH; a non-zero
//     return code -> WRONG_RESULT naming the code.
#include <cstdint>
#include <string>
#include <vector>

namespace arc::eval {

// Whether this build runs under AddressSanitizer: its workers then have no RLIMIT_AS.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

struct WorkerOptions {
  int in_fd = -1;                // requests arrive here
  int out_fd = -1;               // replies go here
  uint64_t memory_limit_mb = 0;  // RLIMIT_AS (soft and hard) of the worker; 0 = unchanged;
                                 // ignored under AddressSanitizer (kAddressSanitizer)
  std::string backend = "host";  // "host" | "cuda" (eval/cuda_worker.h)
  std::string cache_dir;         // cuda: where the runtime kernels' cubin is cached
};

// Serves requests until the input closes or "shutdown"; returns the process exit status.
// Redirects the process's stdin/stdout/stderr to /dev/null first.
int run_worker(const WorkerOptions& options);

struct Peaks {
  double bandwidth_bytes_per_s = 0;
  double flops_per_s = 0;
  std::string method;
};
// Host peaks as UPPER bounds for the SOL check: best of several trials, on every hardware
// thread at once, summed. Bandwidth: memcpy between in-cache buffers, bytes read + written.
// Compute: unrolled independent float multiply-add chains (GCC vector extensions) in the widest
// ISA the CPU has (AVX-512, AVX2+FMA, SSE), an FMA or a mul+add counting 2 flops.
Peaks measure_peaks();

struct SampleStats {
  double median = 0, p25 = 0, p75 = 0, min = 0;
  double spread = 0;  // (p75 - p25) / median; 0 when the median is 0
};
// Quantiles by linear interpolation between order statistics (numpy's default).
SampleStats summarize_samples(std::vector<double> samples);

// Seed of one input stream: streams 0..R-1 are correctness rounds, 0x10000 + k timing set k.
uint64_t derive_seed(uint64_t input_seed, uint64_t workload_index, uint64_t stream);

}  // namespace arc::eval
