#pragma once
// The builtin agents' "model" move (skills/skill.h): model-based search over the configurations
// of a skill's search space (actors/search_space.h). It fits a surrogate (actors/surrogate.h)
// to every configuration the campaign has evaluated, whichever agent proposed it, and picks the
// unvisited configuration with the largest expected improvement over the best time seen (as
// the model predicts it at the best correct observations: "plug-in" expected improvement).
//
// Observations, from the view's candidates without gates whose base is a configuration of the
// space:
//   - target: the mean over workloads of log(median time), i.e. log of the geometric-mean time,
//     which orders candidates as the guard's score does (lower is better);
//   - a candidate that failed a workload or was REJECTed is bad: its target is the worst
//     correct one plus max(half the spread of the correct ones, log 2), so the model learns
//     where the invalid regions are;
//   - a workload the replay evaluator could not answer says nothing: such a candidate, and one
//     not evaluated yet, is visited but no observation.
// Candidates scored (the pool), never a visited configuration (one any candidate of the view
// already is):
//   - every configuration of the space when it has at most exhaustive_limit of them;
//   - otherwise every neighbour of the best_neighbours best observations, then `samples`
//     configurations drawn uniformly (seeded), duplicates dropped;
//   - with options.restriction listing variants, only the configurations of its variants (a
//     whole-space restriction leaves the pool as above: `admissible` filters it).
// The pick is the pool's configuration with the largest expected improvement that the caller
// admits (`admissible`: e.g. the problem's constraints, the agent's recalled traps; empty: all).
// With fewer than min_observations observations (or fewer than two correct ones, or all alike)
// there is nothing to learn from yet: the pick is an admitted unvisited neighbour of the best
// correct observation or, on a coin flip or when there is none, an admitted configuration of
// the pool at random (`explored`).
//
// Contract: pure and deterministic, a function of (space, anchor, view, seed, options): draws
// come from base/rng.h seeded by `seed`; the view's candidates are read in proposal order; the
// pool is built and scored in a fixed order; ties go to the lower predicted time, then to the
// earlier configuration of the pool. No I/O, no clock, no threads.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "actors/search_space.h"
#include "actors/surrogate.h"
#include "actors/view.h"
#include "problem/candidate.h"

namespace arc::actors {

struct ModelOptions {
  uint32_t min_observations = 8;    // fewer: explore instead of fitting
  double exhaustive_limit = 20000;  // spaces up to this size are scored whole
  uint32_t samples = 3000;          // else: configurations drawn at random and scored
  uint32_t best_neighbours = 4;     // else: plus every neighbour of this many best observations
  // When set and not whole_space, the pool is the unvisited configurations of the space among
  // these variants (in key order) and nothing else, whatever the space's size: the space
  // restricted to them (actors/search_space.h, VariantRestriction). Must outlive the pick.
  const VariantRestriction* restriction = nullptr;
  SurrogateOptions surrogate;
};

// What the view has taught about a space.
struct Observations {
  Samples samples;              // features and target of each observation
  std::vector<Config> configs;  // the configuration of each observation's row
  std::vector<bool> correct;    // per row: every workload correct (else a failure's target)
  std::set<Config> visited;     // every configuration some candidate of the view is
  uint32_t correct_count = 0;
};
Observations observe(const SearchSpace& space, const CampaignView& view);

struct ModelPick {
  problem::Variant variant;
  bool explored = false;  // drawn at random (too little to learn from), not by the model
  Prediction prediction;  // the model's (by the model only)
  double expected_improvement = 0;
  uint32_t observations = 0;
  uint32_t pool = 0;  // unvisited configurations scored
};

using Admissible = std::function<bool(const problem::Variant&)>;

// The move's pick over `space`; `anchor` (the incumbent's base) gives the knobs out of the
// skill's scope. nullopt when the pool holds no admitted unvisited configuration.
std::optional<ModelPick> pick_by_model(const SearchSpace& space, const problem::Variant& anchor,
                                       const CampaignView& view, uint64_t seed,
                                       const Admissible& admissible = {},
                                       const ModelOptions& options = {});

}  // namespace arc::actors
