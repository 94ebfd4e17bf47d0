#pragma once
// Per-repetition GPU spans from CUPTI activity records: the decision logic of the CUDA worker's
// CUPTI timing, with no CUDA in it (cuda/cupti.h collects and decodes the records).
//
// Attribution is by external correlation, never by kernel name (a candidate may name its
// kernels anything). The worker pushes the external id first_external_id + i around exactly
// the candidate's launches of timed repetition i; CUPTI then emits an external-correlation
// record (correlation id -> external id) for every driver call made inside that region, and
// each GPU activity (kernel, memset, memcpy) a call started carries the call's correlation id.
// An activity whose correlation id maps to no repetition (correctness rounds, warm-ups, the
// worker's own fills, poisons and L2 flushes, earlier workloads) is ignored.
#include <cstdint>
#include <string>
#include <vector>

namespace arc::cuda {

// One GPU activity: a kernel (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), a memset or a memcpy.
struct GpuActivity {
  uint32_t correlation_id = 0;
  std::string name;       // the kernel's name as CUPTI reports it; "memset" / "memcpy"
  uint64_t start_ns = 0;  // GPU timestamps in ns; both 0: CUPTI could not time it
  uint64_t end_ns = 0;
};

// A CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION record of the kind the worker pushes.
struct ExternalCorrelation {
  uint32_t correlation_id = 0;
  uint64_t external_id = 0;
};

// What one collection of CUPTI's buffers held, in delivery order (not time order).
struct ActivityRecords {
  std::vector<GpuActivity> activities;
  std::vector<ExternalCorrelation> correlations;
  uint64_t dropped = 0;  // records CUPTI dropped for lack of buffer space
};

// The verdict on one workload's timed repetitions.
struct RepetitionSpans {
  bool usable = false;
  std::string reason;              // why the spans cannot be used ("" when usable)
  std::vector<double> spans_ns;    // repetition i: last activity end - first activity start
  std::vector<std::string> names;  // the activities of one repetition, in start order
};

// Spans of repetitions 0..repetitions-1 (external ids first_external_id + i). Unusable, with
// the reason, when CUPTI dropped records, a correlation id is claimed by two repetitions, a
// repetition has no activity, an activity has no timestamps or ends before it starts, or the
// sequence of activity names differs between repetitions (the engine issues the same launches
// every repetition, so a difference means records are missing or foreign).
RepetitionSpans repetition_spans(const ActivityRecords& records, uint64_t first_external_id,
                                 uint32_t repetitions);

// "a, b, b" as "a; b x2" (runs of the same name counted), cut to about max_chars.
std::string describe_activities(const std::vector<std::string>& names, size_t max_chars = 600);

}  // namespace arc::cuda
