#pragma once
// Builds the pure cores of a campaign (DESIGN.md §3) from its settings, problem and skills, in
// one place: the live shells, `arcd resume` (the same shells folding the log) and the verifier
// all get their cores here, so they cannot be set up differently. Pure: no I/O.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/agent_core.h"
#include "actors/campaign_core.h"
#include "actors/exchange_format.h"
#include "actors/external_agent_core.h"
#include "actors/guard_core.h"
#include "actors/memory_core.h"
#include "actors/plateau_core.h"
#include "actors/view.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::actors {

// One agent as its core sees it. The shell side (actors/agent_backend_registry.h) fills the
// backend's part from the campaign configuration.
struct AgentSpec {
  std::string name;
  std::string skill;  // initial skill
  std::string backend = "builtin";
  // Null: a builtin agent (AgentCore). Else an external agent (ExternalAgentCore) whose
  // exchanges have this format.
  const ExchangeFormat* format = nullptr;
  std::string model;  // external: as ExternalSetup
  double temperature = 0.2;
  uint32_t max_tokens = 4096;
  uint32_t max_failures = 5;
};

// The configuration values the cores depend on (a campaign's, docs/campaign-format.md).
struct CoreSettings {
  uint64_t seed = 1;
  uint32_t budget = 40;
  uint32_t global_plateau = 24;
  double margin = 0.02;
  std::optional<double> sol_margin;  // [guard] sol_margin; unset: the backend's default
  uint32_t pairs = 10;               // [guard] pairs, pair_band, pair_confidence
  double pair_band = 0.05;
  double pair_confidence = 0.95;
  uint32_t wins_bound = 16;
  uint32_t traps_bound = 16;
  uint32_t plateau_window = 8;
  bool drafting = true;
  bool sibling_inspection = true;
  std::vector<AgentSpec> agents;
  // Builtin agents propose only within it (AgentSetup::restriction); null: the whole space.
  std::shared_ptr<const VariantRestriction> restriction;
};

class CoreFactory {
 public:
  // `problem`, `skills` and `family_sources` (family name -> source text; external agents show
  // them in prompts) outlive the factory and every core it builds. `device`: the campaign's
  // device as logged in CampaignStarted.
  CoreFactory(CoreSettings settings, const problem::Problem& problem,
              const std::vector<skills::Skill>& skills,
              const std::map<std::string, std::string>& family_sources, std::string device);

  const CoreSettings& settings() const { return settings_; }
  const problem::Problem& problem() const { return *problem_; }
  // The problem's workload names, in problem order.
  const std::vector<std::string>& workloads() const { return workloads_; }

  std::unique_ptr<CampaignView> view() const;
  std::unique_ptr<MemoryCore> memory() const;
  std::unique_ptr<GuardCore> guard() const;
  std::unique_ptr<PlateauCore> plateau() const;
  std::unique_ptr<CampaignCore> campaign() const;
  // Agent `index` of settings().agents: external (llm, exec, ...) or builtin.
  bool external(uint32_t index) const { return settings_.agents.at(index).format != nullptr; }
  std::unique_ptr<AgentCore> agent(uint32_t index) const;
  std::unique_ptr<ExternalAgentCore> external_agent(uint32_t index) const;

 private:
  AgentSetup agent_setup(uint32_t index) const;

  CoreSettings settings_;
  const problem::Problem* problem_;
  const std::vector<skills::Skill>* skills_;
  const std::map<std::string, std::string>* family_sources_;
  std::string device_;
  std::vector<std::string> workloads_;
};

}  // namespace arc::actors
