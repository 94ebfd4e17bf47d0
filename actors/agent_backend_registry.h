#pragma once
// The agent backends, registered in one table (actors/agent_backend_registry.cc). For each name:
// its pure half (null for builtin agents, else the ExchangeFormat its ExternalAgentCore uses),
// its campaign section and per-agent fields (how they are read, checked and written back), how
// an agent's core settings come from the campaign, the transport its shell sends exchanges
// through, and how its actor is spawned. Everything that differs between builtin, llm and exec
// agents is reached through here; nothing else compares backend names or knows a section.
//
// Adding a backend <name> with its own campaign section touches three files (tests and docs
// aside):
//   actors/<name>_exchange.cc  its ExchangeFormat (pure, in arc_cores), defined
//                              `extern const ExchangeFormat k<Name>Exchange{...}`;
//   actors/<name>_backend.cc   its transport; the settings types of its section and of its
//                              per-agent fields, their readers and canonical text; and its kind,
//                              defined `extern const AgentBackendKind k<Name>Backend{...}`
//                              (declaring k<Name>Exchange to point at it);
//   actors/agent_backend_registry.cc  one line in the table, X(k<Name>Backend).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "actors/campaign_config.h"
#include "actors/core_factory.h"
#include "actors/external_agent_core.h"
#include "base/status.h"

namespace caf {
class actor;
class actor_system;
}  // namespace caf

namespace arc::actors {

class CampaignReader;
struct CampaignTable;
struct CampaignContext;

// The I/O half of an external agent (DESIGN.md §3, §7): sends one exchange's prompt and brings
// back the reply. Everything the reply means is decided by ExternalAgentCore from the logged
// reply; a transport only moves bytes, measures latency and retries.
class AgentBackend {
 public:
  virtual ~AgentBackend() = default;
  // Blocks until the reply, or the failure, is in. Thread-safe; never throws. The reply's
  // artifact refs are left for the caller to fill.
  virtual ExchangeReply exchange(const ExchangeRequest& request) = 0;
};

// A field a backend owns on [[agents]] entries (llm: model). It is an error on an agent of
// any other backend: "expected <expected>, got a <key> on backend \"<backend>\"".
struct AgentField {
  const char* key;
  const char* expected;  // e.g. "a non-empty model name, on an agent with backend = \"llm\""
};

// One backend. Members left null (builtin: all but name and spawn) mean "none" or "nothing to
// do". Readers report errors into the CampaignReader (actors/campaign_toml.h) and name the
// field; the settings they return print back (BackendSettings::text) to what they read.
struct AgentBackendKind {
  const char* name = nullptr;
  // Null: a builtin agent. Else the format of its exchanges (an external agent).
  const ExchangeFormat* format = nullptr;

  // The campaign section it owns ("llm" for [llm]), or null.
  const char* section = nullptr;
  // Whether agent `a` (of this backend) needs the section; null: every agent does. The section
  // is required when some agent needs it.
  bool (*needs_section)(const AgentConfig& a) = nullptr;
  // Reads and checks the section, present as `t`. `required`: some agent needs it (fields it
  // may otherwise leave out become required).
  std::shared_ptr<const BackendSettings> (*read_section)(CampaignReader& r, const CampaignTable& t,
                                                         bool required) = nullptr;
  // The fields it owns on [[agents]] entries, and their reader for one of its agents' entries
  // `t` ("agents[i]"): null when the entry gives none of them.
  std::span<const AgentField> agent_fields = {};
  std::shared_ptr<const BackendSettings> (*read_agent)(CampaignReader& r,
                                                       const CampaignTable& t) = nullptr;

  // Fills the backend's part of an agent's core settings (model, limits) from the campaign.
  void (*core_spec)(const CampaignConfig& c, const AgentConfig& a, AgentSpec& spec) = nullptr;
  // The transport of agent `a` (null: builtin). `shared` is this backend's slot for one
  // transport all its agents share (llm: one concurrency limit). Errors name the campaign file.
  Result<std::shared_ptr<AgentBackend>> (*transport)(const CampaignConfig& c, const AgentConfig& a,
                                                     std::shared_ptr<AgentBackend>& shared) =
      nullptr;
  // Spawns agent `index` (actors/shells.h, spawn_agent).
  caf::actor (*spawn)(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                      caf::actor journal, caf::actor memory, caf::actor guard) = nullptr;
};

// The backend named `name`, or null.
const AgentBackendKind* find_agent_backend(const std::string& name);
// Every registered backend, in table order.
std::span<const AgentBackendKind* const> agent_backend_kinds();
// Every registered name, in table order.
std::vector<std::string> agent_backend_names();
// The names as a campaign error lists them: "\"builtin\", \"llm\" or \"exec\"".
std::string agent_backend_choices();

// The core settings of a campaign: what its cores are built from (actors/core_factory.h).
CoreSettings core_settings(const CampaignConfig& c);

}  // namespace arc::actors
