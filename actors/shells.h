#pragma once
// The CAF shells of the actors (DESIGN.md §3). Each receives messages, calls its pure core and
// does the I/O; the decisions live in the cores. Spawn order: journal first, then memory,
// plateau, guard, agents and the campaign, each subscribed to the journal.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/campaign_config.h"
#include "actors/core_factory.h"
#include "actors/worker_slot.h"
#include "caf/all.hpp"
#include "eval/evaluator.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"
#include "storage/journal.h"

namespace arc::actors {

class AgentBackend;

// Everything a campaign's actors share; owned by the caller, outlives the actors.
struct CampaignContext {
  CampaignConfig config;
  problem::Problem problem;
  std::vector<skills::Skill> skills;
  storage::Journal* journal = nullptr;
  // The workers the guard measures on (actors/worker_slot.h), in the order they were named.
  // Empty: `evaluator` is the campaign's one worker ("local").
  std::vector<CampaignWorker> workers;
  eval::Evaluator* evaluator = nullptr;
  // The device model every measurement of the campaign is made on (Evaluator::device_model);
  // a worker of another model is refused. Empty: the first worker's.
  std::string device_model;
  std::string campaign_id;
  // CampaignStarted.inputs_ref: the artifact of the run's inputs manifest (actors/run_inputs.h);
  // empty when none was stored.
  std::string inputs_ref;
  std::string device;
  std::vector<std::pair<std::string, std::string>> software;
  bool resuming = false;       // continue the campaign already in the journal
  bool detached_guard = true;  // the guard blocks on evaluations: give it its own thread
  uint32_t compile_jobs = 2;
  // Called (from an actor thread) for every durable event, in seq order; may be empty.
  std::function<void(const events::Event&)> observer;
  // llm and exec agents: each one's backend, by agent index (null for builtin agents; llm
  // agents share one, so its concurrency limit holds over all of them), and the text of the
  // problem's family sources (their prompts show them).
  std::vector<std::shared_ptr<AgentBackend>> agent_backends;
  std::map<std::string, std::string> family_sources;
  // RunOptions::restriction.
  std::shared_ptr<const VariantRestriction> restriction;
  // Builds every actor's cores (over config, problem, skills and family_sources above); set by
  // build_cores() once those are in place, before any actor is spawned.
  std::unique_ptr<CoreFactory> cores;
  void build_cores();
};

// The single writer of the log. Handles: (append_atom, event_list) -> seq_list,
// (subscribe_atom, actor), (sync_atom) -> bool. Publishes published_events to subscribers
// after each durable append.
caf::actor spawn_journal(caf::actor_system& sys, CampaignContext* ctx);
caf::actor spawn_memory(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal);
caf::actor spawn_plateau(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal);
caf::actor spawn_guard(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                       caf::actor plateau);
// Spawns the agent the config names at `index`, as its backend says
// (actors/agent_backend_registry.h): builtin, or an llm/exec agent (a detached actor: its
// exchanges block).
caf::actor spawn_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                       caf::actor journal, caf::actor memory, caf::actor guard);
caf::actor spawn_builtin_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                               caf::actor journal, caf::actor memory, caf::actor guard);
caf::actor spawn_external_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                                caf::actor journal, caf::actor memory, caf::actor guard);
// The campaign: (start_atom) -> std::string (the CampaignStopped reason) once it has stopped.
// With ctx->resuming it continues the campaign already in the journal instead.
caf::actor spawn_campaign(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                          caf::actor guard, caf::actor plateau, std::vector<caf::actor> agents);

// Registers KernelArc's message types with a CAF configuration.
void add_arc_message_types(caf::actor_system_config& cfg);

}  // namespace arc::actors
