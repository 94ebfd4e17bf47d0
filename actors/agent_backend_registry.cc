#include "actors/agent_backend_registry.h"

#include "actors/agent_backends.h"
#include "actors/shells.h"

namespace arc::actors {
namespace {

void no_spec(const CampaignConfig&, const AgentConfig&, AgentSpec&) {}

Result<std::shared_ptr<AgentBackend>> no_transport(const CampaignConfig&, const AgentConfig&,
                                                   std::shared_ptr<AgentBackend>&) {
  return std::shared_ptr<AgentBackend>();
}

void llm_spec(const CampaignConfig& c, const AgentConfig& a, AgentSpec& spec) {
  spec.model = a.model.empty() ? c.llm.model : a.model;
  spec.temperature = c.llm.temperature;
  spec.max_tokens = c.llm.max_tokens;
  spec.max_failures = c.llm.max_failures;
}

// One transport for every llm agent, so its concurrency limit holds over all of them.
Result<std::shared_ptr<AgentBackend>> llm_transport(const CampaignConfig& c, const AgentConfig&,
                                                    std::shared_ptr<AgentBackend>& shared) {
  if (!shared) {
    auto b = make_llm_backend(c.llm);
    if (!b) return Status::invalid_argument(c.file.string() + ": " + b.status().message());
    shared = std::move(b.value());
  }
  return shared;
}

void exec_spec(const CampaignConfig& c, const AgentConfig&, AgentSpec& spec) {
  spec.max_failures = c.exec.max_failures;
}

Result<std::shared_ptr<AgentBackend>> exec_transport(const CampaignConfig& c, const AgentConfig& a,
                                                     std::shared_ptr<AgentBackend>&) {
  ExecConfig ec = c.exec;
  if (!a.command.empty()) ec.command = a.command;
  auto b = make_exec_backend(ec);
  if (!b) {
    return Status::invalid_argument(c.file.string() + ": agent " + a.name + ": " +
                                    b.status().message());
  }
  return std::shared_ptr<AgentBackend>(std::move(b.value()));
}

const AgentBackendKind kBackends[] = {
    {"builtin", nullptr, no_spec, no_transport, spawn_builtin_agent},
    {"llm", &kLlmExchange, llm_spec, llm_transport, spawn_external_agent},
    {"exec", &kExecExchange, exec_spec, exec_transport, spawn_external_agent},
};

}  // namespace

const AgentBackendKind* find_agent_backend(const std::string& name) {
  for (const auto& k : kBackends) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

std::vector<std::string> agent_backend_names() {
  std::vector<std::string> out;
  for (const auto& k : kBackends) out.emplace_back(k.name);
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
      k->core_spec(c, a, spec);
    }
    s.agents.push_back(std::move(spec));
  }
  return s;
}

void CampaignContext::build_cores() {
  cores =
      std::make_unique<CoreFactory>(core_settings(config), problem, skills, family_sources, device);
}

caf::actor spawn_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                       caf::actor journal, caf::actor memory, caf::actor guard) {
  const AgentBackendKind* k = find_agent_backend(ctx->config.agents.at(index).backend);
  if (k == nullptr) k = &kBackends[0];  // parse_campaign refuses unknown names
  return k->spawn(sys, ctx, index, std::move(journal), std::move(memory), std::move(guard));
}

}  // namespace arc::actors
