#pragma once
// arc-replay ablate: counterfactual campaigns against the replay evaluator. Each
// configuration (a variation of a base campaign) runs once per seed, in lockstep, against
// recorded measurements (a sweep and/or campaign logs) resampled per seed; the report gives,
// per configuration, the geometric-mean best speedup at each budget, its ratio to the first
// configuration with a bootstrap 95% confidence interval, the geometric standard-deviation
// factor, and the candidates needed to reach 90/95/99% of the best known (or of a given target
// score), the median over seeds with a bootstrap confidence interval (replay/reach.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "actors/campaign_config.h"
#include "base/status.h"

namespace arc::replay {

struct AblationConfig {
  std::string name;
  // Applied to the base campaign, in order: "agents=1", "wins=16", "traps=unbounded",
  // "drafting=false", "sibling_inspection=false", "plateau_window=8", "global_plateau=24",
  // "skill=model" (every agent starts in that skill), "skill.AGENT=model" (agent AGENT does;
  // e.g. with and without the opt-in model skill, docs/replay-science.md).
  std::vector<std::string> changes;
};

// one-agent, bounded (16/16), unbounded, no-drafting, no-siblings.
std::vector<AblationConfig> default_ablation_configs();
Result<AblationConfig> parse_ablation_config(const std::string& spec);  // NAME:k=v,k=v

struct AblationOptions {
  std::filesystem::path base_campaign;
  std::vector<std::filesystem::path> measurements;  // sweeps or run directories
  std::vector<AblationConfig> configs;
  uint32_t seeds = 5;
  std::vector<uint32_t> budgets = {25, 50, 100, 200};
  uint32_t bootstrap = 2000;       // resamples for the confidence intervals
  std::filesystem::path work_dir;  // scratch; removed afterwards
  // Campaigns run at once, each on its own actor system; 0 = hardware concurrency. The report
  // does not depend on it: every campaign is a pure function of its configuration and seed.
  uint32_t jobs = 0;
  // Where the counterfactual campaigns keep their logs: in memory (default; nothing is written
  // and the events are folded as they are appended), or RocksDB logs under work_dir, appended
  // with durability batch, read back and removed (how ablations ran before; for comparison).
  bool logs_on_disk = false;
  // The score the 90/95/99% to reach are fractions of; 0 (default): the best any campaign of the
  // ablation found. Set it to compare with another search on the same measurements (e.g. the
  // best point of a sweep, docs/replay-science.md).
  double target_score = 0;
  // Every campaign answered exactly from the records (the recorded medians, as when replaying
  // with --resample 0) instead of resampled per seed; the seeds then differ by the agents'
  // choices alone.
  bool exact = false;
  // Where the builtin agents search: false (default), the problem's whole space; true, the
  // measured space: only candidates whose every variant (base and gates) the measurements
  // measured on some workload, the model move scoring those variants alone
  // (actors/search_space.h, VariantRestriction). For a sampled sweep, whose unmeasured points
  // the replay evaluator cannot answer (arc-replay ablate --space measured).
  bool measured_space = false;
  // The candidate every campaign starts from (its baseline: every score is a speedup over it,
  // and it is every agent's first incumbent), named by its hash or a unique prefix of it among
  // the recorded candidates; it must have been measured correct on every workload of the
  // problem. Empty (default): the problem's seed (arc-replay ablate --baseline).
  std::string baseline;
  // Families no builtin agent proposes a variant of (in base or gates), e.g. the seed's
  // library family, to search the others alone; each must be a family of the problem, and the
  // baseline must use none of them. Empty (default): none (arc-replay ablate --exclude-family).
  std::vector<std::string> excluded_families;
};

struct ConfigResult {
  std::string name;
  std::vector<std::string> changes;
  // Per seed: best score after each budget (the final best if the campaign stopped earlier).
  std::vector<std::vector<double>> best_at;
  std::vector<double> geomean_at;                   // per budget
  double ratio = 1, ratio_low = 1, ratio_high = 1;  // vs the first configuration, last budget
  double gsd = 1;  // geometric standard-deviation factor, last budget
  // Per quantile (0.90, 0.95, 0.99): median over seeds of candidates needed; -1 = not reached
  // by at least half of the seeds.
  std::vector<double> to_reach;
  // Per quantile: the bootstrap 95% interval of that median (-1: censored, see replay/reach.h)
  // and the seeds that reached it.
  std::vector<double> to_reach_low, to_reach_high;
  std::vector<uint32_t> seeds_reaching;
  uint32_t unanswered = 0;        // candidates with a workload the measurements could not answer
  uint32_t unanswered_gated = 0;  // of those, candidates with gates (compositions)
  uint32_t candidates = 0;
};

struct AblationReport {
  // The hash of the baseline every campaign logged (they all agree): the problem's seed unless
  // AblationOptions::baseline named another candidate.
  std::string baseline_hash;
  bool baseline_given = false;  // AblationOptions::baseline was set (then reported as such)
  std::vector<std::string> excluded_families;  // AblationOptions::excluded_families
  std::vector<uint32_t> budgets;
  uint32_t seeds = 0;
  double best_known = 1;
  double target = 1;  // what to_reach's quantiles are fractions of (best_known by default)
  std::vector<ConfigResult> configs;
  // [configuration][seed]: (candidate index, campaign best so far).
  std::vector<std::vector<std::vector<std::pair<uint32_t, double>>>> curves;
};

Result<AblationReport> run_ablation(const AblationOptions& options);
std::string to_table(const AblationReport& r);
nlohmann::json to_json(const AblationReport& r);
std::string to_csv(const AblationReport& r);
// Median and interquartile band of the best so far, one colour per configuration.
std::string plot_ablation_svg(const AblationReport& r, const std::string& title);

}  // namespace arc::replay
