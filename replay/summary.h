#pragma once
// A campaign's summary, folded from its log: what `arcd run` prints at the end, what
// `arc-replay show` prints, and what report.md and best/ are written from.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "events/codec.h"

namespace arc::problem {
struct Problem;
}  // namespace arc::problem

namespace arc::replay {

struct AgentSummary {
  std::string name;
  std::string skill;  // current skill
  std::vector<std::string> skills_used;
  uint32_t candidates = 0;
  uint32_t keeps = 0;
  uint32_t reverts = 0;
  uint32_t rejects = 0;
  uint32_t stops = 0;
  uint32_t plateaus = 0;
  uint32_t drafts = 0;
  uint32_t adoptions = 0;
  double best_score = 1.0;
  std::map<std::string, uint32_t> rejects_by_status;
  // llm/exec agents: exchanges logged, those that gave no candidate, tokens and latency.
  uint32_t exchanges = 0;
  uint32_t failed_exchanges = 0;
  uint64_t tokens_in = 0;
  uint64_t tokens_out = 0;
  double exchange_ms = 0;  // summed latency
};

struct WorkloadSummary {
  std::string name;
  double baseline_ns = 0;
  double best_ns = 0;
  double speedup = 0;
  double sol_ns = 0;
  double sol_score = 0;
  // The throttling reasons when the baseline's or the best's time was measured while the GPU
  // throttled (base/throttle.h); empty when it was not, or when that is unknown.
  std::string baseline_throttled;
  std::string best_throttled;
};

// One workload measurement taken while the GPU throttled: its "throttled" detail said yes.
struct ThrottledMeasurement {
  uint64_t seq = 0;  // of the CandidateEvaluated
  std::string candidate_hash;
  std::string agent;  // who proposed the candidate
  std::string workload;
  std::string reasons;  // "sw_power_cap, power_violation"
};

// The "throttled" verdicts of every workload measurement in the log (base/throttle.h).
struct ThrottleSummary {
  uint32_t verdicts = 0;                        // workload measurements that carry one
  uint32_t unknown = 0;                         // of them, "unknown: ..."
  std::string unknown_why;                      // the first unknown verdict's reason
  std::vector<ThrottledMeasurement> throttled;  // in log order
};

struct CampaignSummary {
  std::string campaign_id;
  std::string problem;
  std::string problem_dir;
  std::string kernel_type;
  std::string mode;
  std::string device;
  uint64_t seed = 0;
  uint32_t budget = 0;
  uint64_t events = 0;
  bool stopped = false;
  std::string stop_reason;
  uint32_t candidates = 0;  // decided, the baseline excluded
  uint32_t keeps = 0;
  uint32_t rejects = 0;
  uint32_t wins = 0;
  uint32_t traps = 0;
  uint32_t unanswered = 0;  // candidates the replay evaluator had no measurement of
  std::string best_hash;
  std::string best_canonical;
  std::string best_agent;
  std::string best_move;
  double best_score = 0;
  std::vector<WorkloadSummary> workloads;
  ThrottleSummary throttle;
  std::vector<AgentSummary> agents;
  double wall_seconds = 0;
  std::vector<std::pair<uint32_t, double>> best_curve;  // (candidate index, best score)
};

// `problem`: the run's problem (replay/reconstruct.h), whose workloads name the rows of the
// summary, in order; null: the folder the log names is read, when it is still there.
CampaignSummary summarize(const std::vector<events::Event>& log,
                          const problem::Problem* problem = nullptr);
// Candidates with a workload the replay evaluator could not answer (summarize()'s
// `unanswered`).
uint32_t count_unanswered(const std::vector<events::Event>& log);
// Of those, the candidates with gates (compositions the replay evaluator could not compose).
uint32_t count_unanswered_gated(const std::vector<events::Event>& log);
nlohmann::json to_json(const CampaignSummary& s);
// A fixed-width table for terminals.
std::string to_table(const CampaignSummary& s);
std::string report_markdown(const CampaignSummary& s);

// Writes RUN_DIR/best/ (candidate.json plus, per variant, the family source with its knobs as
// #defines), RUN_DIR/report.md and RUN_DIR/summary.json, each whole or not at all (written
// aside, then renamed into place), so a kill never leaves half an output. With only_missing,
// outputs already present are kept and only the others are written (`arcd resume` of a run
// killed after CampaignStopped); `written` receives the names of those written ("best/",
// "report.md", "summary.json"). Errors name the path and the OS error (replay/run_outputs.cc).
// `problem`: the run's problem (replay/reconstruct.h), whose files best/ shows; null: the folder
// the log names, when it still loads (else best/ holds candidate.json alone).
Status write_run_outputs(const std::filesystem::path& run_dir, const CampaignSummary& s,
                         bool only_missing = false, std::vector<std::string>* written = nullptr,
                         const problem::Problem* problem = nullptr);

// Reads a run directory's whole log (verified).
Result<std::vector<events::Event>> read_run(const std::filesystem::path& run_dir);

}  // namespace arc::replay
