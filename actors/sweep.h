#pragma once
// arcd sweep: measures a problem's search space once — every family at every combination of
// its knobs, or a seeded sample of them, the seed always included — and records it as a log
// (CampaignStarted with mode "sweep", PeaksMeasured, then per candidate CandidateProposed by
// "sweep", CompileFinished and CandidateEvaluated, then CampaignStopped). The replay evaluator
// answers counterfactual campaigns from it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "base/status.h"
#include "eval/evaluator.h"
#include "problem/candidate.h"
#include "problem/problem.h"

namespace arc::actors {

struct SweepOptions {
  std::filesystem::path run_dir;  // must not exist, or be empty
  uint32_t sample = 0;            // 0: the whole space; else this many candidates
  uint64_t seed = 1;              // sampling and input seeds
  eval::EvalSettings evaluation;
  uint32_t compile_jobs = 0;  // 0: hardware concurrency
  std::function<void(uint32_t done, uint32_t total)> progress;
};

struct SweepResult {
  uint32_t candidates = 0;
  uint32_t ok = 0;     // every workload OK
  uint64_t space = 0;  // size of the whole space
};

// Every candidate of the space (no gates), in a fixed order: families as listed, knobs in
// lexicographic order of their value indexes.
std::vector<problem::Candidate> search_space(const problem::Problem& problem, uint64_t limit);
uint64_t search_space_size(const problem::Problem& problem);

Result<SweepResult> run_sweep(const problem::Problem& problem, eval::Evaluator& evaluator,
                              const SweepOptions& options);

}  // namespace arc::actors
