#pragma once
// Which workers may measure together (docs/distributed.md, "Device models: no ratio across
// them"): a run measures on one device model, so that no timing is ever divided by one from
// another model, and never on one device through two workers, which would be timed at once.
// Pure: the shells (open_workers, the guard's worker slots, sweeps) ask it and say the answer.
#include <string>
#include <utility>
#include <vector>

namespace arc::actors {

struct LiveWorker {
  std::string name;        // "local", "local:N" or "host:port"
  std::string device_key;  // Evaluator::device_key(); empty: not known
};

// Why a worker measuring on `model`, device `key`, may not join a run that measures on
// `run_model` (empty: the worker's is the first) beside `live`: one clause starting with "it"
// ("it measures on ..., the run on ...; ..." or "its device ... is already measured by worker
// ...; ..."), or empty when it may join. An empty key matches no other.
std::string admission_refusal(const std::string& run_model, const std::string& model,
                              const std::string& key, const std::vector<LiveWorker>& live);

}  // namespace arc::actors
