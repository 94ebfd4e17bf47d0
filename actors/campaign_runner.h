#pragma once
// Runs a live campaign end to end: validates everything first (a bad campaign or problem
// writes nothing), opens the run directory's log, spawns the actors, waits for the campaign to
// stop and shuts the actors down.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/campaign_config.h"
#include "actors/search_space.h"
#include "actors/worker_spec.h"
#include "eval/evaluator.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::storage {
class RunLock;
}  // namespace arc::storage

namespace arc::actors {

struct RunOptions {
  // Must not exist, be empty, or hold only what a run killed before CampaignStarted left
  // (actors/run_directory.h: then its log is removed and the run starts afresh), unless
  // resuming.
  std::filesystem::path run_dir;
  bool resume = false;             // continue the campaign logged in run_dir
  std::optional<uint64_t> seed;    // overrides [campaign].seed
  std::optional<uint32_t> budget;  // overrides [campaign].budget
  std::optional<Mode> mode;        // overrides [campaign].mode
  uint32_t threads = 0;            // CAF scheduler threads; 0 = hardware concurrency
  // Compile jobs the guard runs at once for a lockstep round; 0 = hardware concurrency, 1 =
  // one after the other on the guard's thread.
  uint32_t compile_jobs = 0;
  // The guard blocks on evaluations, so it gets a thread of its own; an evaluator that answers
  // at once (replay) lets it share the scheduler's threads instead. Default on.
  bool guard_thread = true;
  // The log lives in memory (storage::JournalOptions::in_memory): nothing is written under
  // run_dir, and the events are gone once the run returns, so `observer` is the only way to
  // see them. For scratch campaigns (arc-replay ablate); not with resume. Default off.
  bool in_memory_log = false;
  // Builds the evaluator for the problem (host, replay, ...). Required.
  std::function<Result<std::unique_ptr<eval::Evaluator>>(const problem::Problem&)> make_evaluator;
  // The workers (actors/worker_spec.h, already expanded from "auto"); empty: one local worker.
  std::vector<WorkerSpec> workers;
  // Builds the local worker of device N; unset: make_evaluator, for device 0 only.
  std::function<Result<std::unique_ptr<eval::Evaluator>>(const problem::Problem&, int device)>
      make_local_worker;
  // Connects a remote worker (eval/remote_evaluator.h): connect, authenticate, attach the
  // problem. Required when `workers` names one. Called again to win back a lost worker.
  std::function<Result<std::unique_ptr<eval::Evaluator>>(const problem::Problem&,
                                                         const WorkerSpec&)>
      connect_worker;
  // Told, in one sentence each, of workers that could not be reached when the run started (the
  // run goes on with the others and takes them in when they answer).
  std::function<void(const std::string&)> worker_notice;
  // Called for every durable event, in seq order, from an actor thread.
  std::function<void(const events::Event&)> observer;
  // Builtin agents propose only within this restriction of the search space (e.g. the variants
  // a sweep measured: arc-replay ablate --space measured); null (default): the whole space. Not
  // logged: for scratch campaigns against recorded measurements.
  std::shared_ptr<const VariantRestriction> restriction;
  // The run directory's lock (storage/run_lock.h) when the caller holds it already; otherwise
  // run_campaign takes it. None for an in-memory log.
  std::shared_ptr<storage::RunLock> run_lock;
  // Told, in one sentence, what run_campaign did to the run directory before starting (the
  // removal of a log that a run killed before CampaignStarted left); may be empty.
  std::function<void(const std::string&)> notice;
};

// CampaignStarted's software entry naming the device model the campaign measures on
// (Evaluator::device_model); a resumed campaign refuses workers of another.
inline constexpr const char* kDeviceModelKey = "device_model";

struct RunResult {
  std::string campaign_id;
  std::string stop_reason;
  std::filesystem::path run_dir;
  std::filesystem::path log_dir;
  // The run directory's lock, still held so that the caller writes the run's outputs under it.
  std::shared_ptr<storage::RunLock> run_lock;
};

// Everything validated before a run starts: the config with overrides, the problem, skills.
struct PreparedCampaign {
  CampaignConfig config;
  problem::Problem problem;
  std::vector<skills::Skill> skills;
};
Result<PreparedCampaign> prepare_campaign(CampaignConfig config, const RunOptions& options);
// The overrides of `options` (seed, budget, mode) applied to a configuration, as
// prepare_campaign() applies them; lets one prepared campaign serve runs that differ only in
// those.
Status apply_overrides(CampaignConfig& config, const RunOptions& options);

Result<RunResult> run_campaign(PreparedCampaign prepared, const RunOptions& options);

// The log folder inside a run directory.
inline std::filesystem::path log_dir_of(const std::filesystem::path& run_dir) {
  return run_dir / "log";
}

}  // namespace arc::actors
