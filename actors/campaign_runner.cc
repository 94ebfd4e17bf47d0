#include "actors/campaign_runner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <flatbuffers/base.h>
#include <rocksdb/version.h>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_workers.h"
#include "actors/messages.h"
#include "actors/run_directory.h"
#include "actors/run_inputs.h"
#include "actors/shells.h"
#include "base/sha256.h"
#include "eval/evaluators.h"
#include "eval/quarantine.h"
#include "storage/journal.h"
#include "storage/run_lock.h"

namespace arc::actors {

Status apply_overrides(CampaignConfig& config, const RunOptions& options) {
  if (options.seed) {
    config.seed = *options.seed;
    config.overrides["seed"] = std::to_string(*options.seed);
  }
  if (options.budget) {
    if (*options.budget == 0) {
      return Status::invalid_argument("--budget: expected a positive integer, got 0");
    }
    config.budget = *options.budget;
    config.overrides["budget"] = std::to_string(*options.budget);
  }
  if (options.mode) {
    config.mode = *options.mode;
    config.overrides["mode"] = to_string(*options.mode);
  }
  return Status::ok();
}

Result<PreparedCampaign> prepare_campaign(CampaignConfig config, const RunOptions& options) {
  if (auto s = apply_overrides(config, options); !s) return s;
  auto problem = problem::load_problem(config.problem);
  if (!problem) return problem.status();
  auto skills = skills::load_skills(config.skills);
  if (!skills) return skills.status();
  for (size_t i = 0; i < config.agents.size(); ++i) {
    const auto& a = config.agents[i];
    const skills::Skill* found = nullptr;
    for (const auto& s : skills.value()) {
      if (s.name == a.skill) found = &s;
    }
    const std::string field =
        config.file.string() + ": field 'agents[" + std::to_string(i) + "].skill'";
    if (found == nullptr) {
      return Status::invalid_argument(field + ": expected a skill under " + config.skills.string() +
                                      ", got \"" + a.skill + "\"");
    }
    if (!found->eligible_for(problem->kernel_type)) {
      return Status::invalid_argument(field + ": expected a skill eligible for kernel type '" +
                                      problem->kernel_type + "', got \"" + a.skill + "\"");
    }
  }
  return PreparedCampaign{std::move(config), std::move(problem.value()), std::move(skills.value())};
}

namespace {

// A fresh run may start in a new or empty folder, or over what a run killed before
// CampaignStarted left there; nowhere else.
Status check_fresh_run_dir(const RunDirInspection& inspection, const std::filesystem::path& dir) {
  if (inspection.state == RunDirState::kStarted) {
    return Status::invalid_argument("--run-dir " + dir.string() +
                                    ": holds a campaign's log (use `arcd resume` to continue it)");
  }
  if (inspection.state == RunDirState::kForeign) {
    return Status::invalid_argument("--run-dir " + dir.string() +
                                    ": expected a new or empty folder (it holds files that are "
                                    "not a run's log)");
  }
  return Status::ok();
}

// "local:0, local:1, 10.0.0.2:7100".
std::string worker_names(const std::vector<CampaignWorker>& workers) {
  std::string out;
  for (const auto& w : workers) out += (out.empty() ? "" : ", ") + w.name;
  return out;
}

}  // namespace

Result<RunResult> run_campaign(PreparedCampaign prepared, const RunOptions& options) {
  namespace fs = std::filesystem;
  if (!options.make_evaluator) return Status::invalid_argument("no evaluator configured");
  std::error_code ec;
  if (options.resume && options.in_memory_log) {
    return Status::invalid_argument(options.run_dir.string() +
                                    ": an in-memory log cannot be resumed");
  }
  if (options.resume) {
    if (!fs::exists(log_dir_of(options.run_dir), ec)) {
      return Status::invalid_argument(options.run_dir.string() +
                                      ": expected a run directory with a log/ folder to resume");
    }
  }
  // One arcd per run directory: a second one hears whose it is before anything else.
  std::shared_ptr<storage::RunLock> run_lock = options.run_lock;
  if (!options.in_memory_log && !run_lock && fs::is_directory(options.run_dir, ec)) {
    auto lock = storage::RunLock::acquire(options.run_dir);
    if (!lock) return lock.status();
    run_lock = std::move(lock.value());
  }
  if (!options.resume) {
    auto inspection = inspect_run_dir(options.run_dir);
    if (!inspection) return inspection.status();
    if (auto s = check_fresh_run_dir(inspection.value(), options.run_dir); !s) return s;
  }
  // A candidate that took arcd (or its worker) down twice is decided as CRASH on resume.
  // (Answers from recorded measurements run nothing that could.)
  auto opened = open_workers(prepared.problem, options,
                             options.in_memory_log ? fs::path() : options.run_dir / "quarantine");
  if (!opened) return opened.status();
  std::vector<std::shared_ptr<AgentBackend>> agent_backends;
  std::map<std::string, std::shared_ptr<AgentBackend>> shared_backends;
  std::map<std::string, std::string> family_sources;
  for (const auto& a : prepared.config.agents) {
    const AgentBackendKind* kind = find_agent_backend(a.backend);
    if (kind == nullptr) {
      return Status::invalid_argument(prepared.config.file.string() + ": agent " + a.name +
                                      ": unknown backend \"" + a.backend + "\"");
    }
    if (kind->transport == nullptr) {
      agent_backends.emplace_back();
      continue;
    }
    auto b = kind->transport(prepared.config, a, shared_backends[a.backend]);
    if (!b) return b.status();
    agent_backends.push_back(std::move(b.value()));
  }
  if (std::any_of(agent_backends.begin(), agent_backends.end(),
                  [](const auto& b) { return b != nullptr; })) {
    auto sources = problem::read_family_sources(prepared.problem);
    if (!sources) return sources.status();
    family_sources = std::move(sources.value());
  }

  if (!options.in_memory_log) {
    fs::create_directories(options.run_dir, ec);
    if (ec) {
      return Status::io_error("cannot create " + options.run_dir.string() + ": " + ec.message());
    }
    if (!run_lock) {
      auto lock = storage::RunLock::acquire(options.run_dir);
      if (!lock) return lock.status();
      run_lock = std::move(lock.value());
    }
    if (!options.resume) {
      // Again under the lock: another arcd may have used the folder since the check above.
      auto inspection = inspect_run_dir(options.run_dir);
      if (!inspection) return inspection.status();
      if (auto s = check_fresh_run_dir(inspection.value(), options.run_dir); !s) return s;
      if (inspection->state == RunDirState::kUnstarted) {
        if (auto s = discard_unstarted_log(options.run_dir); !s) return s;
        if (options.notice) {
          options.notice(options.run_dir.string() +
                         ": a run killed before its campaign started left a log without events; "
                         "removed it, starting afresh");
        }
      }
    }
  }
  storage::JournalOptions jo;
  jo.in_memory = options.in_memory_log;
  jo.durability = prepared.config.durability == "batch" ? storage::Durability::kBatch
                                                        : storage::Durability::kSync;
  jo.create_if_missing = !options.resume;
  auto journal = storage::Journal::open(log_dir_of(options.run_dir).string(), jo);
  if (!journal) return journal.status();
  std::string campaign_id = journal.value()->campaign();
  std::string inputs_ref;
  if (options.resume) {
    if (campaign_id.empty()) {
      return Status::invalid_argument(options.run_dir.string() + ": the log names no campaign");
    }
    auto last = journal.value()->read_all();
    if (!last) return last.status();
    if (!last->empty() && last->back().payload.type == fb::Payload::CampaignStopped) {
      return Status::invalid_argument(options.run_dir.string() +
                                      ": the campaign already stopped (" +
                                      last->back().payload.AsCampaignStopped()->reason + ")");
    }
    // A resumed campaign keeps measuring on the device model it started on.
    if (!last->empty() && last->front().payload.type == fb::Payload::CampaignStarted) {
      for (const auto& kv : last->front().payload.AsCampaignStarted()->software) {
        if (kv->key == kDeviceModelKey && kv->value != opened->device_model) {
          return Status::invalid_argument(options.run_dir.string() + ": the campaign measured on " +
                                          kv->value + "; its workers now measure on " +
                                          opened->device_model +
                                          " (timings are never compared across device models)");
        }
      }
    }
  } else {
    const auto now = std::chrono::system_clock::now().time_since_epoch().count();
    campaign_id = arc::sha256_hex(prepared.config.text + "|" +
                                  std::to_string(prepared.config.seed) + "|" + std::to_string(now))
                      .substr(0, 16);
    if (auto s = journal.value()->set_campaign(campaign_id); !s) return s;
    // Before the first event: lets `arcd resume` start this campaign again should the run be
    // killed before CampaignStarted is logged (actors/run_directory.h).
    if (auto s = journal.value()->put_meta(kStartRequestKey, start_request_text(prepared.config));
        !s) {
      return s;
    }
    // Everything the run read, so that it replays without the source tree. A scratch log is
    // gone with the run; a problem not read from files (built in code) has none to keep.
    if (!options.in_memory_log && !prepared.problem.files.empty()) {
      auto inputs =
          store_run_inputs(*journal.value(), prepared.config, prepared.problem, prepared.skills);
      if (!inputs) return inputs.status();
      inputs_ref = std::move(inputs.value());
    }
  }

  CampaignContext ctx;
  ctx.workers = std::move(opened->workers);
  ctx.evaluator = opened->first;
  ctx.device_model = opened->device_model;
  ctx.config = std::move(prepared.config);
  ctx.problem = std::move(prepared.problem);
  ctx.skills = std::move(prepared.skills);
  ctx.journal = journal.value().get();
  ctx.campaign_id = campaign_id;
  ctx.inputs_ref = inputs_ref;
  ctx.resuming = options.resume;
  ctx.device = ctx.evaluator->device();
  ctx.software = {
      {"kernelarc", "0.1.0"},
      {"compiler", __VERSION__},
      {"caf", "0.17.6"},
      {"rocksdb", std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) + "." +
                      std::to_string(ROCKSDB_PATCH)},
      {"flatbuffers", std::to_string(FLATBUFFERS_VERSION_MAJOR) + "." +
                          std::to_string(FLATBUFFERS_VERSION_MINOR) + "." +
                          std::to_string(FLATBUFFERS_VERSION_REVISION)},
      {"evaluator", ctx.evaluator->name()},
      {kDecisionsKey, kPairedDecisions},
      {kMarginScopeKey, ctx.config.margin_scope},
      {kSlowerWorkloadsKey, ctx.config.slower_workloads},
      {kDeviceModelKey, ctx.device_model},
      {"workers", worker_names(ctx.workers)},
  };
  ctx.compile_jobs = options.compile_jobs != 0 ? options.compile_jobs
                                               : std::max(1u, std::thread::hardware_concurrency());
  ctx.observer = options.observer;
  ctx.detached_guard = options.guard_thread;
  ctx.agent_backends = std::move(agent_backends);
  ctx.family_sources = std::move(family_sources);
  ctx.restriction = options.restriction;
  ctx.build_cores();

  std::string stop_reason;
  Status failure;
  {
    caf::actor_system_config cfg;
    add_arc_message_types(cfg);
    if (options.threads > 0) cfg.set("scheduler.max-threads", options.threads);
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    caf::actor_system sys{cfg};
    auto journal_actor = spawn_journal(sys, &ctx);
    auto memory = spawn_memory(sys, &ctx, journal_actor);
    auto plateau = spawn_plateau(sys, &ctx, journal_actor);
    auto guard = spawn_guard(sys, &ctx, journal_actor, plateau);
    std::vector<caf::actor> agents;
    for (uint32_t i = 0; i < ctx.config.agents.size(); ++i) {
      agents.push_back(spawn_agent(sys, &ctx, i, journal_actor, memory, guard));
    }
    auto campaign = spawn_campaign(sys, &ctx, journal_actor, guard, plateau, agents);
    {
      caf::scoped_actor self{sys};
      self->request(campaign, caf::infinite, start_atom_v)
          .receive([&stop_reason](const std::string& reason) { stop_reason = reason; },
                   [&failure, &sys](caf::error& err) {
                     failure = Status::internal("campaign failed: " + sys.render(err));
                   });
      std::vector<caf::actor> all = agents;
      all.insert(all.end(), {campaign, guard, plateau, memory, journal_actor});
      for (const auto& a : all) self->send_exit(a, caf::exit_reason::user_shutdown);
      for (const auto& a : all) self->wait_for(a);
    }
  }
  // A failed write to the log stopped the campaign: report the write, whatever the actors saw.
  if (auto f = ctx.journal->write_failure(); !f) {
    return Status::io_error("the campaign stopped: " + f.message() +
                            "; the events acknowledged before it are in the log, and `arcd "
                            "resume " +
                            options.run_dir.string() +
                            "` continues from them once the disk takes writes again");
  }
  if (auto s = ctx.journal->sync(); !s) return s;
  if (!failure) return failure;
  return RunResult{campaign_id, stop_reason, options.run_dir, log_dir_of(options.run_dir),
                   std::move(run_lock)};
}

}  // namespace arc::actors
