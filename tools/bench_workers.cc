#include "tools/bench_workers.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>

#include "actors/campaign_runner.h"
#include "actors/campaign_workers.h"
#include "actors/sweep.h"
#include "actors/worker_setup.h"
#include "base/arc_home.h"
#include "base/sha256.h"
#include "base/stats.h"
#include "eval/remote_evaluator.h"
#include "eval/serve_process.h"
#include "eval/synthetic_evaluator.h"
#include "eval/worker_client.h"
#include "eval/worker_secret.h"
#include "problem/problem.h"
#include "replay/summary.h"

namespace arc::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The campaign a throughput run uses: the problem with 16 builtin agents (four per skill), so
// that 8 workers always have work queued, in `mode`, with `pairs` pairs per paired decision
// (0: decisions from the evaluation alone, one evaluation per candidate).
fs::path write_campaign(const fs::path& work, const fs::path& problem_dir, uint32_t budget,
                        const std::string& mode, uint32_t pairs) {
  fs::path file = work / ("campaign-" + mode + "-" + std::to_string(pairs) + ".toml");
  std::ofstream out(file);
  out << "[campaign]\nname = \"bench-workers\"\nproblem = \""
      << (problem_dir / "problem.toml").string() << "\"\nskills = \""
      << (arc_home() / "skills").string() << "\"\nseed = 1\nbudget = " << budget << "\nmode = \""
      << mode << "\"\nglobal_plateau = 0\n\n[evaluation]\nrounds = 1\nwarmup = 1\nrepetitions = 3\n"
      << "\n[guard]\npairs = " << pairs << "\n";
  const char* skills[] = {"tiling", "pipeline", "launch", "model"};
  for (int i = 0; i < 16; ++i) {
    out << "\n[[agents]]\nname = \"a" << i << "\"\nskill = \"" << skills[i % 4] << "\"\n";
  }
  return file;
}

struct ThroughputRun {
  uint32_t workers = 0;
  uint32_t candidates = 0;   // decided, the baseline and STOPs excluded
  uint32_t evaluations = 0;  // candidate evaluations + both sides of every pair
  double seconds = 0;        // from the baseline's decision to the last decision
  std::string decisions;     // hash of every decision, in order
};

Result<ThroughputRun> run_campaign_on(const BenchWorkersOptions& o, const fs::path& campaign,
                                      const std::string& workers, const fs::path& secret,
                                      const std::string& name) {
  auto config = actors::load_campaign(campaign);
  if (!config) return config.status();
  actors::RunOptions options;
  options.run_dir = o.work / name;
  options.make_evaluator = [](const problem::Problem& p) {
    return Result<std::unique_ptr<eval::Evaluator>>(eval::make_synthetic_evaluator(p, 0));
  };
  auto prepared = actors::prepare_campaign(std::move(config.value()), options);
  if (!prepared) return prepared.status();
  eval::EvaluatorChoice choice;
  if (auto s = actors::configure_workers(options, prepared->config, prepared->problem, choice,
                                         actors::WorkerFlags{workers, secret.string()});
      !s) {
    return s;
  }
  ThroughputRun r;
  std::mutex mu;
  Clock::time_point first{}, last{};
  std::string decisions;
  options.observer = [&](const events::Event& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (const auto* d = e.payload.AsDecision()) {
      if (d->agent == "campaign") {
        first = Clock::now();
      } else if (d->verdict != fb::Verdict::STOP) {
        ++r.candidates;
        last = Clock::now();
      }
      decisions += d->candidate_hash + fb::EnumNameVerdict(d->verdict);
    } else if (e.payload.AsCandidateEvaluated() != nullptr) {
      ++r.evaluations;
    } else if (e.payload.AsPairMeasured() != nullptr) {
      r.evaluations += 2;
    }
  };
  auto result = actors::run_campaign(std::move(prepared.value()), options);
  if (!result) return result.status();
  r.seconds = std::chrono::duration<double>(last - first).count();
  r.decisions = sha256_hex(decisions).substr(0, 12);
  return r;
}

struct SweepRun {
  uint32_t candidates = 0;
  double seconds = 0;
  std::string log;  // hash of the candidates and input seeds logged, in order
};

// `arcd sweep --sample N` of the problem on `workers`, timed from the first candidate handed out
// to the last logged.
Result<SweepRun> run_sweep_on(const BenchWorkersOptions& o, const problem::Problem& problem,
                              const std::string& workers, const fs::path& secret,
                              const std::string& name) {
  actors::RunOptions options;
  options.make_evaluator = [](const problem::Problem& p) {
    return Result<std::unique_ptr<eval::Evaluator>>(eval::make_synthetic_evaluator(p, 0));
  };
  eval::EvaluatorChoice choice;
  if (auto s = actors::configure_workers(options, actors::CampaignConfig{}, problem, choice,
                                         actors::WorkerFlags{workers, secret.string()});
      !s) {
    return s;
  }
  auto opened = actors::open_workers(problem, options, {});
  if (!opened) return opened.status();
  actors::SweepOptions so;
  so.run_dir = o.work / name;
  so.sample = o.candidates;
  so.seed = 1;
  so.evaluation.rounds = 1;
  SweepRun r;
  Clock::time_point t0{}, t1{};
  so.progress = [&](uint32_t done, uint32_t) {
    if (done == 1) t0 = Clock::now();
    t1 = Clock::now();
  };
  auto swept = actors::run_sweep(problem, opened->workers, so);
  if (!swept) return swept.status();
  r.candidates = swept->candidates - 1;  // timed from the first logged
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  auto log = replay::read_run(so.run_dir);
  if (!log) return log.status();
  std::string text;
  for (const auto& e : log.value()) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      text += ev->candidate_hash + std::to_string(ev->input_seed);
    }
  }
  r.log = sha256_hex(text).substr(0, 12);
  return r;
}

// Median seconds per candidate (compile + evaluate) over `calls` calls on `ev`.
double per_candidate(eval::Evaluator& ev, const problem::Problem& problem, uint32_t calls) {
  std::vector<double> times;
  for (uint32_t i = 0; i < calls; ++i) {
    const std::string hash = problem.seed.hash();  // a worker checks the hash it is given
    const auto t0 = Clock::now();
    auto compiled = ev.compile(problem.seed, hash);
    eval::EvalRequest req;
    req.candidate = problem.seed;
    req.candidate_hash = hash;
    req.settings.rounds = 1;
    ev.evaluate(req, compiled);
    times.push_back(since(t0));
  }
  return median(times);
}

// The first n workers' addresses as `--workers` takes them (comma-separated).
std::string worker_list(const std::vector<std::unique_ptr<eval::ServeProcess>>& workers,
                        uint32_t n) {
  std::string list;
  for (uint32_t i = 0; i < n; ++i) {
    list += (list.empty() ? "" : ",") + workers[i]->endpoint().text();
  }
  return list;
}

}  // namespace

int bench_workers(const BenchWorkersOptions& o) {
  const fs::path arc_eval = eval::default_worker_path();
  const fs::path secret = o.work / "worker.secret";
  if (auto s = eval::write_new_worker_secret(secret); !s) {
    std::fprintf(stderr, "arc-bench: %s\n", s.message().c_str());
    return 1;
  }
  auto problem = problem::load_problem(o.problem_dir);
  if (!problem) {
    std::fprintf(stderr, "arc-bench: %s\n", problem.status().message().c_str());
    return 1;
  }
  auto start = [&](double seconds, const std::string& name) {
    return eval::ServeProcess::start(
        arc_eval, "127.0.0.1:0",
        {"--backend", "synthetic", "--synthetic-seconds", std::to_string(seconds), "--secret-file",
         secret.string(), "--sandbox", "off", "--cache", (o.work / ("cache-" + name)).string()},
        o.work / (name + ".stderr"));
  };

  std::printf("# KernelArc scale-out benchmark: synthetic workers on 127.0.0.1\n");
  // 1. Overhead of a remote worker per candidate.
  auto instant = start(0, "instant");
  if (!instant) {
    std::fprintf(stderr, "arc-bench: %s\n", instant.status().message().c_str());
    return 1;
  }
  eval::RemoteEvaluatorOptions ro;
  ro.endpoint = instant.value()->endpoint();
  auto secret_text = eval::read_worker_secret(secret);
  ro.secret = secret_text.value();
  auto remote = eval::make_remote_evaluator(problem.value(), ro);
  if (!remote) {
    std::fprintf(stderr, "arc-bench: %s\n", remote.status().message().c_str());
    return 1;
  }
  auto local = eval::make_synthetic_evaluator(problem.value(), 0);
  per_candidate(*remote.value(), problem.value(), 20);  // warm up both
  per_candidate(*local, problem.value(), 20);
  const double t_remote = per_candidate(*remote.value(), problem.value(), o.overhead_calls);
  if (auto s = remote.value()->availability(); !s) {
    std::fprintf(stderr, "arc-bench: %s\n", s.message().c_str());
    return 1;
  }
  const double t_local = per_candidate(*local, problem.value(), o.overhead_calls);
  std::printf(
      "remote_overhead_per_candidate_ms %.3f (compile + evaluate round trips, median of %u: "
      "remote %.3f ms, local %.3f ms; %zu workloads)\n",
      1e3 * (t_remote - t_local), o.overhead_calls, 1e3 * t_remote, 1e3 * t_local,
      problem->workloads.size());
  remote.value().reset();
  instant.value().reset();

  // 2. Throughput on 1, 2, 4, 8 workers.
  std::vector<std::unique_ptr<eval::ServeProcess>> workers;
  for (uint32_t i = 0; i < o.max_workers; ++i) {
    auto w = start(o.eval_seconds, "w" + std::to_string(i));
    if (!w) {
      std::fprintf(stderr, "arc-bench: %s\n", w.status().message().c_str());
      return 1;
    }
    workers.push_back(std::move(w.value()));
  }
  struct Config {
    const char* mode;
    uint32_t pairs;
    uint32_t budget;
  };
  for (const Config& c : {Config{"async", 0, o.candidates}, Config{"lockstep", 0, o.candidates},
                          Config{"async", 10, o.candidates / 2}}) {
    const fs::path campaign = write_campaign(o.work, o.problem_dir, c.budget, c.mode, c.pairs);
    std::printf("\n%s, %s, evaluation %.3f s, budget %u candidates, 16 agents\n", c.mode,
                c.pairs == 0 ? "unpaired (one evaluation per candidate)"
                             : "paired (10 pairs per would-be KEEP)",
                o.eval_seconds, c.budget);
    std::printf("%8s %10s %11s %9s %10s %8s %10s %9s\n", "workers", "candidates", "evaluations",
                "seconds", "cand/s", "speedup", "efficiency", "decisions");
    double base_rate = 0;
    for (uint32_t n = 1; n <= o.max_workers; n *= 2) {
      auto r = run_campaign_on(
          o, campaign, worker_list(workers, n), secret,
          std::string("run-") + c.mode + "-" + std::to_string(c.pairs) + "-" + std::to_string(n));
      if (!r) {
        std::fprintf(stderr, "arc-bench: %u workers: %s\n", n, r.status().message().c_str());
        return 1;
      }
      const double rate = r->seconds > 0 ? r->candidates / r->seconds : 0;
      if (n == 1) base_rate = rate;
      const double speedup = base_rate > 0 ? rate / base_rate : 0;
      std::printf("%8u %10u %11u %9.2f %10.2f %8.2f %10.3f %9s\n", n, r->candidates, r->evaluations,
                  r->seconds, rate, speedup, speedup / n, r->decisions.c_str());
      std::fflush(stdout);
    }
  }

  // 3. A sweep of the same number of candidates on 1, 2, 4, 8 workers.
  std::printf("\nsweep (--sample %u), evaluation %.3f s\n", o.candidates, o.eval_seconds);
  std::printf("%8s %10s %9s %10s %8s %10s %12s\n", "workers", "candidates", "seconds", "cand/s",
              "speedup", "efficiency", "log");
  double base_rate = 0;
  for (uint32_t n = 1; n <= o.max_workers; n *= 2) {
    auto r = run_sweep_on(o, problem.value(), worker_list(workers, n), secret,
                          "sweep-" + std::to_string(n));
    if (!r) {
      std::fprintf(stderr, "arc-bench: sweep on %u workers: %s\n", n, r.status().message().c_str());
      return 1;
    }
    const double rate = r->seconds > 0 ? r->candidates / r->seconds : 0;
    if (n == 1) base_rate = rate;
    const double speedup = base_rate > 0 ? rate / base_rate : 0;
    std::printf("%8u %10u %9.2f %10.2f %8.2f %10.3f %12s\n", n, r->candidates, r->seconds, rate,
                speedup, speedup / n, r->log.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace arc::tools
