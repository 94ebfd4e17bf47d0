#pragma once
// The workers of a run, opened before its campaign starts (actors/campaign_runner.h): each
// local worker's evaluator built, each remote worker connected, every measuring one wrapped in
// the run's quarantine (eval/quarantine.h). A local worker that cannot be built fails the run,
// and so do remote ones that refuse it (wrong credentials: kInvalidArgument, each named); a
// remote one that cannot be reached is kept, unconnected, for the guard to reach later (it
// joins when it answers), unless no worker at all can be reached. The connected workers must
// share one device model and never share a device.
#include <filesystem>
#include <string>
#include <vector>

#include "actors/campaign_runner.h"
#include "actors/worker_slot.h"

namespace arc::actors {

struct OpenedWorkers {
  std::vector<CampaignWorker> workers;
  std::string device_model;          // the first connected worker's
  eval::Evaluator* first = nullptr;  // the first connected worker's evaluator
};

// `quarantine_dir` empty: no quarantine (a scratch log).
Result<OpenedWorkers> open_workers(const problem::Problem& problem, const RunOptions& options,
                                   const std::filesystem::path& quarantine_dir);

}  // namespace arc::actors
