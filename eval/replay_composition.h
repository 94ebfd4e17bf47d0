#pragma once
// Compositional replay: the replay evaluator's answer for a candidate its records do not hold
// by hash (a shape-gated composition, typically), put together workload by workload from the
// records of the variant serving each workload (eval/variant_index.h). Pure: no I/O, no clock.
//
// A live evaluation of such a candidate builds each of its distinct variants
// (distinct_variants, eval/worker_client.h) and runs, per workload, the serving variant's
// object on that workload alone; so its compile is the variants' compiles and its workload
// timing is that variant's timing on that workload. The composed answer is:
//   compile   per distinct variant, in that order, the recorded CompiledVariant of that
//             variant; ok unless a recorded one failed. A variant with no recorded compile is
//             listed with ok = true, no object and error "replay: no recorded compile of this
//             variant" (the evaluation says UNANSWERED).
//   workloads in problem order, as the measurement protocol walks them (eval/measure.h):
//             - a recorded compile failure fails every workload with COMPILE_ERROR
//               "variant K: error", as the host and CUDA evaluators do;
//             - else the recorded entry of the serving variant on that workload, copied whole
//               (status, error, samples, statistics, SOL, method, details), with details
//               "replay_composed_from" = the hash of the recorded candidate it comes from;
//               after a recorded failure every later workload is NOT_RUN "not run: workload W
//               failed", as live;
//             - UNANSWERED for a workload whose serving variant was never measured on it
//               ("replay: no recorded measurement of variant K on workload W"), and for one
//               whose serving variant has no recorded compile;
//             - a variant that serves no workload (a base fully gated over, a gate naming no
//               workload) and has no recorded compile makes a first entry "*" UNANSWERED: a live
//               evaluation builds it, and its build could fail.
// What the records cannot make exact, and the answer does not pretend: correctness was checked
// on the recorded candidate's inputs (its input seed), not on the ones this candidate would
// have drawn; the evaluation-level clocks, seed and wall time are left empty.
#include <string>
#include <vector>

#include "eval/replay_evaluator.h"
#include "problem/problem.h"

namespace arc::eval {

// The details key naming the recorded candidate a composed entry was copied from.
inline constexpr const char* kComposedFromKey = "replay_composed_from";

fb::CompileFinishedT compose_compile(const ReplayRecords& records, const problem::Candidate& c,
                                     const std::string& hash,
                                     const std::vector<problem::Workload>& workloads);

// Evaluator "replay", device records.device; no resampling (the caller's).
fb::CandidateEvaluatedT compose_evaluation(const ReplayRecords& records,
                                           const problem::Candidate& c, const std::string& hash,
                                           const std::vector<problem::Workload>& workloads);

}  // namespace arc::eval
