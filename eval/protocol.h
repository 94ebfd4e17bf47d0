#pragma once
// Framed messages between the host evaluator and its worker process (arc-eval --worker): a
// 4-byte little-endian payload length, then that many bytes of JSON text. Frames larger than
// kMaxMessageBytes are refused on both sides, so a corrupt length can never make a reader
// allocate gigabytes. Reads and writes take a deadline (poll), so a hung peer is noticed.
// Failures are Status values:
//   kUnavailable  the stream ended cleanly between frames (the peer closed or died)
//   kCorruption   a truncated frame, an oversized length, or a payload that is not JSON
//   kTimeout      the deadline passed
//   kIoError      read/write/poll failed
// The message vocabulary is documented in eval/worker.h.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>  // Result<json> needs the complete type

#include "base/status.h"

namespace arc::eval {

using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();
inline constexpr uint32_t kMaxMessageBytes = 64u << 20;

// now + seconds; a non-finite or huge value gives kNoDeadline.
Deadline deadline_after(double seconds);

// Writes one frame. SIGPIPE is suppressed for the calling thread: a dead reader is an error
// (kUnavailable), not a signal that kills the writer.
Status write_frame(int fd, std::string_view payload, Deadline deadline = kNoDeadline);
Result<std::string> read_frame(int fd, Deadline deadline = kNoDeadline);

Status write_message(int fd, const nlohmann::json& message, Deadline deadline = kNoDeadline);

// What every "evaluate" request carries, host or cuda (eval/worker.h).
struct EvaluateSettings {
  uint64_t input_seed = 0;
  uint32_t rounds = 5, warmup = 10, repetitions = 50, buffer_sets = 3;
  bool flush_cache = true;
  std::string timing = "auto";  // "auto" | "cuda_events" | "cupti" (EvalSettings::timing)
  double atol = 1e-5, rtol = 1e-4, matched_ratio = 1.0;
  double peak_bandwidth = 0, peak_flops = 0;  // 0: no SOL check
};
// Throws nlohmann::json::exception on a malformed request.
EvaluateSettings parse_evaluate_settings(const nlohmann::json& j);

// JSON has no Inf or NaN: those travel as the strings "inf", "-inf" and "nan".
nlohmann::json json_number(double v);
Result<nlohmann::json> read_message(int fd, Deadline deadline = kNoDeadline);

}  // namespace arc::eval
