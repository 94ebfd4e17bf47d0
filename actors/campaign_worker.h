#pragma once
// One worker a run measures on (docs/distributed.md): a local evaluator, or a remote
// `arc-eval --serve` worker through eval/remote_evaluator.h, and how to reach it again once it
// is lost. The guard's worker slots (actors/worker_slot.h) and sweeps (actors/sweep.h) share it.
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "eval/evaluator.h"

namespace arc::actors {

// One worker of a campaign (actors/worker_spec.h names it).
struct CampaignWorker {
  std::string name;  // "local", "local:N" or "host:port"
  bool local = true;
  // The worker's evaluator; null while a remote worker is not connected. `owned` holds it when
  // the worker owns it (always, but for a campaign given one evaluator by its caller).
  eval::Evaluator* evaluator = nullptr;
  std::unique_ptr<eval::Evaluator> owned;
  // Remote workers: connects again (connect, authenticate, attach the problem). Null for local
  // workers, whose evaluator is reconnected in place.
  std::function<Result<std::unique_ptr<eval::Evaluator>>()> connect;
  std::string unreachable;  // why `evaluator` is null
};

// Why the worker cannot measure now (not connected, or its evaluator's availability()); empty
// while it can.
std::string lost_reason(const CampaignWorker& w);

// Makes a worker that cannot measure able to again: a remote one connected anew (`connect`), a
// local one reconnected in place; nothing for one that can measure. Ok once it can; else why
// not, with kInvalidArgument when waiting will not mend it (credentials, a problem it cannot
// take). `renewed`: set when its evaluator was connected or reconnected (a new connection may
// be a new worker process, with nothing of the old one's state).
Status reach_worker(CampaignWorker& w, bool* renewed);

}  // namespace arc::actors
