#pragma once
// arc-replay show --conversation: every llm/exec exchange of a run, in log order, with its
// prompt and reply read back from the run's artifacts: the chat messages sent and the model's
// message (llm), or the context sent and the command's output (exec), then what the exchange
// gave (a candidate, or why not), tokens and latency.
#include <string>
#include <vector>

#include "events/codec.h"
#include "replay/verifier.h"

namespace arc::replay {

// `agent` empty: every agent's exchanges.
std::string conversation_text(const std::vector<events::Event>& log,
                              const ArtifactLookup& artifacts, const std::string& agent = "");

}  // namespace arc::replay
