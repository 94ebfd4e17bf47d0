#pragma once
// How a sweep (actors/sweep.h) measures on several workers at once: one thread per worker, the
// candidates handed out in order to whichever is free, the results taken in candidate order.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/campaign_worker.h"
#include "base/status.h"
#include "eval/evaluator.h"
#include "problem/candidate.h"

namespace arc::actors {

// One candidate measured: its compile and its evaluation, as the log records them (candidate
// hash, input seed, worker and device set).
struct Measured {
  fb::CompileFinishedT compiled;
  fb::CandidateEvaluatedT evaluation;
};

struct MeasureOptions {
  uint64_t seed = 1;  // candidate i's inputs: seed_for(seed, i, 0x5eed)
  eval::EvalSettings evaluation;
  size_t compile_jobs = 1;  // compiled ahead for the local workers
  // Told, in one sentence, of a worker that cannot measure, is refused or joins again.
  std::function<void(const std::string&)> notice;
};

// Measures every candidate of `todo` once and gives each to `take`, in candidate order, on the
// calling thread; stops at the first error `take` returns and returns it. `workers` as
// open_workers() admitted them (actors/campaign_workers.h), at least one connected; each gets a
// thread. Local workers measure what the first local worker's evaluator compiled ahead
// (compile_jobs at a time); remote ones compile on their hosts. A worker that cannot measure
// (its availability() fails) gives its candidate back to the next free worker and is reached
// every second (actors/campaign_worker.h reach_worker), then admitted again only on the run's
// device model and on a device no other worker measures (actors/worker_admission.h); one
// refused for good is left. With none able to measure, it waits for one; with none left at all
// it fails with kUnavailable.
Status measure_in_order(const std::vector<problem::Candidate>& todo,
                        std::vector<CampaignWorker>& workers, const MeasureOptions& options,
                        const std::function<Status(size_t, Measured)>& take);

}  // namespace arc::actors
