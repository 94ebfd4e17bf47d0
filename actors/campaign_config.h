#pragma once
// A campaign as configured by a campaign.toml (format: docs/campaign-format.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/numeric_range.h"
#include "base/status.h"
#include "eval/evaluator.h"

namespace arc::actors {

// The documented ranges of the campaign's numeric fields (docs/campaign-format.md), shared with
// the flags and ablation changes that override them (arcd run --seed/--budget, arc-replay
// ablate). A value outside its range is refused naming the file (or flag), the field and the
// range; nothing is written.
inline constexpr IntegerRange kSeedRange{0, UINT64_MAX};  // a TOML integer stops at 2^63-1
inline constexpr IntegerRange kBudgetRange{1, 1000000};
inline constexpr IntegerRange kGlobalPlateauRange{1, 1000000, "never"};
inline constexpr IntegerRange kRoundsRange{1, 1000};
inline constexpr IntegerRange kWarmupRange{0, 100000};
inline constexpr IntegerRange kRepetitionsRange{3, 100000};
inline constexpr IntegerRange kBufferSetsRange{1, 64};
inline constexpr NumberRange kTimeoutRange{0.1, 86400, false, false, "seconds"};
inline constexpr IntegerRange kMemoryLimitMbRange{64, 16777216, "no limit"};  // 64 MiB to 16 TiB
inline constexpr NumberRange kMarginRange{0, 1, false, true};
inline constexpr NumberRange kSolMarginRange{0, 1, true, false};
inline constexpr IntegerRange kPairsRange{1, 1000, "unpaired decisions"};
inline constexpr NumberRange kPairBandRange{0, 1, false, true};
inline constexpr NumberRange kPairConfidenceRange{0.5, 1, true, true};
inline constexpr IntegerRange kMemoryBoundRange{1, 1 << 30};  // or "unbounded"
inline constexpr IntegerRange kPlateauWindowRange{1, 1000000};
// Backend sections ([llm], [exec]).
inline constexpr IntegerRange kMaxFailuresRange{1, 1000};

enum class Mode { kAsync, kLockstep };
const char* to_string(Mode m);

// A backend's own settings, read and checked by its AgentBackendKind
// (actors/agent_backend_registry.h): its campaign section ([llm], [exec]) or its fields on one
// [[agents]] entry (llm: model; exec: command). Immutable once read.
class BackendSettings {
 public:
  virtual ~BackendSettings() = default;
  // The settings as TOML `key = value` lines (each ending in a newline) that the reader they
  // came from reads back to equal settings.
  virtual std::string text() const = 0;
};

struct AgentConfig {
  std::string name;
  std::string skill;
  std::string backend = "builtin";  // a name in actors/agent_backend_registry.cc
  // Its backend's fields on this entry (llm: model; exec: command); null when none is given.
  std::shared_ptr<const BackendSettings> fields;
};

struct CampaignConfig {
  std::filesystem::path file;  // the campaign file (absolute)
  std::string text;            // its contents as given
  std::string name;
  std::filesystem::path problem;  // problem.toml or its folder (absolute)
  std::filesystem::path skills;   // skills root (absolute); default <repo>/skills
  uint64_t seed = 1;
  uint32_t budget = 40;  // candidates evaluated, the baseline excluded
  Mode mode = Mode::kLockstep;
  uint32_t global_plateau = 24;     // stop after this many candidates without a KEEP; 0 = never
  std::string durability = "sync";  // sync | batch
  eval::EvalSettings evaluation;
  double margin = 0.02;  // minimum relative improvement for a KEEP
  // [guard] sol_margin: a median below sol_margin x the SOL bound is IMPOSSIBLE; unset: the
  // backend's default (actors/guard_core.h, sol_margin_for: host 1.0, CUDA 0.5).
  std::optional<double> sol_margin;
  // [guard] pairs, pair_band, pair_confidence: paired decisions (actors/guard_core.h).
  uint32_t pairs = 10;  // 0: decisions from the evaluation alone
  double pair_band = 0.05;
  double pair_confidence = 0.95;
  // [guard] margin_scope: "changed" (the margin applies to the workloads a candidate runs
  // another variant on) or "all" (over every workload); actors/guard_core.h.
  std::string margin_scope = "changed";
  // [guard] slower_workloads: "revert" (a paired KEEP slows no workload it changes) or "allow"
  // (the margin alone decides); actors/guard_core.h.
  std::string slower_workloads = "revert";
  // [guard] pair_repetitions: timed repetitions of each side of a pair; unset: [evaluation]
  // repetitions. Its warm-up is [evaluation] warmup; one correctness round on the pair's inputs.
  std::optional<uint32_t> pair_repetitions;
  uint32_t wins_bound = 16;        // 0 = unbounded
  uint32_t traps_bound = 16;       // 0 = unbounded
  uint32_t plateau_window = 8;     // per-agent: candidates without a KEEP before drafting
  bool drafting = true;            // agents switch skill on plateau
  bool sibling_inspection = true;  // drafting agents may adopt a faster sibling's incumbent
  std::vector<AgentConfig> agents;
  // [[workers]] address: the workers it runs on when `arcd run --workers` does not say
  // (actors/worker_spec.h: local, local:N, HOST:PORT); none: auto.
  std::vector<std::string> workers;
  // The backends' sections present in the file ([llm], [exec], ...) by section name, each read
  // and checked by its backend whether or not an agent uses it.
  std::map<std::string, std::shared_ptr<const BackendSettings>> sections;
  std::map<std::string, std::string> overrides;  // command-line overrides applied, for the log

  // Section `name` as its backend's settings type T, or null when the file has none.
  template <class T>
  const T* section(const std::string& name) const {
    auto it = sections.find(name);
    return it == sections.end() ? nullptr : dynamic_cast<const T*>(it->second.get());
  }
};

// Parses campaign text. `file` names the source in errors and anchors relative paths. With
// `require_inputs` (the default) the problem and every agent's skill folder must exist where the
// text names them; replay passes false and reads them from the run's log (actors/run_inputs.h).
Result<CampaignConfig> parse_campaign(const std::string& text, const std::filesystem::path& file,
                                      bool require_inputs = true);
Result<CampaignConfig> load_campaign(const std::filesystem::path& file);

// The campaign as TOML text that parse_campaign reads back to the same configuration (paths
// absolute).
std::string campaign_text(const CampaignConfig& c);

}  // namespace arc::actors
