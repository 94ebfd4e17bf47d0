#pragma once
// ExternalAgentCore: the pure half of an llm or exec agent (DESIGN.md §7). From a view and a
// recall it builds what the agent asks: the context (problem, skill guidance, incumbent source
// and evaluation, recalled wins and traps, on plateau the faster siblings' sources) and the
// exact blob sent (llm: the chat-completions request body; exec: the context JSON). From the
// logged reply it derives the candidate. Both are pure functions of the log, so verification
// rebuilds the prompt, checks its hash against the logged one, and re-derives the proposal
// from the logged reply without calling anything.
//
// Its state is a fold of the log: its proposals, its drafts, plateaus addressed to it and its
// consecutive failed exchanges (after `max_failures` of them it proposes nothing more).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/agent_core.h"
#include "actors/draft_state.h"
#include "actors/exchange_format.h"
#include "actors/memory_core.h"
#include "actors/view.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::actors {

struct ExternalSetup {
  AgentSetup agent;
  std::string backend = "llm";  // its name, as logged ("llm", "exec", ...)
  // Its prompt and reply format (actors/exchange_format.h); null: kLlmExchange.
  const ExchangeFormat* format = nullptr;
  std::string model;            // llm: the model name; exec: "" (the command is not asked)
  double temperature = 0.2;     // llm request parameters: part of the prompt blob
  uint32_t max_tokens = 4096;
  uint32_t max_failures = 5;
  std::string device;  // the campaign's device, as logged in CampaignStarted
};

// What one exchange asks, built from one view.
struct ExchangeRequest {
  std::optional<fb::StrategyDraftedT> drafted;
  std::optional<fb::SiblingInspectedT> inspected;
  std::string skill;   // the skill the proposal is made under
  std::string parent;  // hash of the base: the incumbent or an adopted sibling's
  problem::Candidate base;
  uint64_t view_seq = 0;
  std::string context;  // the context as JSON (exec: stdin)
  std::string prompt;   // the blob sent and logged (llm: request body; exec: `context`)
};

struct Prepared {
  std::optional<ExchangeRequest> request;  // empty: nothing to ask (idle_reason says why)
  std::string idle_reason;
};

// What the transport brought back (filled by the shell).
struct ExchangeReply {
  bool delivered = false;  // false: a transport failure; `error` says why, nothing to parse
  std::string body;        // llm: the HTTP response body; exec: stdout
  std::string error;
  std::string prompt_ref;  // artifact hashes
  std::string response_ref;
  double latency_ms = 0;
  uint32_t attempts = 0;
};

// A candidate read from a reply, or why none could be.
struct ParsedReply {
  std::optional<problem::Candidate> candidate;
  std::string error;
  uint32_t tokens_in = 0, tokens_out = 0;
};

// Reads a model's message text: the first fenced code block that is not ```json is the
// source; a ```json block may describe the launch: {"family": "NAME", "knobs": {"K": "V"}}.
ParsedReply parse_reply_text(const std::string& text, const problem::Problem& problem,
                             const problem::Candidate& base);
// Reads a chat-completions response body (choices[0].message.content, usage).
ParsedReply parse_chat_response(const std::string& body, const problem::Problem& problem,
                                const problem::Candidate& base);
// Reads an exec command's stdout: a candidate's canonical JSON ({"base": ...}), a JSON object
// {"source": ..., "family": ..., "knobs": ...}, a reply with fenced blocks, or bare source.
ParsedReply parse_exec_output(const std::string& out, const problem::Problem& problem,
                              const problem::Candidate& base);

class ExternalAgentCore {
 public:
  // `problem`, `skills` and `family_sources` (family name -> source text) outlive the core.
  ExternalAgentCore(ExternalSetup setup, const problem::Problem& problem,
                    const std::vector<skills::Skill>& skills,
                    const std::map<std::string, std::string>& family_sources);

  void apply(const events::Event& e);
  Prepared prepare(const CampaignView& view, const Recall& recall) const;
  // The events of one exchange, in log order: `exchange` always; then, when the reply gave a
  // new candidate, the draft, the inspection and `proposed`.
  Proposal conclude(const ExchangeRequest& request, const ExchangeReply& reply) const;

  const std::string& name() const { return setup_.agent.name; }
  const std::string& skill() const { return draft_.skill; }
  uint32_t failures() const { return failures_; }

 private:
  std::string source_of(const problem::Variant& v) const;
  const ExchangeFormat& format() const {
    return setup_.format != nullptr ? *setup_.format : kLlmExchange;
  }
  std::string next_skill() const;

  ExternalSetup setup_;
  const problem::Problem* problem_;
  const std::vector<skills::Skill>* skills_;
  const std::map<std::string, std::string>* family_sources_;
  DraftState draft_;
  std::set<std::string> proposed_;  // hashes this agent proposed
  uint32_t failures_ = 0;           // consecutive failed exchanges
};

}  // namespace arc::actors
