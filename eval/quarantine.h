#pragma once
// Quarantine: a candidate that took the engine or its worker down twice is not run a third time.
// An Evaluator wrapped by with_quarantine() notes, in a file that survives a crash
// (<dir>/<candidate hash>: the number of attempts begun and not finished, counted up and synced
// before an attempt and back down when it returns, the note removed at 0), which candidate it is
// compiling or evaluating. An attempt that never returned (arcd was killed, or died, while on
// it) leaves its count behind; at 2 the candidate is quarantined: compile() answers not ok and
// evaluate() answers CRASH for every workload, "quarantined: ...", without running anything, so
// a resumed campaign decides it (REJECT) instead of dying on it forever.
#include <filesystem>
#include <memory>

#include "eval/evaluator.h"
#include "problem/problem.h"

namespace arc::eval {

inline constexpr int kQuarantineAttempts = 2;

// The notes of one run, shared by all its evaluators: attempts of one candidate under way at
// once on several of them (the pairs of a paired decision) count as one attempt of the process,
// and none of them sees the others' count.
class QuarantineLedger;
std::shared_ptr<QuarantineLedger> open_quarantine(const std::filesystem::path& dir);
std::unique_ptr<Evaluator> with_quarantine(std::unique_ptr<Evaluator> inner,
                                           std::shared_ptr<QuarantineLedger> ledger,
                                           const problem::Problem& problem);
// With a ledger of its own.
std::unique_ptr<Evaluator> with_quarantine(std::unique_ptr<Evaluator> inner,
                                           const std::filesystem::path& dir,
                                           const problem::Problem& problem);

}  // namespace arc::eval
