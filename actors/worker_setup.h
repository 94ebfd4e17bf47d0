#pragma once
// How `arcd run` and `arcd resume` find their workers (docs/distributed.md): --workers, else
// the campaign's [[workers]], else auto (actors/worker_spec.h); local workers built with the
// evaluator choice for their device, remote ones connected with the shared secret
// (eval/worker_secret.h: --worker-secret, else its default path), read only when a remote
// worker is named.
#include <string>

#include "actors/campaign_config.h"
#include "actors/campaign_runner.h"
#include "eval/evaluators.h"
#include "problem/problem.h"

namespace arc::actors {

struct WorkerFlags {
  std::string workers;      // --workers; empty: the campaign's [[workers]], else auto
  std::string secret_file;  // --worker-secret; empty: eval::default_worker_secret_path()
};

// Fills options.workers, make_local_worker and connect_worker. "auto" gives one local worker
// per visible GPU for a problem the CUDA backend runs, else one. Errors name the flag or field.
Status configure_workers(RunOptions& options, const CampaignConfig& config,
                         const problem::Problem& problem, const eval::EvaluatorChoice& choice,
                         const WorkerFlags& flags);

}  // namespace arc::actors
