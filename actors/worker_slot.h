#pragma once
// A worker slot: the actor through which the guard measures on one worker (DESIGN.md §9). It
// owns nothing but a pointer to the worker's Evaluator (a local backend, or a remote worker
// through eval/remote_evaluator.h) and the compiles it made, and runs one job at a time on its
// own thread (the calls block), so the guard dispatches to several workers at once and stays
// free to log and decide. Handles:
//   (evaluate_atom, EvalJob) -> EvalOutcome   compile (or take the guard's compile when the
//                                               worker is local) and evaluate
//   (pair_atom, PairJob)     -> PairOutcome   one pair of a paired decision (eval/pair.h),
//                                               both sides on this worker
//   (peaks_atom)              -> PeaksOutcome
//   (reach_atom)              -> ConnectOutcome  (re)connect a worker that is not reachable,
//                                               and say which device it measures on
// An outcome whose `lost` is set comes from a worker that went away during the call (the
// evaluator's availability() says why): nothing in it belongs to the candidate.
#include <functional>
#include <memory>
#include <string>

#include "actors/campaign_worker.h"
#include "caf/all.hpp"
#include "eval/evaluator.h"
#include "problem/problem.h"

namespace arc::actors {

// `worker` outlives the actor. `detached`: give it a thread of its own (its calls block); off
// for evaluators that answer at once (replay).
caf::actor spawn_worker_slot(caf::actor_system& sys, CampaignWorker* worker,
                             const problem::Problem* problem, bool detached);

}  // namespace arc::actors
