#pragma once
// What distinguishes one external agent backend (llm, exec, ...) inside the pure cores: the blob
// it sends for an exchange, built from the exchange's context, and how its reply is read. Both
// are pure functions, so a live shell, resume and the verifier derive the same prompt and the
// same candidate. A backend's kind (actors/agent_backend_registry.h) points at its format.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "actors/memory_core.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::actors {

struct ExternalSetup;
struct ParsedReply;

// Everything one exchange's prompt is built from (ExternalAgentCore::prepare).
struct PromptInput {
  const ExternalSetup& setup;
  const problem::Problem& problem;
  const skills::Skill* skill;  // the skill proposed under; null when unknown
  const std::string& skill_name;
  const nlohmann::json& context;  // the context JSON (docs/agents.md, "Pointing arcd at a command")
  double base_score = 0;          // the base's score over the baseline
  std::string base_source;        // the base's source, knobs as #defines
  const Recall& recall;
  struct Sibling {
    std::string agent;
    double score = 0;
    std::string source;
  };
  std::vector<Sibling> siblings;  // faster siblings shown after a plateau, fastest first
};

struct ExchangeFormat {
  // The blob sent and logged (its SHA-256 is the exchange's prompt_ref).
  std::string (*prompt)(const PromptInput& in);
  // The candidate a delivered reply gives, or why none.
  ParsedReply (*parse)(const std::string& reply, const problem::Problem& problem,
                       const problem::Candidate& base);
  // The prompt and the reply as `arc-replay show --conversation` prints them.
  std::string (*show_prompt)(const std::string& prompt);
  std::string (*show_reply)(const std::string& reply);
};

// Each backend's format is defined in its actors/<name>_exchange.cc with external linkage and
// reached through its AgentBackendKind (actors/agent_backend_registry.h). Two are named here for
// the code that needs one without a backend: kLlmExchange is ExternalSetup's default, and
// kExecExchange shows the exchanges of a backend a build does not know (arc-replay show).
extern const ExchangeFormat kLlmExchange;
extern const ExchangeFormat kExecExchange;

}  // namespace arc::actors
