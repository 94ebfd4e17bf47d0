#pragma once
// The agent backends, registered in one table (actors/agent_backend_registry.cc). For each name:
// its pure half (null for builtin agents, else the ExchangeFormat its ExternalAgentCore uses),
// how an agent's core settings come from the campaign, the transport its shell sends exchanges
// through, and how its actor is spawned. Everything that differs between builtin, llm and exec
// agents is reached through here; nothing else compares backend names.
//
// Adding a backend: its ExchangeFormat in a file of arc_cores (actors/<name>_exchange.cc), its
// transport and entry functions in arc_actors, and one line in the table.
#include <memory>
#include <string>
#include <vector>

#include "actors/campaign_config.h"
#include "actors/core_factory.h"
#include "base/status.h"

namespace caf {
class actor;
class actor_system;
}  // namespace caf

namespace arc::actors {

class AgentBackend;
struct CampaignContext;

struct AgentBackendKind {
  const char* name;
  // Null: a builtin agent. Else the format of its exchanges (an external agent).
  const ExchangeFormat* format;
  // Fills the backend's part of an agent's core settings (model, limits) from the campaign.
  void (*core_spec)(const CampaignConfig& c, const AgentConfig& a, AgentSpec& spec);
  // The transport of agent `a` (null for builtin). `shared` is this backend's slot for one
  // transport all its agents share (llm: one concurrency limit). Errors name the campaign file.
  Result<std::shared_ptr<AgentBackend>> (*transport)(const CampaignConfig& c, const AgentConfig& a,
                                                     std::shared_ptr<AgentBackend>& shared);
  // Spawns agent `index` (actors/shells.h, spawn_agent).
  caf::actor (*spawn)(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                      caf::actor journal, caf::actor memory, caf::actor guard);
};

// The backend named `name`, or null.
const AgentBackendKind* find_agent_backend(const std::string& name);
// Every registered name, in table order.
std::vector<std::string> agent_backend_names();
// The names as a campaign error lists them: "\"builtin\", \"llm\" or \"exec\"".
std::string agent_backend_choices();

// The core settings of a campaign: what its cores are built from (actors/core_factory.h).
CoreSettings core_settings(const CampaignConfig& c);

}  // namespace arc::actors
