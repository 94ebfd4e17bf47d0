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

#include "actors/campaign_worker.h"
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
  uint32_t compile_jobs = 0;          // 0: hardware concurrency
  std::vector<std::string> families;  // the families swept (empty: all); the seed is always in
  std::function<void(uint32_t done, uint32_t total)> progress;
  // Told, in one sentence, of a worker lost, refused or joining again; may be empty.
  std::function<void(const std::string&)> notice;
};

struct SweepResult {
  uint32_t candidates = 0;
  uint32_t ok = 0;     // every workload OK
  uint64_t space = 0;  // size of the whole space
};

// Every candidate of the space (no gates) within the families' constraints, at most `limit`, in
// a fixed order: families as listed (only those in `families` when it is not empty), knobs in
// lexicographic order of their value indexes.
std::vector<problem::Candidate> search_space(const problem::Problem& problem, uint64_t limit,
                                             const std::vector<std::string>& families = {});
// The number of knob combinations of those families, constraints not applied (the enumeration
// or sample applies them).
uint64_t search_space_size(const problem::Problem& problem,
                           const std::vector<std::string>& families = {});
// A seeded sample of `count` distinct candidates within the constraints, for spaces too large to
// enumerate: each draw picks a family in proportion to its knob combinations and every knob
// uniformly; a draw outside the constraints or already drawn is redrawn (at most 200 draws per
// candidate, so a sparse space can yield fewer). The same on every machine.
std::vector<problem::Candidate> sample_space(const problem::Problem& problem, uint64_t count,
                                             uint64_t seed,
                                             const std::vector<std::string>& families = {});

// Measures on every worker at once (actors/sweep_measure.h) and logs the candidates in
// candidate order, each CandidateEvaluated naming its worker and device, so that the log is the
// same whichever worker measured what (but for those names and the times). `workers` as
// open_workers() opened and admitted them: at least one connected.
Result<SweepResult> run_sweep(const problem::Problem& problem, std::vector<CampaignWorker>& workers,
                              const SweepOptions& options);
// One local evaluator.
Result<SweepResult> run_sweep(const problem::Problem& problem, eval::Evaluator& evaluator,
                              const SweepOptions& options);

}  // namespace arc::actors
