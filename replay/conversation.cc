#include "replay/conversation.h"

#include <cstdio>
#include <sstream>

#include "actors/agent_backend_registry.h"

namespace arc::replay {
namespace {

std::string blob(const ArtifactLookup& artifacts, const std::string& ref) {
  if (ref.empty()) return "";
  auto b = artifacts(ref);
  return b ? b.value()
           : "(artifact " + ref.substr(0, 12) + " unreadable: " + b.status().message() + ")";
}

}  // namespace

std::string conversation_text(const std::vector<events::Event>& log,
                              const ArtifactLookup& artifacts, const std::string& agent) {
  std::ostringstream os;
  size_t n = 0;
  for (const auto& e : log) {
    if (e.payload.type != fb::Payload::AgentExchange) continue;
    const auto* x = e.payload.AsAgentExchange();
    if (!agent.empty() && x->agent != agent) continue;
    ++n;
    char head[256];
    std::snprintf(head, sizeof head,
                  "=== seq %llu  agent %s  backend %s%s%s  view %llu  %.0f ms  %u attempt(s)  "
                  "tokens %u in / %u out\n",
                  static_cast<unsigned long long>(e.seq), x->agent.c_str(), x->backend.c_str(),
                  x->model.empty() ? "" : "  model ", x->model.c_str(),
                  static_cast<unsigned long long>(x->view_seq), x->latency_ms, x->attempts,
                  x->tokens_in, x->tokens_out);
    os << head;
    // As the backend's format shows them; the exec form (JSON indented, reply as is) for a
    // backend this build does not know.
    const actors::AgentBackendKind* kind = actors::find_agent_backend(x->backend);
    const actors::ExchangeFormat& format =
        kind != nullptr && kind->format != nullptr ? *kind->format : actors::kExecExchange;
    const std::string prompt = blob(artifacts, x->prompt_ref);
    os << ">>> prompt " << x->prompt_ref.substr(0, 12) << "\n" << format.show_prompt(prompt) << "\n";
    if (x->response_ref.empty()) {
      os << "<<< no reply\n";
    } else {
      const std::string reply = blob(artifacts, x->response_ref);
      os << "<<< reply " << x->response_ref.substr(0, 12) << "\n"
         << format.show_reply(reply) << "\n";
    }
    if (x->ok) {
      os << "=> candidate " << x->candidate_hash.substr(0, 12) << "\n\n";
    } else {
      os << "=> failed: " << x->error << "\n\n";
    }
  }
  if (n == 0) os << "no llm/exec exchanges in this run\n";
  return os.str();
}

}  // namespace arc::replay
