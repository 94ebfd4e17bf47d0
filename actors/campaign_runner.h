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
#include "eval/evaluator.h"
#include "eval/problem.h"
#include "events/codec.h"
#include "skills/skill.h"

namespace arc::actors {

struct RunOptions {
  std::filesystem::path run_dir;     // must not exist, or be empty (unless resuming)
  bool resume = false;               // continue the campaign logged in run_dir
  std::optional<uint64_t> seed;      // overrides [campaign].seed
  std::optional<uint32_t> budget;    // overrides [campaign].budget
  std::optional<Mode> mode;          // overrides [campaign].mode
  uint32_t threads = 0;              // CAF scheduler threads; 0 = hardware concurrency
  // Builds the evaluator for the problem (host, replay, ...). Required.
  std::function<Result<std::unique_ptr<eval::Evaluator>>(const eval::Problem&)> make_evaluator;
  // Called for every durable event, in seq order, from an actor thread.
  std::function<void(const events::Event&)> observer;
};

struct RunResult {
  std::string campaign_id;
  std::string stop_reason;
  std::filesystem::path run_dir;
  std::filesystem::path log_dir;
};

// Everything validated before a run starts: the config with overrides, the problem, skills.
struct PreparedCampaign {
  CampaignConfig config;
  eval::Problem problem;
  std::vector<skills::Skill> skills;
};
Result<PreparedCampaign> prepare_campaign(CampaignConfig config, const RunOptions& options);

Result<RunResult> run_campaign(PreparedCampaign prepared, const RunOptions& options);

// The log folder inside a run directory.
inline std::filesystem::path log_dir_of(const std::filesystem::path& run_dir) {
  return run_dir / "log";
}

}  // namespace arc::actors
