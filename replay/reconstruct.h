#pragma once
// Rebuilds a campaign's configuration, problem and skills from its CampaignStarted event, so
// that replay drives the same cores with the same inputs as the live run.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/campaign_config.h"
#include "actors/run_inputs.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"
#include "storage/journal.h"

namespace arc::replay {

struct Reconstructed {
  fb::CampaignStartedT started;
  actors::CampaignConfig config;  // its problem and skills: the folders they were read from
  problem::Problem problem;
  std::vector<skills::Skill> skills;
  // What restoring the inputs had to say (actors/run_inputs.h): warnings (the problem's files
  // changed since the run; the log's copy was used) and notes (the problem folder is gone).
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  // Keeps the log's copy of the problem on disk while `problem` is used (may be null).
  std::shared_ptr<const std::filesystem::path> restored;
};

// The run's inputs as actors::restore_run_inputs() finds them, read from `artifacts` (the run's
// artifact store). Fails with Status::missing_input when they are neither in the log nor
// unchanged where the log names them; with invalid_argument when the logged campaign text or
// an override no longer parses. Without `artifacts` (a log held in memory) the inputs are read
// where the log names them.
Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started,
                                  const actors::ArtifactSource& artifacts = {});

// Reconstructs the campaign of the log `journal` holds, whose first event is `started`.
Result<Reconstructed> reconstruct(const fb::CampaignStartedT& started,
                                  const storage::Journal& journal);

// Reads RUN_DIR's whole log (verified) into `log` and reconstructs the campaign its first event
// started, reading the run's inputs from the log's artifacts. Fails with corruption when the log
// is damaged, invalid_argument when it does not begin with CampaignStarted, and as reconstruct()
// does.
Result<Reconstructed> reconstruct_run(const std::filesystem::path& run_dir,
                                      std::vector<events::Event>& log);

// The problem alone of the run in RUN_DIR (actors::restore_run_problem; no campaign text or
// skills needed), its log read whole into `log`; fails as reconstruct_run() does.
Result<actors::RunInputs> run_problem(const std::filesystem::path& run_dir,
                                      std::vector<events::Event>& log);

// Opens a run directory's log read-only (RUN_DIR/log, or RUN_DIR itself if it is a log).
Result<std::unique_ptr<storage::Journal>> open_run_log(const std::filesystem::path& run_dir);

// Told one line at a time what restoring a run's inputs found ("warning: ..." or "note: ...").
using InputNotice = std::function<void(const std::string& line)>;
// Tells `notice` (when set) the warnings, then the notes, of a reconstruction.
void tell_input_notices(const Reconstructed& rec, const InputNotice& notice);
void tell_input_notices(const actors::RunInputs& inputs, const InputNotice& notice);

}  // namespace arc::replay
