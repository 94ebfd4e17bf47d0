#pragma once
// arc-replay verify (DESIGN.md §5): rebuilds every core from the log and checks that
//   - every agent proposal (and the draft / sibling inspection before it) re-derives from the
//     events up to its view_seq,
//   - every Decision (and its ConclusionRecorded) re-derives from its evaluation,
//   - every PlateauDetected is due exactly where it was recorded, and none was missed,
//   - every AgentExchange of an llm/exec agent carries the prompt its core re-builds from the
//     events up to its view_seq (same hash), and what it gave (candidate or error) re-derives
//     from the logged reply; nothing is sent to a model or a command.
// The first difference is reported with its seq.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/codec.h"

namespace arc::replay {

struct VerifyReport {
  bool ok = false;
  uint64_t events = 0;
  uint64_t proposals = 0;  // agent proposals re-derived
  uint64_t decisions = 0;  // decisions re-derived
  uint64_t plateaus = 0;
  uint64_t exchanges = 0;       // llm/exec exchanges re-derived from their logged replies
  uint64_t divergence_seq = 0;  // first divergence (0: none)
  std::string message;
  double seconds = 0;
};

// An artifact's blob by its hash (the run's artifact store).
using ArtifactLookup = std::function<Result<std::string>(const std::string& hash)>;

// Verifies an in-memory log (events in seq order). `artifacts` serves the replies of llm/exec
// exchanges; without it a log holding exchanges fails at the first one.
VerifyReport verify_events(const std::vector<events::Event>& log,
                           const ArtifactLookup& artifacts = {});
// Opens RUN_DIR's log read-only and verifies it; damage is reported as a divergence at the
// seq of the first unreadable record.
VerifyReport verify_run(const std::filesystem::path& run_dir);

}  // namespace arc::replay
