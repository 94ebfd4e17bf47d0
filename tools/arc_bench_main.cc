// arc-bench: prints KernelArc's orchestration numbers (docs/performance.md explains them):
//   1. journal appends per second, durability batch and sync;
//   2. orchestration overhead per candidate: a campaign against the replay evaluator, whose
//      evaluations return at once, so the time per candidate is the actors, cores and log;
//   3. arc-replay verify events per second on that campaign's log.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "actors/campaign_runner.h"
#include "eval/evaluators.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "storage/journal.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

arc::events::Event sample_event(uint64_t i) {
  arc::fb::CandidateProposedT p;
  p.candidate_hash = std::string(64, static_cast<char>('a' + i % 6));
  p.agent = "agent-" + std::to_string(i % 4);
  p.parent = std::string(64, 'f');
  p.skill = "tiling";
  p.move = "knob:TILE_M=" + std::to_string(8 << (i % 4));
  p.view_seq = i;
  p.canonical = R"({"base":{"family":"blocked","knobs":{"TILE_K":"32","TILE_M":"64","TILE_N":"64"}}})";
  return arc::events::make_event("agent", std::move(p));
}

double bench_appends(const fs::path& dir, arc::storage::Durability d, uint64_t n) {
  arc::storage::JournalOptions jo;
  jo.durability = d;
  auto j = arc::storage::Journal::open(dir.string(), jo);
  if (!j || !j.value()->set_campaign("bench")) {
    std::fprintf(stderr, "arc-bench: cannot open %s\n", dir.c_str());
    return 0;
  }
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    auto e = sample_event(i);
    if (!j.value()->append(e)) return 0;
  }
  if (!j.value()->sync()) return 0;
  return static_cast<double>(n) / seconds_since(t0);
}

std::string campaign_text(const fs::path& problem, uint32_t budget, const char* mode) {
  return "[campaign]\nname = \"bench\"\nproblem = \"" + problem.string() +
         "\"\nseed = 11\nbudget = " + std::to_string(budget) + "\nmode = \"" + mode +
         "\"\nglobal_plateau = 0\ndurability = \"batch\"\n"
         "[evaluation]\nrounds = 1\nwarmup = 1\nrepetitions = 3\n"
         "[plateau]\nwindow = 8\n"
         "[[agents]]\nname = \"a1\"\nskill = \"tiling\"\n"
         "[[agents]]\nname = \"a2\"\nskill = \"vectorize\"\n"
         "[[agents]]\nname = \"a3\"\nskill = \"pipeline\"\n"
         "[[agents]]\nname = \"a4\"\nskill = \"shape-gate\"\n";
}

// Runs a campaign; returns its run directory (empty on failure).
fs::path run(const fs::path& work, const std::string& name, const std::string& text,
             const arc::eval::EvaluatorChoice& choice, double* seconds, uint32_t* candidates) {
  const fs::path file = work / (name + ".toml");
  std::ofstream(file) << text;
  auto config = arc::actors::parse_campaign(text, file);
  if (!config) {
    std::fprintf(stderr, "arc-bench: %s\n", config.status().message().c_str());
    return {};
  }
  arc::actors::RunOptions o;
  o.run_dir = work / name;
  o.make_evaluator = [choice](const arc::eval::Problem& p) {
    return arc::eval::make_evaluator(choice, p);
  };
  auto prepared = arc::actors::prepare_campaign(std::move(config.value()), o);
  if (!prepared) {
    std::fprintf(stderr, "arc-bench: %s\n", prepared.status().message().c_str());
    return {};
  }
  auto t0 = Clock::now();
  auto r = arc::actors::run_campaign(std::move(prepared.value()), o);
  *seconds = seconds_since(t0);
  if (!r) {
    std::fprintf(stderr, "arc-bench: %s\n", r.status().message().c_str());
    return {};
  }
  auto log = arc::replay::read_run(o.run_dir);
  *candidates = log ? arc::replay::summarize(log.value()).candidates : 0;
  return o.run_dir;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"arc-bench: KernelArc orchestration benchmarks"};
  uint64_t appends = 200000, sync_appends = 2000;
  uint32_t candidates = 1000;
  std::string problem = (arc::actors::arc_home() / "problems/host/matmul").string();
  std::string work_dir;
  app.add_option("--appends", appends, "batched appends to time");
  app.add_option("--sync-appends", sync_appends, "fsynced appends to time");
  app.add_option("--candidates", candidates, "candidates of the replay campaign");
  app.add_option("--problem", problem, "host problem to run");
  app.add_option("--work-dir", work_dir, "scratch folder (default: a new temp folder)");
  CLI11_PARSE(app, argc, argv);

  fs::path work = work_dir.empty() ? fs::temp_directory_path() /
                                         ("arc-bench-" + std::to_string(::getpid()))
                                   : fs::path(work_dir);
  fs::remove_all(work);
  fs::create_directories(work);

  std::printf("# KernelArc orchestration benchmark\n");
  const double batch = bench_appends(work / "journal-batch", arc::storage::Durability::kBatch,
                                     appends);
  const double sync = bench_appends(work / "journal-sync", arc::storage::Durability::kSync,
                                    sync_appends);
  std::printf("journal_appends_per_s_batch %.0f   (%llu events)\n", batch,
              static_cast<unsigned long long>(appends));
  std::printf("journal_appends_per_s_sync  %.0f   (%llu events)\n", sync,
              static_cast<unsigned long long>(sync_appends));

  // Record the seed's measurement on the host, then replay a long campaign against it.
  const fs::path pdir = fs::absolute(problem);
  double t_record = 0;
  uint32_t n_record = 0;
  arc::eval::EvaluatorChoice host;
  const fs::path recorded = run(work, "record", campaign_text(pdir, 4, "lockstep"), host,
                                &t_record, &n_record);
  if (recorded.empty()) return 1;
  arc::eval::EvaluatorChoice replay;
  replay.kind = "replay";
  replay.replay_logs = {recorded};
  for (const char* mode : {"lockstep", "async"}) {
    double t = 0;
    uint32_t n = 0;
    const fs::path dir = run(work, std::string("replay-") + mode,
                             campaign_text(pdir, candidates, mode), replay, &t, &n);
    if (dir.empty()) return 1;
    std::printf("orchestration_ms_per_candidate_%-8s %.3f   (%u candidates in %.2f s, 4 agents)\n",
                mode, n ? 1e3 * t / n : 0.0, n, t);
    auto log = arc::replay::read_run(dir);
    if (!log) return 1;
    auto t0 = Clock::now();
    auto report = arc::replay::verify_events(log.value());
    const double tv = seconds_since(t0);
    auto t1 = Clock::now();
    auto again = arc::replay::verify_run(dir);
    const double tr = seconds_since(t1);
    std::printf("verify_events_per_s_%-8s %.0f in memory, %.0f from disk   (%llu events, %s)\n",
                mode, static_cast<double>(report.events) / tv,
                static_cast<double>(again.events) / tr,
                static_cast<unsigned long long>(report.events),
                report.ok ? "verified" : report.message.c_str());
  }
  fs::remove_all(work);
  return 0;
}
