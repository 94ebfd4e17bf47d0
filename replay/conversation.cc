#include "replay/conversation.h"

#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace arc::replay {
namespace {

using json = nlohmann::json;

std::string blob(const ArtifactLookup& artifacts, const std::string& ref) {
  if (ref.empty()) return "";
  auto b = artifacts(ref);
  return b ? b.value()
           : "(artifact " + ref.substr(0, 12) + " unreadable: " + b.status().message() + ")";
}

// The messages of a chat-completions request body, or the text itself when it is not one.
std::string prompt_text(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return body;
  if (!j.contains("messages") || !j["messages"].is_array()) return j.dump(2);
  std::string out;
  for (const auto& m : j["messages"]) {
    if (!m.is_object()) continue;
    out += "--- " +
           (m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>()
                                                        : std::string("?")) +
           "\n";
    if (m.contains("content") && m["content"].is_string()) out += m["content"].get<std::string>();
    out += "\n";
  }
  return out;
}

// The model's message of a chat-completions response, or the text itself.
std::string reply_text(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_object() && j.contains("choices") && j["choices"].is_array() &&
      !j["choices"].empty() && j["choices"][0].is_object() && j["choices"][0].contains("message") &&
      j["choices"][0]["message"].is_object() && j["choices"][0]["message"].contains("content") &&
      j["choices"][0]["message"]["content"].is_string()) {
    return j["choices"][0]["message"]["content"].get<std::string>();
  }
  return body;
}

// An exec context as indented JSON.
std::string pretty(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return text;
  return j.dump(2);
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
    const std::string prompt = blob(artifacts, x->prompt_ref);
    os << ">>> prompt " << x->prompt_ref.substr(0, 12) << "\n"
       << (x->backend == "llm" ? prompt_text(prompt) : pretty(prompt)) << "\n";
    if (x->response_ref.empty()) {
      os << "<<< no reply\n";
    } else {
      const std::string reply = blob(artifacts, x->response_ref);
      os << "<<< reply " << x->response_ref.substr(0, 12) << "\n"
         << (x->backend == "llm" ? reply_text(reply) : reply) << "\n";
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
