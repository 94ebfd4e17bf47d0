#pragma once
// One pair of a paired comparison (DESIGN.md §6 step 6): two compiled candidates evaluated back
// to back on one evaluator (the same worker, unless it had to be restarted) with the same input
// seed, so both see the same fresh inputs, in the order asked. Each side is a full evaluation
// (eval/measure.h): correctness on the pair's inputs first, then timing and the re-check; a side
// that fails reports its status and error, and its timing is then meaningless. The guard pairs a
// candidate with an agent's incumbent (actors/guard_core.h); `arcd confirm` pairs a run's best
// with its baseline.
#include <cstdint>
#include <string>

#include "eval/evaluator.h"

namespace arc::eval {

struct PairSubject {
  const problem::Candidate* candidate = nullptr;
  std::string hash;
  const fb::CompileFinishedT* compiled = nullptr;
};

// The pair as the PairMeasured payload: workloads (in the candidate's evaluation order, each
// with both sides), candidate_first, input_seed, clocks (the second evaluation's) and
// worker_restarts (both); the caller fills agent, index and evaluation_seq. `settings` apply
// to both sides alike.
fb::PairMeasuredT measure_pair(Evaluator& evaluator, const PairSubject& candidate,
                               const PairSubject& incumbent, bool candidate_first,
                               uint64_t input_seed, const EvalSettings& settings);

}  // namespace arc::eval
