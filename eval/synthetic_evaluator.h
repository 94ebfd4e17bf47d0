#pragma once
// The synthetic backend: measures nothing. It answers every candidate after a fixed wall time
// (the time a real evaluation would take: EvaluatorChoice::synthetic_seconds), with times made
// up from the candidate's hash, so that the orchestration around evaluations (the guard's
// scheduling across workers, remote workers, the log) can be timed apart from any device
// (arc-bench --workers, docs/performance.md). Every workload is OK; equal candidates get equal
// times on every worker, so campaigns over it are as repeatable as over recorded measurements.
#include <memory>

#include "eval/evaluator.h"
#include "problem/problem.h"

namespace arc::eval {

std::unique_ptr<Evaluator> make_synthetic_evaluator(const problem::Problem& problem,
                                                    double seconds_per_evaluation);

}  // namespace arc::eval
