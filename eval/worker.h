#pragma once
// The evaluation worker: the loop `arc-eval --worker --in FD --out FD [--memory-mb N]` runs.
// It runs compiled candidates away from the engine (the CUDA backend in its own process, the
// host backend in a child process of its own, the runner), so that whatever a candidate does
// (crash, hang, exhaust memory, print gigabytes) costs a worker or a runner, never the engine;
// the parent (eval/host_evaluator.h) restarts a worker that died.
//
// Messages (eval/protocol.h frames, JSON objects keyed by "op"):
//   worker -> parent  {"op":"ready","pid":N,"memory_limit_mb":M}           once, at start
//   parent -> worker  {"op":"peaks"}
//   worker -> parent  {"op":"peaks","bandwidth_bytes_per_s":B,"flops_per_s":F,"method":"..."}
//   parent -> worker  {"op":"evaluate","input_seed":S,"rounds":R,"warmup":W,"repetitions":N,
//                      "buffer_sets":K,"flush_cache":bool,"timing":"auto"|"cuda_events"|"cupti",
//                      "tolerance":{"atol","rtol","matched_ratio"},
//                      "peak_bandwidth_bytes_per_s":B,"peak_flops_per_s":F,   (0: no SOL bound)
//                      "reference":"<ref .so>","timeout_s":T,   (host only: the timeout)
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
//                      "sol_ns","method","max_abs_error","matched_ratio","rounds",
//                      "details":[{"key","value"}] (when there are any; "sol_bound" says which
//                      bound sol_ns is)}],
//                      "exiting":bool}   exiting: the worker is no longer trustworthy (a
//                      candidate leaked memory up to the limit, or left a thread running)
//                      and exits after this reply
//   worker -> parent  {"op":"error","error":"..."}        a request it could not understand
//   parent -> worker  {"op":"shutdown"}                    the worker exits 0 (so does EOF)
//   worker -> parent  {"op":"fatal","signal":N,"address":A,"vm_size_kb":K,"vm_peak_kb":P}
//                     written from a signal handler just before the worker dies of SIGSEGV,
//                     SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP or SIGSYS
//
// The "evaluate" request is served by the measurement protocol, written once for every backend
// (eval/measure.h: bind, correctness rounds, timing, re-check, statistics, SOL bound, the
// NOT_RUN rule); a result reports sol_ns and the statistics, and the guard decides whether a
// median below the bound is impossible (actors/guard_core.h, [guard] sol_margin). The frame
// loop above is written once too (serve_device); the backend is a Device (eval/device.h):
//
// The host backend (eval/host_device.cc), per workload:
//   runner: candidate code never runs in the worker. bind forks a runner (eval/host_runner.h)
//     before any candidate object is loaded; it dies with the worker (PR_SET_PDEATHSIG), has
//     RLIMIT_CPU = timeout x hardware threads + 10 s (the request's "timeout_s"), no core files
//     and the worker's RLIMIT_AS, holds none of the worker's descriptors, confines itself
//     (eval/candidate_confinement.h: no new processes, exec, ptrace, sockets, or signals to other
//     processes), then dlopens the object and dlsyms arc_kernel (eval/host_abi.h); failure ->
//     LOAD_ERROR. Only the buffer sets are shared (mapped MAP_SHARED before the fork). The
//     worker is not dumpable (no runner can ptrace it or open its /proc/PID/mem); a worker whose
//     runners could not confine themselves answers "unavailable".
//   inputs: from derive_seed(input_seed, workload index, stream) through xoshiro256**
//     (base/rng.h; uniform low..high, or normal: mean 0, stddev `high`, as the sum of 12
//     uniforms - 6, which needs no libm and so is bit-identical on every machine); streams
//     0..R-1 are the correctness rounds, 0x10000 + k timing set k, 0x20000 + i timed run i.
//     The reference (arc_reference) runs in the worker, in double on the same values (its own
//     copy), after the candidate ran on them, into memory no runner maps.
//   correctness: outputs poisoned with NaN before every run. Pass iff no NaN/Inf, no output
//     tensor all zero where the reference is not, and the fraction within atol + rtol*|ref| >=
//     matched_ratio. -> WRONG_RESULT. An input that no longer holds what was drawn ->
//     WRONG_RESULT "wrote to its input".
//   timing: K buffer sets, W warm-up runs, then N timed runs rotating the sets; every timed run
//     draws fresh inputs (its own stream, outside the timed region), so a cache keyed on input
//     contents never hits, and every use of a set moves its tensors to a new address (64 bytes
//     further into their room), so a cache keyed by address never hits either; before each
//     run, outputs poisoned and, with flush_cache, a buffer of min(2 x LLC, 64 MiB) written
//     line by line by the worker (regular stores: a non-temporal memset would not evict).
//     Samples by the worker's steady_clock from its "go" to the runner's "done" on a shared
//     control page (method "steady_clock"), extended to when the runner is seen blocked again
//     if it was not; CPU time the runner used between runs (it should be blocked) ->
//     WRONG_RESULT.
//   re-check (Recheck::kLastUseOfSet): the output of each set's last timed run must match the
//     reference for that run's inputs -> STALE_OUTPUT (catches work skipped or replayed after
//     the first calls); inputs changed by then -> WRONG_RESULT "... during timing".
//   threads: the runner's, read after every call; a kernel that leaves threads running after it
//     returns -> WRONG_RESULT (work could escape the timed region).
//   std::bad_alloc from a kernel -> OUT_OF_MEMORY; other exceptions -> CRASH; a non-zero
//     return code -> WRONG_RESULT naming the code. The runner's death -> CRASH "the candidate's
//     process was killed by signal N (NAME)" (or "exited with status N"), TIMEOUT when it used
//     up its CPU limit, OUT_OF_MEMORY when SIGKILLed or crashed with its address space at the
//     limit. After any of these the runner is discarded; the worker is never tainted by a host
//     candidate and replies "exiting": false.
// The CUDA backend: eval/cuda_worker.h.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/measure.h"  // derive_seed, summarize_samples

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
  int device = 0;                // cuda: the device ordinal it measures on
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

// Where the fatal-signal report ("fatal" above) of this process goes from now on: a process
// forked from the worker (the host backend's runner, eval/host_runner.h) reports to its parent
// instead of on the worker's reply pipe.
void report_fatal_signals_to(int fd);

// The frame loop: sends "ready" (with device->describe()), then answers "peaks", "evaluate"
// (eval/measure.h) and "shutdown" until EOF; returns the process exit status. Exits right after
// a reply when the device is tainted.
int serve_device(Device& device, int in_fd, int out_fd);

}  // namespace arc::eval
