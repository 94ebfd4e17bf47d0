#pragma once
// Rebuilds a campaign's configuration, problem and skills from its CampaignStarted event, so
// that replay drives the same cores with the same inputs as the live run.
#include <filesystem>
#include <vector>

#include "actors/campaign_config.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"
#include "storage/journal.h"

namespace arc::replay {

struct Reconstructed {
  fb::CampaignStartedT started;
  actors::CampaignConfig config;
  problem::Problem problem;
  std::vector<skills::Skill> skills;
};

// Fails when the problem's files no longer hash to what the log recorded.
Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started);

// Opens a run directory's log read-only (RUN_DIR/log, or RUN_DIR itself if it is a log).
Result<std::unique_ptr<storage::Journal>> open_run_log(const std::filesystem::path& run_dir);

}  // namespace arc::replay
