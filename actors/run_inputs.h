#pragma once
// A run's inputs, kept in its log (DESIGN.md §10; docs/replay-science.md, "Portable runs").
// When a campaign starts, every file it read — the campaign file, the problem's files and shared
// includes (everything the problem hash covers), each skill's skill.toml and SKILL.md — is
// stored as an artifact, and a manifest listing each by path and SHA-256 is stored as one more
// artifact, named by CampaignStarted.inputs_ref. Commands that need the problem or the skills
// later (arc-replay verify, arcd resume, confirm, export) restore them from there, so a run
// directory replays on a machine without the source tree.
//
// Where they are read from on restore:
//   - the problem: the folder the log names when it still loads with the logged hash (its
//     paths stay those of the run); otherwise the log's copy, written into a private temporary
//     folder that lives as long as RunInputs::restored does, with a warning when the folder
//     holds other files ("changed since the run") and a note when it is gone;
//   - the skills: always the log's copy (they are read whole into memory, nothing keeps a path).
// A log without a manifest (written before runs kept their inputs) reads the paths it names, as
// before; a problem that is gone, no longer loads or hashes differently, or skills that are gone,
// are then Status::missing_input. So are a manifest or an artifact the log lacks or whose bytes
// fail their hash, each naming the artifact and the file it holds (exit code 6).
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/campaign_config.h"
#include "base/status.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::storage {
class Journal;
}  // namespace arc::storage

namespace arc::actors {

// What a run read, each file by its SHA-256 (the key of the artifact holding its bytes).
struct RunInputsManifest {
  std::string campaign_path;    // the campaign file as the run named it
  std::string campaign_sha256;  // its text (CampaignStarted.config_text)
  std::string problem_dir;      // the problem folder as the run named it (absolute)
  std::string problem_hash;     // problem::Problem::hash
  // Path relative to problem_dir (problem::Problem::files: "problem.toml", "ref.c",
  // "../common/x.h") -> SHA-256.
  std::map<std::string, std::string> problem_files;
  std::string skills_dir;  // the skills folder as the run named it (absolute)
  // "<skill>/skill.toml" and "<skill>/SKILL.md" -> SHA-256, for every skill under skills_dir.
  std::map<std::string, std::string> skill_files;
};

// The manifest as JSON text (format "kernelarc-run-inputs-v1"), and back. Parsing checks every
// field, every path (relative, no "." or "..", except leading ".." for problem files) and every
// hash; a failure is Status::missing_input naming the field and what was expected.
std::string manifest_text(const RunInputsManifest& m);
Result<RunInputsManifest> parse_manifest(std::string_view text);

// Stores the campaign text, every file of `problem` (problem.files) and every skill's files as
// artifacts of `journal`, then the manifest; returns the manifest's artifact hash, for
// CampaignStarted.inputs_ref.
Result<std::string> store_run_inputs(storage::Journal& journal, const CampaignConfig& config,
                                     const problem::Problem& problem,
                                     const std::vector<skills::Skill>& skills);

// An artifact's bytes by its hash (a run's artifact store, e.g. storage::Journal::get_artifact).
using ArtifactSource = std::function<Result<std::string>(const std::string& hash)>;

struct RunInputs {
  problem::Problem problem;
  std::vector<skills::Skill> skills;
  std::filesystem::path problem_path;  // the folder `problem` was loaded from
  std::filesystem::path skills_path;   // the folder `skills` were loaded from
  // One sentence each. warnings: the problem folder the log names holds other files than the
  // run read (the log's copy was used). notes: it is gone or no longer loads (likewise).
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  // The private folder the log's copy was written into (removed when the last copy of this
  // pointer goes); null when nothing was restored into one. Keep it while `problem` is used:
  // its paths point inside.
  std::shared_ptr<const std::filesystem::path> restored;
};

// The problem of the run that `started` opened, as the file comment says (RunInputs::skills
// stays empty): for what needs the problem alone (summaries, exports), so a log that names no
// campaign text (a sweep's, one built by hand) serves too.
Result<RunInputs> restore_run_problem(const fb::CampaignStartedT& started,
                                      const ArtifactSource& artifacts);

// The problem and skills of the run that `started` opened, as the file comment says.
// `skills_dir`: the skills folder the run's campaign text names (CampaignConfig::skills), read
// for a log without a manifest. Without `artifacts` (a log held in memory) the inputs are read
// where the log names them, as for a log without a manifest.
Result<RunInputs> restore_run_inputs(const fb::CampaignStartedT& started,
                                     const std::filesystem::path& skills_dir,
                                     const ArtifactSource& artifacts);

}  // namespace arc::actors
