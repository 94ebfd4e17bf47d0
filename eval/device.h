#pragma once
// The narrow interface between the measurement protocol (eval/measure.h), which is written once,
// and a backend that runs candidates: the host (eval/host_device.cc: shared objects called in
// this process) or a CUDA device (eval/cuda_device.cc). A device knows how to hold buffers, draw
// inputs, poison outputs, run the candidate and the reference, time repetitions and compare;
// the protocol decides what runs when, in which order, and what each failure means.
//
// Every step returns a Step: nothing when it succeeded, else a Failure whose status is a
// WorkloadStatus name (LOAD_ERROR, WRONG_RESULT, CRASH, OUT_OF_MEMORY, ...) and whose error
// names what failed. A device that can no longer be trusted (a sticky CUDA error, a thread a
// candidate left running, memory a candidate kept) says so through tainted(): the worker
// replies, then exits, and a fresh worker takes the next candidate.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "eval/protocol.h"

namespace arc::eval {

struct Failure {
  std::string status;  // a WorkloadStatus name
  std::string error;
};
using Step = std::optional<Failure>;  // nothing: the step succeeded

using Details = std::vector<std::pair<std::string, std::string>>;

// One comparison of a set's outputs with the reference's outputs for the same inputs.
struct Comparison {
  bool pass = true;
  std::string error;  // why it did not pass
  double max_abs_error = 0;
  double matched_ratio = 1;
};

// What the timed repetitions measured.
struct Timing {
  std::vector<double> samples_ns;  // one per repetition, in order
  std::string method;              // what produced them ("steady_clock", "cuda_events", ...)
  Details details;                 // added to the workload's details
};

// When the outputs of timed repetitions are compared with the reference.
enum class Recheck {
  kEveryRepetition,  // right after each repetition (the set's inputs never change in timing)
  kLastUseOfSet,     // after all repetitions, for the last repetition that used each set: the
                     // device draws fresh inputs for every repetition (timed()'s seed), so the
                     // protocol redraws the last repetition's inputs to check the inputs and
                     // rerun the reference (recheck_inputs())
};

// One workload bound to a device: the candidate and the reference loaded, ready to run.
// Buffer sets are numbered by the protocol: kCorrectnessSet, then timing sets 1..K.
class BoundWorkload {
 public:
  static constexpr size_t kCorrectnessSet = 0;
  virtual ~BoundWorkload() = default;

  // Allocates buffer set `set`, which will serve `uses` runs of the candidate. OUT_OF_MEMORY
  // names the tensor.
  virtual Step allocate(size_t set, size_t uses) = 0;
  // The protocol is done with the correctness set (a device may keep it, so that timing's
  // buffers never reuse its addresses).
  virtual void release(size_t set) = 0;
  // Draws the set's inputs from `seed`, records what they hold (to catch writes to them) and
  // readies the reference: its outputs are poisoned or already computed, but in neither case
  // readable by candidate code.
  virtual Step prepare(size_t set, uint64_t seed) = 0;
  // One run of the candidate on the set (outputs poisoned first) that is complete when this
  // returns; `when` ("in correctness round 2") ends every error message.
  virtual Step run(size_t set, const std::string& when) = 0;
  // WRONG_RESULT "... wrote to its input ..." when an input no longer holds what prepare()
  // drew.
  virtual Step check_inputs(size_t set, const std::string& when) = 0;
  // The reference's outputs for the set's current inputs (a device that computed them in
  // prepare() has nothing left to do).
  virtual Step reference(size_t set) = 0;
  // Compares the set's outputs with the reference's; a device fault is the Step.
  virtual Step compare(size_t set, Comparison* result) = 0;

  // Timing. begin_timing: a Failure when the requested timing method is unavailable.
  virtual Step begin_timing() = 0;
  virtual Step warmup(size_t set, uint32_t i) = 0;
  virtual Step end_warmup() = 0;
  // Timed repetition i on the set, with a cache flush first when the request asks for one;
  // `fresh_seed` is the repetition's own input stream (used under Recheck::kLastUseOfSet).
  virtual Step timed(size_t set, uint32_t i, uint64_t fresh_seed) = 0;
  virtual Step end_timing(Timing* timing) = 0;
  virtual Recheck recheck() const = 0;
  // kLastUseOfSet: the inputs as the candidate left them are compared with the same inputs
  // drawn again from `seed` (WRONG_RESULT "... wrote to its input ... during timing"), and the
  // set is prepared from `seed` again.
  virtual Step recheck_inputs(size_t set, uint64_t seed, uint32_t set_number) = 0;

  Details details;  // what binding chose (launches, library plan), reported with the workload
};

// A backend. One instance serves one worker process.
class Device {
 public:
  virtual ~Device() = default;
  // Opens the device; a failure is sent as {"op":"unavailable"} and the worker exits 5.
  virtual Status start() { return Status::ok(); }
  // Adds the backend's fields to the "ready" message.
  virtual void describe(nlohmann::json* ready) const = 0;
  // The whole "peaks" reply.
  virtual nlohmann::json peaks() = 0;
  // Parses the backend's part of an "evaluate" request and holds it until the next one
  // (throws nlohmann::json::exception when malformed); then begin_request().
  virtual void load_request(const nlohmann::json& request, const EvaluateSettings& settings) = 0;
  virtual void end_request() {}
  // Binds workload `position` of the loaded request; a Failure (LOAD_ERROR) when the candidate
  // or the reference cannot be loaded. `details` gets what binding chose even on failure.
  virtual std::unique_ptr<BoundWorkload> bind(size_t position, Failure* failure,
                                              Details* details) = 0;
  // Around each workload's evaluation (the host counts threads).
  virtual void begin_workload() {}
  virtual void end_workload() {}
  // Appended to "could not allocate the buffers of workload X" when std::bad_alloc escapes.
  virtual std::string memory_limit_note() const { return ""; }
  // The worker must exit after its reply.
  virtual bool tainted() const = 0;
  // The timing method a workload reports when it has no samples (a failure, NOT_RUN).
  virtual std::string method() const = 0;
};

// The backends. The host device runs shared objects in this process under a memory limit of
// memory_limit_mb (0: none; only for messages: the worker sets the limit).
std::unique_ptr<Device> make_host_device(uint64_t memory_limit_mb);
// The first CUDA device (eval/cuda_worker.h); start() says whether there is one.
std::unique_ptr<Device> make_cuda_device(const std::string& cache_dir, int ordinal = 0);

}  // namespace arc::eval
