#pragma once
// The worker's own kernels, compiled by NVRTC when a GPU worker starts (and cached like any
// other source):
//   arc_fill     inputs from a counter-based hash of (seed, element): uniform in [low, high],
//                or normal (Irwin-Hall: the sum of 12 uniforms - 6, times the stddev), rounded
//                to the tensor's dtype (fp8: to nearest even, saturated to the largest finite
//                value). Any grid gives the same values.
//   arc_compare  an output (f32, bf16, f16, fp8) against the reference's double output: elements
//                within atol + rtol * |ref|, NaN, Inf, non-zeros on both sides, non-finite
//                reference values, the largest |error| and the first element out of tolerance.
//   arc_digest   an order-independent 64-bit digest of a buffer (catches writes to inputs).
//   arc_copy     16-byte copy, for the copy-bandwidth peak.
//   arc_flush    a read of a buffer twice the L2's size: the L2 flush before each timed run.
// Dtype codes: 0 f32, 1 bf16, 2 f16, 3 f64, 4 fp8_e4m3, 5 fp8_e5m2.
namespace arc::cuda {

enum RuntimeDtype : int { kF32 = 0, kBF16 = 1, kF16 = 2, kF64 = 3, kFP8E4M3 = 4, kFP8E5M2 = 5 };

// Counters arc_compare accumulates (unsigned long long each, zeroed before the launch except
// the two "first" indices and the worst error, which start as noted).
enum CompareCounter : int {
  kMatched = 0,
  kNaN = 1,
  kInf = 2,
  kOutNonzero = 3,
  kRefNonzero = 4,
  kRefNonfinite = 5,
  kMaxErrorBits = 6,  // bits of the largest |error| as a double (non-negative: ordered as u64)
  kFirstBad = 7,      // smallest index out of tolerance (or NaN/Inf); starts at ~0
  kFirstNaN = 8,      // smallest NaN/Inf index; starts at ~0
  kCompareCounters = 9,
};

const char* runtime_kernels_source();

}  // namespace arc::cuda
