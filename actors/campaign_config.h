#pragma once
// A campaign as configured by a campaign.toml (format: docs/campaign-format.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "eval/evaluator.h"

namespace arc::actors {

enum class Mode { kAsync, kLockstep };
const char* to_string(Mode m);

struct AgentConfig {
  std::string name;
  std::string skill;
  std::string backend = "builtin";   // builtin | llm | exec
  std::string model;                 // llm: this agent's model ("" = [llm].model)
  std::vector<std::string> command;  // exec: this agent's command (empty = [exec].command)
};

// [llm]: the OpenAI-compatible chat-completions server llm agents talk to (docs/agents.md).
struct LlmConfig {
  std::string base_url;                        // e.g. "http://127.0.0.1:8000/v1"; required
  std::string model;                           // required
  std::string api_key_env = "OPENAI_API_KEY";  // environment variable holding the key
  std::string api_key;                         // the key itself (it enters the log); "" = env
  double temperature = 0.2;
  uint32_t max_tokens = 4096;
  double timeout_s = 300;     // per HTTP attempt (connect and read)
  uint32_t retries = 3;       // further attempts after a 429, a 5xx or a transport error
  double backoff_s = 2;       // wait before the first retry; doubles each time
  uint32_t concurrency = 4;   // requests in flight at once, over all llm agents
  uint32_t max_failures = 5;  // consecutive failed exchanges after which an agent stops
};

// [exec]: the command exec agents run once per proposal (context JSON on stdin, candidate on
// stdout).
struct ExecConfig {
  std::vector<std::string> command;  // argv; a relative argv[0] with a '/' is relative to the
                                     // campaign file; required when an agent uses exec
  double timeout_s = 120;
  uint32_t max_failures = 5;
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
  double margin = 0.02;            // minimum relative improvement for a KEEP
  // [guard] sol_margin: a median below sol_margin x the SOL bound is IMPOSSIBLE; unset: the
  // backend's default (actors/guard_core.h, sol_margin_for: host 1.0, CUDA 0.5).
  std::optional<double> sol_margin;
  uint32_t wins_bound = 16;        // 0 = unbounded
  uint32_t traps_bound = 16;       // 0 = unbounded
  uint32_t plateau_window = 8;     // per-agent: candidates without a KEEP before drafting
  bool drafting = true;            // agents switch skill on plateau
  bool sibling_inspection = true;  // drafting agents may adopt a faster sibling's incumbent
  std::vector<AgentConfig> agents;
  LlmConfig llm;
  ExecConfig exec;
  std::map<std::string, std::string> overrides;  // command-line overrides applied, for the log
};

// Parses campaign text. `file` names the source in errors and anchors relative paths.
Result<CampaignConfig> parse_campaign(const std::string& text, const std::filesystem::path& file);
Result<CampaignConfig> load_campaign(const std::filesystem::path& file);

// The campaign as TOML text that parse_campaign reads back to the same configuration (paths
// absolute).
std::string campaign_text(const CampaignConfig& c);


}  // namespace arc::actors
