#pragma once
// CUPTI's activity API, loaded with dlopen (libcupti.so.13, libcupti.so, then the toolkit's
// lib64, extras/CUPTI/lib64 and targets/x86_64-linux/lib); never linked, so every binary starts
// where libcupti is missing. Every failure is a Status naming the CUPTI call and
// cuptiGetResultString's text. The CUDA worker times with it where it works and falls back to
// CUDA events, recording why, where it does not (cuda/cupti_spans.h holds the decisions).
//
// What is enabled: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (not KIND_KERNEL, which serializes
// kernels), MEMSET and MEMCPY (GPU work a library may issue inside a matmul), DRIVER (the API
// records that external-correlation records attach to) and EXTERNAL_CORRELATION. Buffers are
// 8 MiB, handed to CUPTI by a static buffer-requested callback; CUPTI's thread hands them back
// through a static buffer-completed callback into a process-wide queue under a mutex, and
// collect() decodes and frees them on the caller's thread.
#include <cstdint>
#include <string>

#include "base/status.h"
#include "cuda/cupti_spans.h"

namespace arc::cuda {

class ActivityTracer {
 public:
  // The process's tracer, started by the first call: loads libcupti, registers the buffer
  // callbacks and enables the activity kinds above. Call it before the CUDA context is created
  // (after cuInit). kUnavailable with the reason (libcupti missing, a CUPTI refusal such as
  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES or another profiler holding CUPTI), the same on every
  // later call. Never destroyed: CUPTI may deliver buffers until the process ends.
  static Result<ActivityTracer*> instance();

  ActivityTracer(const ActivityTracer&) = delete;
  ActivityTracer& operator=(const ActivityTracer&) = delete;

  // Turns the activity kinds off (`false`) or on again. A worker told to time with CUDA
  // events alone leaves CUPTI's kernel instrumentation out of the measurement.
  Status set_enabled(bool enabled);
  bool enabled() const { return enabled_; }

  // cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) on the
  // calling thread; pop() checks that the id popped is the one pushed.
  Status push(uint64_t external_id);
  Status pop(uint64_t external_id);

  // cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), then decodes and frees every
  // buffer delivered since the last call: GPU activities, external correlations of kind
  // CUSTOM0, and the dropped-record count. The caller synchronizes its streams first.
  Result<ActivityRecords> collect();

  // "libcupti.so.13 (CUPTI API 130001)".
  const std::string& library() const { return library_; }

 private:
  ActivityTracer() = default;
  std::string library_;
  bool enabled_ = false;
};

}  // namespace arc::cuda
