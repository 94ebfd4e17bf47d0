#pragma once
// The verify core (DESIGN.md §5): re-derives a campaign's proposals, exchanges, decisions,
// conclusions and plateaus from its events with the same cores the live run used
// (actors/core_factory.h), and names the seq of the first difference. Pure: it reads no log,
// no clock and no file; replay/verifier.h is its shell.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/core_factory.h"
#include "base/status.h"
#include "events/codec.h"

namespace arc::replay {

struct VerifyReport {
  bool ok = false;
  uint64_t events = 0;
  uint64_t proposals = 0;  // agent proposals re-derived
  uint64_t decisions = 0;  // decisions re-derived
  uint64_t plateaus = 0;
  uint64_t pairs = 0;      // PairMeasured events checked against the pair the guard core asked for
  uint64_t exchanges = 0;  // llm/exec exchanges re-derived from their logged replies
  uint64_t divergence_seq = 0;  // first divergence (0: none)
  // The log itself is damaged (a frame, the write-ahead log or the acknowledged-seq mark):
  // `message` names the first damaged or missing seq.
  bool damaged = false;
  // A file the run read (campaign, problem, shared includes, skills) is neither in its log nor
  // unchanged where the log names it (actors/run_inputs.h): `message` names it; nothing was
  // re-derived (arc-replay exits 6).
  bool missing_input = false;
  std::string message;
  // From restoring the run's inputs: the problem's files changed since the run (warnings) or
  // its folder is gone (notes); the log's copy was verified against.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  double seconds = 0;  // set by the shell
};

// An artifact's blob by its hash (the run's artifact store).
using ArtifactLookup = std::function<Result<std::string>(const std::string& hash)>;

// The verdict on a log that needs no cores: an empty log, one that does not begin with
// CampaignStarted (both failures), or a sweep's (measurements only: ok). Nothing otherwise.
std::optional<VerifyReport> verify_preamble(const std::vector<events::Event>& log);

// Verifies `log` (events in seq order, beginning with its CampaignStarted) with cores from
// `cores`, built from that CampaignStarted's configuration, problem and skills. `artifacts`
// serves the replies of llm/exec exchanges; without it a log holding exchanges fails at the
// first one.
VerifyReport verify_log(const std::vector<events::Event>& log, const actors::CoreFactory& cores,
                        const ArtifactLookup& artifacts = {});

}  // namespace arc::replay
