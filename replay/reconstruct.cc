#include "replay/reconstruct.h"

#include <algorithm>

#include "actors/campaign_runner.h"

namespace arc::replay {

Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started,
                                  const actors::ArtifactSource& artifacts) {
  auto config = actors::parse_campaign(started.config_text, started.config_path,
                                       /*require_inputs=*/false);
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
  auto inputs = actors::restore_run_inputs(started, c.skills, artifacts);
  if (!inputs) return inputs.status();
  for (size_t i = 0; i < c.agents.size(); ++i) {
    const std::string& skill = c.agents[i].skill;
    const auto& loaded = inputs->skills;
    if (std::none_of(loaded.begin(), loaded.end(),
                     [&skill](const skills::Skill& s) { return s.name == skill; })) {
      return Status::missing_input("skills " + c.skills.string() + ": no skill \"" + skill +
                                   "\" (agents[" + std::to_string(i) + "].skill of the run)");
    }
  }
  c.problem = inputs->problem_path;
  c.skills = inputs->skills_path;
  return Reconstructed{started,
                       std::move(c),
                       std::move(inputs->problem),
                       std::move(inputs->skills),
                       std::move(inputs->warnings),
                       std::move(inputs->notes),
                       std::move(inputs->restored)};
}

Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started,
                                  const storage::Journal& journal) {
  return reconstruct(started,
                     [&journal](const std::string& hash) { return journal.get_artifact(hash); });
}

namespace {

// RUN_DIR's log, read whole into `log`; fails unless it begins with CampaignStarted.
Result<std::unique_ptr<storage::Journal>> read_started_log(const std::filesystem::path& run_dir,
                                                           std::vector<events::Event>& log) {
  auto journal = open_run_log(run_dir);
  if (!journal) return journal.status();
  auto all = journal.value()->read_all();
  if (!all) return Status::corruption(run_dir.string() + ": " + all.status().message());
  log = std::move(all.value());
  if (log.empty() || log.front().payload.type != fb::Payload::CampaignStarted) {
    return Status::invalid_argument(run_dir.string() +
                                    ": the log does not begin with CampaignStarted");
  }
  return journal;
}

void tell(const std::vector<std::string>& warnings, const std::vector<std::string>& notes,
          const InputNotice& notice) {
  if (!notice) return;
  for (const auto& w : warnings) notice("warning: " + w);
  for (const auto& n : notes) notice("note: " + n);
}

}  // namespace

Result<Reconstructed> reconstruct_run(const std::filesystem::path& run_dir,
                                      std::vector<events::Event>& log) {
  auto journal = read_started_log(run_dir, log);
  if (!journal) return journal.status();
  return reconstruct(*log.front().payload.AsCampaignStarted(), *journal.value());
}

Result<actors::RunInputs> run_problem(const std::filesystem::path& run_dir,
                                      std::vector<events::Event>& log) {
  auto journal = read_started_log(run_dir, log);
  if (!journal) return journal.status();
  const storage::Journal& j = *journal.value();
  return actors::restore_run_problem(
      *log.front().payload.AsCampaignStarted(),
      [&j](const std::string& hash) { return j.get_artifact(hash); });
}

void tell_input_notices(const Reconstructed& rec, const InputNotice& notice) {
  tell(rec.warnings, rec.notes, notice);
}

void tell_input_notices(const actors::RunInputs& inputs, const InputNotice& notice) {
  tell(inputs.warnings, inputs.notes, notice);
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
