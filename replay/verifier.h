#pragma once
// arc-replay verify (DESIGN.md §5): rebuilds every core from the log and checks that
//   - every agent proposal (and the draft / sibling inspection before it) re-derives from the
//     events up to its view_seq,
//   - every Decision (and its ConclusionRecorded) re-derives from its evaluation,
//   - every PlateauDetected is due exactly where it was recorded, and none was missed.
// The first difference is reported with its seq.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "events/codec.h"
#include "events/status.h"

namespace arc::replay {

struct VerifyReport {
  bool ok = false;
  uint64_t events = 0;
  uint64_t proposals = 0;   // agent proposals re-derived
  uint64_t decisions = 0;   // decisions re-derived
  uint64_t plateaus = 0;
  uint64_t divergence_seq = 0;  // first divergence (0: none)
  std::string message;
  double seconds = 0;
};

// Verifies an in-memory log (events in seq order).
VerifyReport verify_events(const std::vector<events::Event>& log);
// Opens RUN_DIR's log read-only and verifies it; damage is reported as a divergence at the
// seq of the first unreadable record.
VerifyReport verify_run(const std::filesystem::path& run_dir);

}  // namespace arc::replay
