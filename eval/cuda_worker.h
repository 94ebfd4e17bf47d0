#pragma once
// The GPU worker: `arc-eval --worker --backend cuda --cache DIR` serves the protocol of
// eval/worker.h (the frame loop) and eval/measure.h (the measurement protocol, the same for
// every backend) on the first CUDA device, through a Device (eval/device.h) implemented by
// eval/cuda_device.cc on a CudaSession (eval/cuda_session.h). Its "ready" message adds
// "backend":"cuda", "device" (DeviceInfo::describe), "uuid", "arch", "pci_bus_id",
// "driver_version"; without a usable driver or device it sends {"op":"unavailable","error":"..."}
// and exits 5.
//
// Requests differ from the host's in "timing" and the workload entries (eval/cuda_evaluator.cc
// builds them):
//   {"name","index","axes","flops","bytes",
//    "inputs":[{"name","dtype","elements","init","low","high"}],
//    "outputs":[{"name","dtype","elements","alias"}],      alias: input index or -1
//    "module":"<candidate cubin>","launches":[{"kernel","grid":[x,y,z],"block":[x,y,z],"shared"}],
//    "workspace":bytes,
//    "gemm":null | {"a","b","c","d" (tensor indices; c -1: none),
//                   "a_scale","b_scale" (scalar f32 input indices; -1 or absent: none),
//                   "m","n","k","dtype" (a and b),"out_dtype" (c and d; absent: dtype),
//                   "variant","config":{HEUR,TILE,STAGES,SPLITK,REDUCTION,SWIZZLE,FAST_ACCUM}},
//    "reference_module":"<reference cubin>","reference_launches":[...]}
// (eval/cuda_request.h parses them). A "sol_margin" field, which older parents sent, is ignored:
// whether a median below the SOL bound is impossible is the guard's decision ([guard]
// sol_margin).
// The "peaks" reply is {"op":"peaks","bandwidth_bytes_per_s",
// "flops":{"bf16","f16","f32","fp8_e4m3"},
// "device","method","details":[{"key","value"}]}.
//
// What the CUDA device does at each step of the protocol (eval/measure.h), per workload:
//   bind: the cubins are loaded (kept across requests), the kernels looked up, dynamic shared
//     memory above 48 KiB enabled; a library family gets its cuBLASLt plan (a configuration
//     cuBLASLt refuses -> LOAD_ERROR with the reason). The plan or the launches are recorded in
//     the workload's details.
//   inputs: drawn on the GPU (cuda/runtime_kernels.h) from derive_seed(input_seed, workload
//     index, stream): streams 0..R-1 are correctness rounds, 0x10000 + k timing set k. An
//     aliased input is drawn into a pristine copy and restored into the live buffer before
//     every run; the reference reads the pristine copy. Non-aliased inputs are digested after
//     drawing and re-digested after runs: a change -> WRONG_RESULT.
//   correctness: R rounds; outputs poisoned with NaN (in their dtype) before every run; the
//     reference kernels run after the candidate (their outputs are NaN while it runs) and write
//     double outputs from the same inputs; arc_compare counts elements within
//     atol + rtol * |ref|, NaN/Inf, and non-zeros. -> WRONG_RESULT.
//   timing: K buffer sets (separate allocations), W warm-ups, N repetitions rotating the sets;
//     before each repetition: fresh inputs drawn into its set (stream 0x20000 + repetition),
//     aliased inputs restored, outputs poisoned, and with flush_cache a read over 2 x L2;
//     then a CUDA event, exactly the family's launches (or the cuBLASLt matmul), a CUDA event.
//     The engine issues every launch, so the set of kernels is the same every repetition.
//     Clocks (NVML) are read right after the timed runs.
//   timing method: the request's "timing" ("auto" | "cuda_events" | "cupti"). Where CUPTI
//     works (cuda/cupti.h, enabled at worker start before the context) and timing is not
//     "cuda_events", repetition i's launches run inside CUPTI external-correlation region
//     first + i (ids never reused); after the timed runs' synchronization the records are
//     flushed and each repetition's span (first activity start to last activity end, GPU
//     timestamps) becomes its sample, method "cupti_activity", with details
//     "cuda_events_median_ns" and "timed_kernels". Otherwise, or when the records are
//     unusable (cuda/cupti_spans.h), the samples are the event intervals, method
//     "cuda_events", with detail "timing_method_reason"; under "cupti" that is CRASH instead.
//     "timing":"cuda_events" switches CUPTI's activity collection off. "ready" adds "cupti":
//     the library loaded, or "unavailable: <reason>".
//   re-check (Recheck::kLastUseOfSet): each set's inputs are digested as the candidate left them
//   and drawn again from
//     its last repetition's seed (a difference -> WRONG_RESULT "wrote to its input"); then the
//     reference runs on them and the set's outputs (from that last timed run) are compared
//     -> STALE_OUTPUT (a cache keyed by address or contents serves stale outputs).
//   SOL: sol_ns = max(flops / peak_flops, bytes / peak_bandwidth) * 1e9 from the measured peaks
//     (eval/measure.h); the guard rejects a median below sol_margin x sol_ns (0.5 by default
//     for CUDA problems, actors/guard_core.h).
//   errors: an illegal address, a trap, a misaligned access (sticky errors) -> CRASH, and the
//     worker exits after its reply ("exiting": true) so a fresh one takes the next candidate;
//     cuMemAlloc out of memory -> OUT_OF_MEMORY; a refused launch (too much shared memory, too
//     many registers for the block) -> LOAD_ERROR; a hang is the parent's watchdog's (TIMEOUT).
namespace arc::eval {
// make_cuda_device (eval/device.h) is the entry point.
}  // namespace arc::eval
