#pragma once
// The evaluator backends, registered in one table (eval/evaluators.cc): each name with its
// factory. "auto" is the problem's own backend ("host" or "cuda"). Adding a backend: its
// Evaluator (eval/<name>_evaluator.{h,cc}) and one line in the table; the command line's
// --evaluator choices come from here.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/sandbox.h"
#include "problem/problem.h"

namespace arc::eval {

struct ReplayRecords;

struct EvaluatorChoice {
  std::string kind = "auto";  // "auto" (the problem's backend) or a registered backend's name
  std::vector<std::filesystem::path> replay_logs;  // replay: run directories or logs
  uint64_t resample_seed = 0;                      // replay: 0 answers exactly as recorded
  // replay: measurements already loaded (ReplayRecords::load of replay_logs); when set, the
  // logs are not read again.
  std::shared_ptr<const ReplayRecords> replay_records;
  std::filesystem::path cache_dir;  // host: compile cache; empty = default
  int device = 0;                   // cuda: the device ordinal (actors/worker_spec.h local:N)
  double synthetic_seconds = 0.5;   // synthetic: wall time per evaluation
  // Where measuring backends compile and run candidates (eval/sandbox.h); arcd detects it from
  // --sandbox. Disabled: unconfined.
  Sandbox sandbox = Sandbox::disabled("not requested");
};

// The default compile cache: $ARC_CACHE, else $XDG_CACHE_HOME/kernelarc, else
// ~/.cache/kernelarc, else /tmp/kernelarc-cache.
std::filesystem::path default_cache_dir();

struct EvaluatorBackend {
  const char* name;
  // Measures on a device (false: answers from recorded measurements, as replay does).
  bool measures;
  Result<std::unique_ptr<Evaluator>> (*make)(const EvaluatorChoice& choice,
                                             const problem::Problem& problem);
};

// The backend named `name`, or null ("auto" is no backend of its own).
const EvaluatorBackend* find_evaluator_backend(const std::string& name);
// "auto" and every registered name, in table order; only those that measure when
// `measuring_only`.
std::vector<std::string> evaluator_choices(bool measuring_only = false);

// The evaluator `choice.kind` names, for `problem` ("auto": the problem's backend).
Result<std::unique_ptr<Evaluator>> make_evaluator(const EvaluatorChoice& choice,
                                                  const problem::Problem& problem);

}  // namespace arc::eval
