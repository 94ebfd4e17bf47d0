#include "actors/agent_backend_registry.h"

#include "actors/shells.h"

namespace arc::actors {

// Agents that move inside their skill over the problem's families and knobs: no section, no
// fields, no transport.
extern const AgentBackendKind kBuiltinBackend{.name = "builtin", .spawn = spawn_builtin_agent};

// The table: one line per backend, in the order campaign errors list the names (the first is
// the default). Each kind is defined in its actors/<name>_backend.cc.
#define ARC_AGENT_BACKENDS(X) \
  X(kBuiltinBackend)          \
  X(kLlmBackend)              \
  X(kExecBackend)

#define ARC_DECLARE_BACKEND(kind) extern const AgentBackendKind kind;
ARC_AGENT_BACKENDS(ARC_DECLARE_BACKEND)
#undef ARC_DECLARE_BACKEND

namespace {

#define ARC_BACKEND_ENTRY(kind) &(kind),
const AgentBackendKind* const kBackends[] = {ARC_AGENT_BACKENDS(ARC_BACKEND_ENTRY)};
#undef ARC_BACKEND_ENTRY
#undef ARC_AGENT_BACKENDS

}  // namespace

const AgentBackendKind* find_agent_backend(const std::string& name) {
  for (const AgentBackendKind* k : kBackends) {
    if (name == k->name) return k;
  }
  return nullptr;
}

std::span<const AgentBackendKind* const> agent_backend_kinds() { return kBackends; }

std::vector<std::string> agent_backend_names() {
  std::vector<std::string> out;
  for (const AgentBackendKind* k : kBackends) out.emplace_back(k->name);
  return out;
}

std::string agent_backend_choices() {
  const auto names = agent_backend_names();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "\"" + names[i] + "\"";
  }
  return out;
}

CoreSettings core_settings(const CampaignConfig& c) {
  CoreSettings s;
  s.seed = c.seed;
  s.budget = c.budget;
  s.global_plateau = c.global_plateau;
  s.margin = c.margin;
  s.sol_margin = c.sol_margin;
  s.pairs = c.pairs;
  s.pair_band = c.pair_band;
  s.pair_confidence = c.pair_confidence;
  s.wins_bound = c.wins_bound;
  s.traps_bound = c.traps_bound;
  s.plateau_window = c.plateau_window;
  s.drafting = c.drafting;
  s.sibling_inspection = c.sibling_inspection;
  for (const auto& a : c.agents) {
    AgentSpec spec;
    spec.name = a.name;
    spec.skill = a.skill;
    spec.backend = a.backend;
    if (const AgentBackendKind* k = find_agent_backend(a.backend); k != nullptr) {
      spec.format = k->format;
      if (k->core_spec != nullptr) k->core_spec(c, a, spec);
    }
    s.agents.push_back(std::move(spec));
  }
  return s;
}

void CampaignContext::build_cores() {
  CoreSettings settings = core_settings(config);
  settings.restriction = restriction;
  cores =
      std::make_unique<CoreFactory>(std::move(settings), problem, skills, family_sources, device);
}

caf::actor spawn_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                       caf::actor journal, caf::actor memory, caf::actor guard) {
  const AgentBackendKind* k = find_agent_backend(ctx->config.agents.at(index).backend);
  if (k == nullptr) k = kBackends[0];  // parse_campaign refuses unknown names
  return k->spawn(sys, ctx, index, std::move(journal), std::move(memory), std::move(guard));
}

}  // namespace arc::actors
