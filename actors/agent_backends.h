#pragma once
// The I/O half of llm and exec agents (DESIGN.md §3, §7): sends one exchange's prompt and
// brings back the reply. Everything the reply means is decided by ExternalAgentCore from the
// logged reply; a backend only moves bytes, measures latency and retries.
//   llm:  POST {base_url}/chat/completions with the prompt as body, "Authorization: Bearer
//         KEY" when a key is configured; a 429, a 5xx or a transport error is retried after
//         backoff_s, 2 x backoff_s, ... (a Retry-After header of at most 60 s is honoured);
//         other statuses fail at once. At most `concurrency` requests are in flight over all
//         agents sharing the backend.
//   exec: runs the command with the context JSON on stdin; stdout is the reply. A non-zero
//         exit, a signal or the timeout fails the exchange (stderr's tail is in the error).
#include <memory>
#include <string>

#include "actors/campaign_config.h"
#include "actors/external_agent_core.h"
#include "base/status.h"

namespace arc::actors {

class AgentBackend {
 public:
  virtual ~AgentBackend() = default;
  // Blocks until the reply, or the failure, is in. Thread-safe; never throws. The reply's
  // artifact refs are left for the caller to fill.
  virtual ExchangeReply exchange(const ExchangeRequest& request) = 0;
};

// Fails (naming the field) when the base URL cannot be used.
Result<std::unique_ptr<AgentBackend>> make_llm_backend(const LlmConfig& config);
Result<std::unique_ptr<AgentBackend>> make_exec_backend(const ExecConfig& config);

}  // namespace arc::actors
