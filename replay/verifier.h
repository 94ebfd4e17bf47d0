#pragma once
// arc-replay verify (DESIGN.md §5): rebuilds every core from the log and checks that
//   - every agent proposal (and the draft / sibling inspection before it) re-derives from the
//     events up to its view_seq,
//   - every Decision (and its ConclusionRecorded) re-derives from its evaluation,
//   - every PlateauDetected is due exactly where it was recorded, and none was missed,
//   - every AgentExchange of an llm/exec agent carries the prompt its core re-builds from the
//     events up to its view_seq (same hash), and what it gave (candidate or error) re-derives
//     from the logged reply; nothing is sent to a model or a command.
// The first difference is reported with its seq. The re-deriving is the verify core
// (replay/verify_core.h); this is its shell: it reads the log and rebuilds the inputs.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/codec.h"
#include "replay/verify_core.h"

namespace arc::replay {

// Verifies an in-memory log (events in seq order). `artifacts` serves the replies of llm/exec
// exchanges; without it a log holding exchanges fails at the first one.
VerifyReport verify_events(const std::vector<events::Event>& log,
                           const ArtifactLookup& artifacts = {});
// Opens RUN_DIR's log read-only and verifies it; damage is reported as a divergence at the
// seq of the first unreadable record.
VerifyReport verify_run(const std::filesystem::path& run_dir);

}  // namespace arc::replay
