#pragma once
// What a run directory holds before `arcd run` or `arcd resume` touches it, and the start
// request a run records in its log before its first event. A run killed before CampaignStarted
// was logged leaves a log that holds no event (perhaps only part of a RocksDB folder): `arcd
// run` starts such a directory afresh, and `arcd resume` starts the campaign its start request
// names from the beginning. Nothing that holds an acknowledged event is ever removed.
#include <filesystem>
#include <functional>
#include <string>

#include "actors/campaign_runner.h"
#include "base/status.h"

namespace arc::actors {

enum class RunDirState {
  kNew,        // no such folder, or an empty one (a lock file alone counts as empty)
  kUnstarted,  // a log without events, the run's lock file, nothing else: killed while starting
  kStarted,    // a log that holds events (or may: its acknowledged-seq mark says so)
  kForeign,    // files that no run of arcd left there and no log
};

struct RunDirInspection {
  RunDirState state = RunDirState::kNew;
  // kUnstarted: the start request the killed run recorded (start_request_text), or empty when
  // it was killed before recording one.
  std::string start_request;
};

// Reads the run directory without writing to it. A damaged log is an error (corruption), not
// a state.
Result<RunDirInspection> inspect_run_dir(const std::filesystem::path& run_dir);

// Removes the log of a run directory that inspect_run_dir() found kUnstarted, after checking
// again that it holds no event. The caller holds the run's lock (storage/run_lock.h).
Status discard_unstarted_log(const std::filesystem::path& run_dir);

// The start request of a campaign (its file, its text as given, the command-line overrides) as
// the text kept in the log's meta under kStartRequestKey.
inline constexpr char kStartRequestKey[] = "start";
std::string start_request_text(const CampaignConfig& config);
// The campaign a start request names, parsed from its recorded text, and the overrides it
// recorded set in `options` (seed, budget, mode), as prepare_campaign() expects them.
Result<CampaignConfig> campaign_of_start_request(const std::string& request,
                                                 const std::filesystem::path& run_dir,
                                                 RunOptions& options);

}  // namespace arc::actors
