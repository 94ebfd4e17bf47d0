#pragma once
// arc-replay analyze: who found what. Per agent and per skill of each run — candidates,
// KEEP/REVERT/REJECT, rejects by reason, wins and traps contributed, plateaus, drafts — the
// best-so-far curve per agent, and the same aggregated over runs.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "events/codec.h"

namespace arc::replay {

struct Tally {
  uint32_t candidates = 0, keeps = 0, reverts = 0, rejects = 0, stops = 0;
  uint32_t wins = 0, traps = 0, plateaus = 0, drafts = 0, adoptions = 0;
  std::map<std::string, uint32_t> rejects_by_reason;  // first failing workload status
  double best_score = 1.0;
  void add(const Tally& o);
};

struct RunAnalysis {
  std::string label;  // the run directory as given
  std::string campaign, problem, mode;
  uint32_t candidates = 0;
  double best_score = 1.0;
  std::map<std::string, Tally> agents;
  std::map<std::string, Tally> skills;  // by the skill each candidate was proposed under
  // Campaign candidate index (1-based) -> best score so far, per agent and for the campaign.
  std::map<std::string, std::vector<std::pair<uint32_t, double>>> curves;
  std::vector<std::pair<uint32_t, double>> campaign_curve;
  struct Marker {
    uint32_t index = 0;  // campaign candidate index at which it happened
    std::string agent;
    bool plateau = false;  // else a KEEP
    double score = 1.0;    // the KEEP's score, or the agent's best at its plateau
  };
  std::vector<Marker> markers;
};

RunAnalysis analyze_run(const std::string& label, const std::vector<events::Event>& log);

struct Analysis {
  std::vector<RunAnalysis> runs;
  std::map<std::string, Tally> agents;  // summed over runs
  std::map<std::string, Tally> skills;
};

Analysis aggregate(std::vector<RunAnalysis> runs);
std::string to_table(const Analysis& a);
nlohmann::json to_json(const Analysis& a);

}  // namespace arc::replay
