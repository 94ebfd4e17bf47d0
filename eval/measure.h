#pragma once
// The measurement protocol, written once for every backend (DESIGN.md §6 steps 2-5). It drives
// a Device (eval/device.h) through each workload of an "evaluate" request and knows nothing of
// how requests and replies travel: the worker loop (eval/worker.h) reads them from a pipe, a
// remote worker would read them from the network, a test calls evaluate_request() directly.
//
// Per workload, in request order (the first failure makes every later one NOT_RUN, "not run:
// workload X failed"; so does a tainted device):
//   bind         the device loads the candidate and the reference -> LOAD_ERROR
//   correctness  R rounds on one buffer set, inputs from derive_seed(input_seed, workload
//                index, round): prepare (draw inputs; the reference's outputs unreadable by
//                candidate code), run the candidate (outputs poisoned first), check the inputs
//                were not written, the reference, compare -> WRONG_RESULT
//                "correctness round r: ..."
//   timing       K buffer sets (inputs from stream kTimingSetStream + k), W warm-ups and N
//                repetitions rotating the sets (repetition i on set i mod K), each repetition
//                flushed and timed by the device; repetition i's own input stream is
//                kTimedRepetitionStream + i (for devices that draw fresh inputs per repetition)
//   re-check     the outputs of timed repetitions against the reference for their inputs
//                (every repetition, or the last use of each set: Recheck) -> STALE_OUTPUT
//                "timed run i (buffer set k) does not match the reference for its inputs"
//   statistics   summarize_samples (base/stats.h) over the samples
//   SOL          sol_ns = max(flops / peak_flops, bytes / peak_bandwidth) * 1e9 from the
//                request's measured peaks (0: no bound), with the bound's reason in the details
//                ("sol_bound"). Whether a median below it is impossible is the guard's decision
//                (actors/guard_core.h, [guard] sol_margin), not the worker's.
// std::bad_alloc escaping a workload is OUT_OF_MEMORY for it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/stats.h"
#include "eval/device.h"
#include "eval/protocol.h"

namespace arc::eval {

using arc::SampleStats;
using arc::summarize_samples;

// Input streams of derive_seed: 0..R-1 are the correctness rounds.
inline constexpr uint64_t kTimingSetStream = 0x10000;        // + timing set k
inline constexpr uint64_t kTimedRepetitionStream = 0x20000;  // + timed repetition i

// Seed of one input stream of one workload (splitmix64, base/rng.h).
uint64_t derive_seed(uint64_t input_seed, uint64_t workload_index, uint64_t stream);

// The fields of a workload entry that every backend's request carries.
struct WorkloadSpec {
  std::string name;
  uint64_t index = 0;  // place in the problem (seeds), not in the request
  double flops = 0, bytes = 0;
};

// The result of one workload, as the "workload" and "result" messages carry it.
struct Outcome {
  std::string status = "OK";
  std::string error;
  std::string method;  // what produced `samples`
  std::vector<double> samples;
  SampleStats stats;
  double sol_ns = 0, max_abs_error = 0, matched_ratio = 1;
  uint32_t rounds = 0;
  Details details;
};

// Where the protocol's progress goes (a frame transport, or a test).
class Reporter {
 public:
  virtual ~Reporter() = default;
  // Before each workload's correctness and timing phases.
  virtual void progress(size_t position, const std::string& name, const char* phase) = 0;
  // After each workload that ran (not NOT_RUN), with the entry the result will carry.
  virtual void workload(size_t position, const nlohmann::json& entry) = 0;
};

struct SolBound {
  double ns = 0;    // 0: no bound (no peaks, or no cost model)
  std::string why;  // "F flops at the measured peak P flop/s" or "B bytes at ..."
};
SolBound sol_bound(double flops, double bytes, double peak_flops, double peak_bandwidth);

// Runs one bound workload through correctness, timing, re-check, statistics and SOL.
Outcome measure_workload(BoundWorkload& workload, const EvaluateSettings& settings,
                         const WorkloadSpec& spec, size_t position, Reporter& reporter,
                         Outcome outcome = {});

// Serves one "evaluate" request on `device`; returns the "result" message. Throws
// nlohmann::json::exception on a malformed request (before anything runs).
nlohmann::json evaluate_request(Device& device, const nlohmann::json& request, Reporter& reporter);

nlohmann::json outcome_json(const std::string& workload, const Outcome& outcome);

// "%.3g" and friends: the numbers in messages.
std::string format_number(double v, int digits = 3);

}  // namespace arc::eval
