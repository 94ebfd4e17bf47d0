#include "replay/verifier.h"

#include <chrono>
#include <system_error>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_runner.h"
#include "replay/reconstruct.h"

namespace arc::replay {
namespace {

// Rebuilds the campaign's inputs from its CampaignStarted (reading the problem's family sources
// where an llm/exec agent's prompts show them) and has the verify core re-derive the log.
VerifyReport verify_reconstructed(const std::vector<events::Event>& log,
                                  const ArtifactLookup& artifacts) {
  if (auto r = verify_preamble(log)) return *r;
  VerifyReport r;
  r.divergence_seq = log.front().seq;
  auto rec = reconstruct(*log.front().payload.AsCampaignStarted(), artifacts);
  if (!rec) {
    r.message = rec.status().message();
    if (rec.status().code() == Status::Code::kMissingInput) {
      r.missing_input = true;
      r.divergence_seq = 0;
    }
    return r;
  }
  actors::CoreSettings settings = actors::core_settings(rec->config);
  std::map<std::string, std::string> family_sources;
  for (const auto& a : settings.agents) {
    if (a.format == nullptr) continue;
    auto sources = problem::read_family_sources(rec->problem);
    if (!sources) {
      r.message = sources.status().message();
      return r;
    }
    family_sources = std::move(sources.value());
    break;
  }
  const actors::CoreFactory cores(std::move(settings), rec->problem, rec->skills, family_sources,
                                  rec->started.device);
  VerifyReport verified = verify_log(log, cores, artifacts);
  verified.warnings = std::move(rec->warnings);
  verified.notes = std::move(rec->notes);
  return verified;
}

}  // namespace

VerifyReport verify_events(const std::vector<events::Event>& log, const ArtifactLookup& artifacts) {
  const auto t0 = std::chrono::steady_clock::now();
  VerifyReport r = verify_reconstructed(log, artifacts);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

VerifyReport verify_run(const std::filesystem::path& run_dir) {
  const auto t0 = std::chrono::steady_clock::now();
  VerifyReport r;
  auto journal = open_run_log(run_dir);
  if (!journal) {
    // No such run (exit 2) unless the folder holds a run's log that cannot be opened: a log
    // that fails its checks, or whose files are gone, is damaged (exit 3).
    std::error_code ec;
    r.message = journal.status().to_string();
    r.damaged = journal.status().code() == Status::Code::kCorruption ||
                (journal.status().code() != Status::Code::kNotFound &&
                 std::filesystem::exists(actors::log_dir_of(run_dir), ec));
    return r;
  }
  std::vector<events::Event> log;
  uint64_t last_good = 0;
  Status s = journal.value()->read(1, 0, [&](uint64_t seq, const events::Event& e) {
    last_good = seq;
    log.push_back(e);
    return true;
  });
  if (!s) {
    // Any failure to read an opened log is damage, never a divergence.
    r.message = s.to_string();
    r.damaged = true;
    r.divergence_seq = last_good + 1;
    r.events = log.size();
    return r;
  }
  const storage::Journal* j = journal.value().get();
  r = verify_events(log, [j](const std::string& hash) { return j->get_artifact(hash); });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace arc::replay
