#pragma once
// arc-bench --workers: the scale-out benchmark (docs/performance.md, "Workers"). Starts
// `arc-eval --serve` workers on 127.0.0.1 with the synthetic backend (a fixed wall time per
// evaluation, eval/synthetic_evaluator.h) and prints
//   1. the per-candidate overhead of a remote worker: the compile and evaluate round trips of a
//      candidate to a worker whose evaluations take no time, against the same calls on a local
//      synthetic evaluator;
//   2. candidates per second of a campaign (16 builtin agents on the Hopper GEMM problem, whose
//      space has room for them) on 1, 2, 4 and 8 such workers, with the speed-up over one worker
//      and the efficiency (speed-up / N): async and lockstep with one evaluation per candidate,
//      and async with paired decisions; a hash of the decisions shows that lockstep runs decide
//      alike on any number of workers (async ones need not);
//   3. candidates per second of a sweep of as many candidates on 1, 2, 4 and 8 such workers,
//      with a hash of the candidates and input seeds it logged (the same on any number).
#include <cstdint>
#include <filesystem>

namespace arc::tools {

struct BenchWorkersOptions {
  std::filesystem::path work;         // scratch folder (exists)
  std::filesystem::path problem_dir;  // the campaign's problem (nothing is compiled or run)
  double eval_seconds = 0.25;         // synthetic wall time per evaluation
  uint32_t candidates = 96;           // campaign budget (paired: half)
  uint32_t max_workers = 8;
  uint32_t overhead_calls = 200;
};

int bench_workers(const BenchWorkersOptions& options);

}  // namespace arc::tools
