#pragma once
// Builds the evaluator a campaign asks for.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "problem/problem.h"

namespace arc::eval {

struct ReplayRecords;

struct EvaluatorChoice {
  std::string kind = "auto";  // auto (the problem's backend) | host | cuda | replay
  std::vector<std::filesystem::path> replay_logs;  // replay: run directories or logs
  uint64_t resample_seed = 0;                      // replay: 0 answers exactly as recorded
  // replay: measurements already loaded (ReplayRecords::load of replay_logs); when set, the
  // logs are not read again.
  std::shared_ptr<const ReplayRecords> replay_records;
  std::filesystem::path cache_dir;  // host: compile cache; empty = default
};

// The default compile cache: $ARC_CACHE, else $XDG_CACHE_HOME/kernelarc, else
// ~/.cache/kernelarc, else /tmp/kernelarc-cache.
std::filesystem::path default_cache_dir();

Result<std::unique_ptr<Evaluator>> make_evaluator(const EvaluatorChoice& choice,
                                                  const problem::Problem& problem);

}  // namespace arc::eval
