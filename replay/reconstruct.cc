#include "replay/reconstruct.h"

#include "actors/campaign_runner.h"

namespace arc::replay {

Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started) {
  auto config = actors::parse_campaign(started.config_text, started.config_path);
  if (!config) {
    return Status::invalid_argument("the logged campaign file no longer parses: " +
                                    config.status().message());
  }
  actors::CampaignConfig c = std::move(config.value());
  for (const auto& kv : started.overrides) {
    // Overrides were checked as flags when logged; a value that fails now is refused as it
    // would have been then, never thrown.
    if (kv->key == "seed" || kv->key == "budget") {
      const bool seed = kv->key == "seed";
      auto v = parse_flag_integer(kv->value, seed ? actors::kSeedRange : actors::kBudgetRange);
      if (!v) {
        return Status::invalid_argument("the logged override --" + kv->key + ": " +
                                        v.status().message());
      }
      if (seed) {
        c.seed = *v;
      } else {
        c.budget = static_cast<uint32_t>(*v);
      }
    }
    if (kv->key == "mode")
      c.mode = kv->value == "async" ? actors::Mode::kAsync : actors::Mode::kLockstep;
    c.overrides[kv->key] = kv->value;
  }
  auto problem = problem::load_problem(started.problem_dir);
  if (!problem) return problem.status();
  if (problem->hash != started.problem_hash) {
    return Status::invalid_argument(
        "problem " + started.problem_dir + ": its files changed since the run (hash " +
        problem->hash.substr(0, 12) + ", logged " + started.problem_hash.substr(0, 12) + ")");
  }
  auto skills = skills::load_skills(c.skills);
  if (!skills) return skills.status();
  return Reconstructed{started, std::move(c), std::move(problem.value()),
                       std::move(skills.value())};
}

Result<std::unique_ptr<storage::Journal>> open_run_log(const std::filesystem::path& run_dir) {
  auto dir =
      std::filesystem::exists(actors::log_dir_of(run_dir)) ? actors::log_dir_of(run_dir) : run_dir;
  if (!std::filesystem::exists(dir)) {
    return Status::not_found(run_dir.string() + ": no such run directory");
  }
  storage::JournalOptions jo;
  jo.read_only = true;
  jo.create_if_missing = false;
  return storage::Journal::open(dir.string(), jo);
}

}  // namespace arc::replay
