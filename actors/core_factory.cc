#include "actors/core_factory.h"

namespace arc::actors {

CoreFactory::CoreFactory(CoreSettings settings, const problem::Problem& problem,
                         const std::vector<skills::Skill>& skills,
                         const std::map<std::string, std::string>& family_sources,
                         std::string device)
    : settings_(std::move(settings)),
      problem_(&problem),
      skills_(&skills),
      family_sources_(&family_sources),
      device_(std::move(device)) {
  for (const auto& w : problem.workloads) workloads_.push_back(w.name);
}

std::unique_ptr<CampaignView> CoreFactory::view() const {
  return std::make_unique<CampaignView>(workloads_);
}

std::unique_ptr<MemoryCore> CoreFactory::memory() const {
  return std::make_unique<MemoryCore>(MemoryBounds{settings_.wins_bound, settings_.traps_bound});
}

std::unique_ptr<GuardCore> CoreFactory::guard() const {
  GuardConfig gc{settings_.margin, settings_.budget, problem_->kernel_type, workloads_};
  gc.sol_margin = sol_margin_for(settings_.sol_margin, problem_->backend);
  gc.pairs = settings_.pairs;
  gc.pair_band = settings_.pair_band;
  gc.pair_confidence = settings_.pair_confidence;
  return std::make_unique<GuardCore>(std::move(gc));
}

std::unique_ptr<PlateauCore> CoreFactory::plateau() const {
  return std::make_unique<PlateauCore>(
      PlateauConfig{settings_.plateau_window, settings_.global_plateau});
}

std::unique_ptr<CampaignCore> CoreFactory::campaign() const {
  std::vector<std::string> agents;
  for (const auto& a : settings_.agents) agents.push_back(a.name);
  return std::make_unique<CampaignCore>(settings_.budget, settings_.global_plateau,
                                        std::move(agents), workloads_);
}

AgentSetup CoreFactory::agent_setup(uint32_t index) const {
  const AgentSpec& a = settings_.agents.at(index);
  return AgentSetup{a.name,
                    index,
                    a.skill,
                    settings_.seed,
                    settings_.drafting,
                    settings_.sibling_inspection,
                    settings_.restriction};
}

std::unique_ptr<AgentCore> CoreFactory::agent(uint32_t index) const {
  return std::make_unique<AgentCore>(agent_setup(index), *problem_, *skills_);
}

std::unique_ptr<ExternalAgentCore> CoreFactory::external_agent(uint32_t index) const {
  const AgentSpec& a = settings_.agents.at(index);
  ExternalSetup s;
  s.agent = agent_setup(index);
  s.backend = a.backend;
  s.format = a.format;
  s.model = a.model;
  s.temperature = a.temperature;
  s.max_tokens = a.max_tokens;
  s.max_failures = a.max_failures;
  s.device = device_;
  return std::make_unique<ExternalAgentCore>(std::move(s), *problem_, *skills_, *family_sources_);
}

}  // namespace arc::actors
