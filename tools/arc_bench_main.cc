// arc-bench: prints KernelArc's orchestration numbers (docs/performance.md explains them):
//   1. journal appends per second, durability batch and sync;
//   2. orchestration overhead per candidate: a campaign against the replay evaluator, whose
//      evaluations return at once, so the time per candidate is the actors, cores and log;
//   3. arc-replay verify events per second on that campaign's log.
// With --model: the builtin model move's cost (actors/model_move.h): a builtin agent in the
// model skill proposes --candidates candidates on synthetic spaces (scored whole, and sampled),
// each evaluated by a made-up time at once; the time is its core's propose() calls, against the
// same agent with neighbour and jump moves only.
// With --ablate: arc-replay ablate candidates per second on a shipped sweep, one campaign at a
// time with RocksDB logs on disk (how ablations ran before) against in-memory logs and
// parallel campaigns, and optionally against another arc-replay binary (--baseline), rounds
// interleaved; every report must be byte-identical.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/agent_core.h"
#include "actors/campaign_runner.h"
#include "actors/memory_core.h"
#include "actors/view.h"
#include "base/arc_home.h"
#include "eval/evaluators.h"
#include "events/printer.h"
#include "replay/ablate.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "storage/journal.h"
#include "tools/bench_workers.h"
#include "tools/integer_flag.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Ranges of arc-bench's numeric flags (--candidates shares [campaign].budget's).
constexpr arc::IntegerRange kAppendsRange{1, 100000000};
constexpr arc::IntegerRange kSeedsRange{1, 100000};
constexpr arc::IntegerRange kRoundsRange{1, 1000};
constexpr arc::IntegerRange kWorkersRange{1, 64};

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
  p.canonical =
      R"({"base":{"family":"blocked","knobs":{"TILE_K":"32","TILE_M":"64","TILE_N":"64"}}})";
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

// A 4-agent campaign with the cheapest evaluation settings, so that recording it is quick.
std::string campaign_text(const fs::path& problem, uint32_t budget, const char* durability) {
  return "[campaign]\nname = \"bench\"\nproblem = \"" + problem.string() +
         "\"\nseed = 11\nbudget = " + std::to_string(budget) +
         "\nmode = \"lockstep\"\nglobal_plateau = 0\ndurability = \"" + durability +
         "\"\n"
         "[evaluation]\nrounds = 1\nwarmup = 0\nrepetitions = 3\nbuffer_sets = 1\n"
         "flush_cache = false\n"
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
  o.make_evaluator = [choice](const arc::problem::Problem& p) {
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

double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Timing {
  double wall = 0, cpu = 0;
  uint32_t candidates = 0;
  std::string json;  // the report
};

uint32_t candidates_of(const nlohmann::json& report) {
  uint32_t n = 0;
  for (const auto& c : report["configs"]) n += c["candidates"].get<uint32_t>();
  return n;
}

// One in-process ablation.
Timing ablate_here(arc::replay::AblationOptions o) {
  Timing t;
  const double c0 = cpu_seconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  auto r = arc::replay::run_ablation(o);
  t.wall = seconds_since(t0);
  t.cpu = cpu_seconds(RUSAGE_SELF) - c0;
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  if (!r) {
    std::fprintf(stderr, "arc-bench: %s\n", r.status().message().c_str());
    return t;
  }
  const auto j = arc::replay::to_json(r.value());
  t.candidates = candidates_of(j);
  t.json = arc::events::dump_json(j, 2) + "\n";
  return t;
}

// The same ablation by another arc-replay binary, as a child process.
Timing ablate_by(const std::string& binary, const arc::replay::AblationOptions& o,
                 const fs::path& json_file) {
  Timing t;
  std::vector<std::string> args = {binary, "ablate", o.base_campaign.string()};
  for (const auto& m : o.measurements) args.insert(args.end(), {"--from", m.string()});
  std::string budgets;
  for (uint32_t b : o.budgets) budgets += (budgets.empty() ? "" : ",") + std::to_string(b);
  args.insert(args.end(), {"--seeds", std::to_string(o.seeds), "--budgets", budgets, "--json",
                           json_file.string(), "--work-dir", o.work_dir.string()});
  for (const auto& c : o.configs) {
    std::string spec = c.name + ":";
    for (size_t i = 0; i < c.changes.size(); ++i) spec += (i ? "," : "") + c.changes[i];
    args.insert(args.end(), {"--config", spec});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) _exit(126);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage u{};
  if (pid < 0 || wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "arc-bench: %s ablate failed\n", binary.c_str());
    return t;
  }
  t.wall = seconds_since(t0);
  t.cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
          1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  std::ifstream in(json_file);
  std::stringstream ss;
  ss << in.rdbuf();
  t.json = ss.str();
  auto j = nlohmann::json::parse(t.json, nullptr, /*allow_exceptions=*/false);
  t.candidates = j.is_discarded() ? 0 : candidates_of(j);
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int bench_ablate(const std::string& sweep_problem, uint32_t seeds, uint32_t rounds,
                 const std::string& baseline, bool current_only, const fs::path& work) {
  const fs::path home = arc::arc_home();
  arc::replay::AblationOptions o;
  o.base_campaign = home / "problems/host" / sweep_problem / "campaign.toml";
  o.measurements = {home / "tests/data/sweeps" / ("host-" + sweep_problem)};
  o.seeds = seeds;
  // The ablation the target is stated for: three configurations (one agent, several agents
  // with memory bounded to 16/16, several unbounded) x seeds x 100 candidates.
  const auto defaults = arc::replay::default_ablation_configs();
  o.configs.assign(defaults.begin(), defaults.begin() + 3);
  o.budgets = {25, 50, 100};
  struct Mode {
    std::string name;
    bool on_disk;
    uint32_t jobs;
    bool external;
  };
  std::vector<Mode> modes = {{"logs on disk, 1 campaign at a time", true, 1, false},
                             {"logs in memory, 1 campaign at a time", false, 1, false},
                             {"logs in memory, 1 campaign per core", false, 0, false}};
  if (current_only) modes.erase(modes.begin(), modes.end() - 1);
  if (!baseline.empty()) modes.insert(modes.begin(), {"baseline: " + baseline, true, 1, true});
  std::printf(
      "# arc-replay ablate: %s, sweep %s, %zu configurations x %u seeds x budget %u, "
      "%u rounds interleaved, %u cores\n",
      o.base_campaign.c_str(), o.measurements[0].c_str(), o.configs.size(), seeds, o.budgets.back(),
      rounds, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::vector<Timing>> runs(modes.size());
  for (uint32_t r = 0; r < rounds; ++r) {
    for (size_t m = 0; m < modes.size(); ++m) {
      arc::replay::AblationOptions mo = o;
      mo.work_dir = work / ("ablate-" + std::to_string(m));
      mo.logs_on_disk = modes[m].on_disk;
      mo.jobs = modes[m].jobs;
      runs[m].push_back(modes[m].external ? ablate_by(baseline, mo, work / "baseline.json")
                                          : ablate_here(mo));
      if (runs[m].back().candidates == 0) return 1;
    }
  }
  const std::string& reference = runs.back().front().json;
  bool identical = true;
  for (const auto& mode_runs : runs) {
    for (const auto& t : mode_runs) identical &= t.json == reference;
  }
  std::vector<double> rate(modes.size()), cpu_us(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    std::vector<double> walls, cpus;
    for (const auto& t : runs[m]) {
      walls.push_back(t.wall);
      cpus.push_back(t.cpu);
    }
    const double n = runs[m].front().candidates;
    rate[m] = n / median(walls);
    cpu_us[m] = 1e6 * median(cpus) / n;
    std::printf(
        "ablate_candidates_per_s %9.0f   %7.1f us CPU per candidate   %.3f s for %.0f "
        "candidates (median wall of %u)   %s\n",
        rate[m], cpu_us[m], median(walls), n, rounds, modes[m].name.c_str());
  }
  if (modes.size() > 1) {
    std::printf(
        "speed-up of the last over the first: %.2fx candidates/s, %.2fx less CPU per "
        "candidate\n",
        rate.back() / rate.front(), cpu_us.front() / cpu_us.back());
  }
  std::printf("reports %s\n",
              identical ? "byte-identical in every mode and round" : "DIFFER between modes");
  return identical ? 0 : 1;
}

// A synthetic space: `families` families of `knobs` knobs of `values` numeric values each.
arc::problem::Problem model_space(uint32_t families, uint32_t knobs, uint32_t values) {
  arc::problem::Problem p;
  p.name = "synthetic";
  p.kernel_type = "gemm";
  p.workloads = {{"small", {}, {}}, {"large", {}, {}}};
  for (uint32_t f = 0; f < families; ++f) {
    arc::problem::Family fam;
    fam.name = "f" + std::to_string(f);
    for (uint32_t k = 0; k < knobs; ++k) {
      arc::problem::Knob knob{"K" + std::to_string(k), {}, "1"};
      for (uint32_t v = 1; v <= values; ++v) knob.values.push_back(std::to_string(v));
      fam.knobs.push_back(knob);
    }
    p.families.push_back(fam);
  }
  p.seed.base = p.families[0].default_variant();
  return p;
}

// Made-up log time of a variant (a bowl with an interaction, offset per family), and a corner
// that fails.
std::optional<double> model_truth(const arc::problem::Problem& p, const arc::problem::Variant& v) {
  const arc::problem::Family* f = p.family(v.family);
  double t = 0.2 * static_cast<double>(f - p.families.data());
  std::vector<double> x;
  for (const auto& k : f->knobs) {
    x.push_back((std::stod(v.knobs.at(k.name)) - 1) / static_cast<double>(k.values.size() - 1));
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double centre = 0.2 + 0.6 * static_cast<double>(i % 3) / 2;
    t += (1.0 + static_cast<double>(i)) * (x[i] - centre) * (x[i] - centre);
  }
  t += 0.5 * x[0] * x[1];
  if (x[0] > 0.85 && x[1] > 0.85) return std::nullopt;
  return t;
}

struct ModelRun {
  double propose_s = 0, slowest_s = 0, best = 1e9, best_at_50 = 1e9;
  uint32_t proposed = 0, by_model = 0;
};

// One agent proposing `n` candidates in `skill`; each evaluated and decided at once.
ModelRun run_model_agent(const arc::problem::Problem& p, const std::vector<arc::skills::Skill>& sk,
                         const std::string& skill, uint32_t n) {
  namespace fb = arc::fb;
  using arc::events::Event;
  ModelRun out;
  arc::actors::CampaignView view({"small", "large"});
  arc::actors::MemoryCore memory;
  arc::actors::AgentCore agent({"m", 0, skill, 11, true, true, nullptr}, p, sk);
  uint64_t seq = 0;
  auto apply = [&](Event e) {
    e.seq = ++seq;
    view.apply(e);
    memory.apply(e);
    agent.apply(e);
  };
  auto evaluate = [&](const std::string& agent_name, const fb::CandidateProposedT& c,
                      const arc::problem::Variant& v, bool baseline) {
    const auto t = model_truth(p, v);
    fb::CandidateEvaluatedT e;
    e.candidate_hash = c.candidate_hash;
    for (const char* w : {"small", "large"}) {
      auto r = std::make_unique<fb::WorkloadEvaluationT>();
      r->workload = w;
      r->status = t ? fb::WorkloadStatus::OK : fb::WorkloadStatus::WRONG_RESULT;
      r->median_ns = t ? 1000 * std::exp(*t) * (w[0] == 'l' ? 8 : 1) : 0;
      e.workloads.push_back(std::move(r));
    }
    apply(arc::events::make_event("guard", std::move(e)));
    fb::DecisionT d;
    d.agent = agent_name;
    d.candidate_hash = c.candidate_hash;
    const double score = t ? std::exp(-*t) : 0;
    const auto* inc = view.incumbent(agent_name);
    d.verdict = !t                                      ? fb::Verdict::REJECT
                : baseline || score > inc->score * 1.02 ? fb::Verdict::KEEP
                                                        : fb::Verdict::REVERT;
    d.score = baseline ? 1.0 : score;
    apply(arc::events::make_event("guard", std::move(d)));
    if (t) out.best = std::min(out.best, *t);
  };
  fb::AgentSpawnedT spawned;
  spawned.agent = "m";
  apply(arc::events::make_event(arc::actors::kCampaignActor, spawned));
  fb::CandidateProposedT base;
  base.agent = arc::actors::kCampaignActor;
  base.candidate_hash = p.seed.hash();
  base.canonical = p.seed.canonical();
  base.move = arc::actors::kBaselineMove;
  apply(arc::events::make_event(arc::actors::kCampaignActor, base));
  evaluate(arc::actors::kCampaignActor, base, p.seed.base, true);
  for (uint32_t i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    arc::actors::Proposal prop = agent.propose(view, memory.recall(p.kernel_type));
    const double dt = seconds_since(t0);
    out.propose_s += dt;
    out.slowest_s = std::max(out.slowest_s, dt);
    if (!prop.proposed) break;
    ++out.proposed;
    out.by_model += prop.proposed->move.rfind("model:ei:", 0) == 0 ? 1 : 0;
    if (prop.drafted) apply(arc::events::make_event("m", *prop.drafted));
    apply(arc::events::make_event("m", *prop.proposed));
    auto c = arc::problem::Candidate::from_canonical(prop.proposed->canonical);
    evaluate("m", *prop.proposed, c->base, false);
    if (out.proposed <= 50) out.best_at_50 = out.best;
  }
  return out;
}

int bench_model(uint32_t candidates) {
  auto loaded = arc::skills::load_skills(arc::arc_home() / "skills");
  if (!loaded) {
    std::fprintf(stderr, "arc-bench: %s\n", loaded.status().message().c_str());
    return 1;
  }
  std::vector<arc::skills::Skill> skills;
  for (const auto& s : loaded.value()) {
    if (s.name != "model") continue;
    skills.push_back(s);
    skills.push_back(s);
    skills.back().name = "walk";  // the same scope, neighbour and jump moves only
    skills.back().moves = {{"neighbour", 1}, {"jump", 1}};
  }
  if (skills.empty()) {
    std::fprintf(stderr, "arc-bench: no skills/model\n");
    return 1;
  }
  struct Space {
    const char* name;
    uint32_t families, knobs, values;
  };
  std::printf(
      "# model move: one builtin agent, %u candidates, propose() time (1 thread); by_model: "
      "proposals the model picked; best: the lowest made-up log time found (after 50, at "
      "the end)\n",
      candidates);
  std::printf("%-34s %-6s %10s %10s %10s %9s %10s %10s\n", "space", "skill", "total_s", "mean_ms",
              "max_ms", "by_model", "best@50", "best");
  for (const Space& sp :
       {Space{"20,000 (4x10 x 20 x 1 family)", 1, 4, 0},
        Space{"65,536 (2 families x 8^5)", 2, 5, 8}, Space{"625 (5^4, 1 family)", 1, 4, 5}}) {
    arc::problem::Problem p =
        sp.values != 0 ? model_space(sp.families, sp.knobs, sp.values) : model_space(1, 4, 10);
    if (sp.values == 0) {  // 10 x 10 x 10 x 20
      auto& k = p.families[0].knobs[3];
      for (uint32_t v = 11; v <= 20; ++v) k.values.push_back(std::to_string(v));
    }
    for (const char* skill : {"model", "walk"}) {
      const ModelRun r = run_model_agent(p, skills, skill, candidates);
      std::printf("%-34s %-6s %10.3f %10.3f %10.3f %9u %10.4f %10.4f\n", sp.name, skill,
                  r.propose_s, 1e3 * r.propose_s / std::max(1u, r.proposed), 1e3 * r.slowest_s,
                  r.by_model, r.best_at_50, r.best);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"arc-bench: KernelArc orchestration benchmarks"};
  uint64_t appends = 200000, sync_appends = 2000;
  uint32_t candidates = 200;
  std::string problem = (arc::arc_home() / "problems/host/matmul").string();
  std::string work_dir;
  arc::tools::add_integer_flag(&app, "--appends", appends, kAppendsRange,
                               "batched appends to time");
  arc::tools::add_integer_flag(&app, "--sync-appends", sync_appends, kAppendsRange,
                               "fsynced appends to time");
  arc::tools::add_integer_flag(&app, "--candidates", candidates, arc::actors::kBudgetRange,
                               "candidates of the recorded campaign");
  app.add_option("--problem", problem, "host problem to run");
  app.add_option("--work-dir", work_dir, "scratch folder (default: a new temp folder)");
  std::string verify_only;
  app.add_option("--verify-only", verify_only, "only time arc-replay verify on this run directory");
  bool ablate = false;
  std::string sweep_problem = "matmul", baseline;
  uint32_t seeds = 100, rounds = 3;
  app.add_flag("--ablate", ablate, "only time arc-replay ablate (candidates per second)");
  app.add_option("--sweep-problem", sweep_problem,
                 "--ablate: host problem whose shipped sweep answers (matmul, softmax)");
  arc::tools::add_integer_flag(&app, "--seeds", seeds, kSeedsRange,
                               "--ablate: seeds per configuration (default 100)");
  arc::tools::add_integer_flag(&app, "--rounds", rounds, kRoundsRange,
                               "--ablate: rounds of every mode, interleaved (default 3)");
  app.add_option("--baseline", baseline,
                 "--ablate: another arc-replay binary to time on the same ablation");
  bool model = false;
  app.add_flag("--model", model,
               "only time the builtin model move over --candidates proposals (default 200)");
  bool workers = false;
  double eval_seconds = 0.25;
  uint32_t max_workers = 8;
  app.add_flag("--workers", workers,
               "only the scale-out benchmark: candidates per second on 1, 2, 4, 8 synthetic "
               "workers on loopback, and a remote worker's overhead per candidate");
  app.add_option("--eval-seconds", eval_seconds,
                 "--workers: synthetic wall time per evaluation (default 0.25)")
      ->check(CLI::Range(0.0, 60.0));
  arc::tools::add_integer_flag(&app, "--max-workers", max_workers, kWorkersRange,
                               "--workers: the most workers to time (default 8)");
  bool current_only = false;
  app.add_flag("--current-only", current_only,
               "--ablate: only in-memory logs and parallel campaigns (with --baseline: and it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (model) return bench_model(candidates);
  if (!verify_only.empty()) {
    auto log = arc::replay::read_run(verify_only);
    if (!log) return 1;
    auto t0 = Clock::now();
    uint64_t events = 0;
    for (int i = 0; i < 300; ++i) events += arc::replay::verify_events(log.value()).events;
    const double t_all = seconds_since(t0);
    std::vector<arc::events::Event> first(log->begin(), log->begin() + 1);
    auto t1 = Clock::now();
    for (int i = 0; i < 300; ++i) arc::replay::verify_events(first);
    const double t_setup = seconds_since(t1);
    std::printf("verify_events_per_s %.0f (%.0f without the per-run set-up of %.2f ms)\n",
                static_cast<double>(events) / t_all,
                static_cast<double>(events) / (t_all - t_setup), 1e3 * t_setup / 300);
    return 0;
  }

  fs::path work = work_dir.empty()
                      ? fs::temp_directory_path() / ("arc-bench-" + std::to_string(::getpid()))
                      : fs::path(work_dir);
  fs::remove_all(work);
  fs::create_directories(work);
  if (workers) {
    arc::tools::BenchWorkersOptions wo;
    wo.work = work;
    wo.problem_dir = arc::arc_home() / "problems/gpu/gemm_bf16";
    wo.eval_seconds = eval_seconds;
    wo.max_workers = max_workers;
    if (candidates != 200) wo.candidates = candidates;
    const int rc = arc::tools::bench_workers(wo);
    if (work_dir.empty()) fs::remove_all(work);
    return rc;
  }
  if (ablate) {
    const int rc =
        bench_ablate(sweep_problem, seeds, std::max(1u, rounds), baseline, current_only, work);
    if (work_dir.empty()) fs::remove_all(work);
    return rc;
  }

  std::printf("# KernelArc orchestration benchmark\n");
  const double batch =
      bench_appends(work / "journal-batch", arc::storage::Durability::kBatch, appends);
  const double sync =
      bench_appends(work / "journal-sync", arc::storage::Durability::kSync, sync_appends);
  std::printf("journal_appends_per_s_batch %.0f   (%llu events)\n", batch,
              static_cast<unsigned long long>(appends));
  std::printf("journal_appends_per_s_sync  %.0f   (%llu events)\n", sync,
              static_cast<unsigned long long>(sync_appends));

  // Record a real host campaign, then run the same campaign against the replay evaluator:
  // the same seed proposes the same candidates, every evaluation is answered at once, and the
  // time per candidate is the orchestration alone.
  const fs::path pdir = fs::absolute(problem);
  double t_record = 0;
  uint32_t n_record = 0;
  arc::eval::EvaluatorChoice host;
  const fs::path recorded =
      run(work, "record", campaign_text(pdir, candidates, "batch"), host, &t_record, &n_record);
  if (recorded.empty()) return 1;
  std::printf("recorded %u candidates on the host evaluator in %.1f s\n", n_record, t_record);
  arc::eval::EvaluatorChoice replay;
  replay.kind = "replay";
  replay.replay_logs = {recorded};
  for (const char* durability : {"batch", "sync"}) {
    double t = 0;
    uint32_t n = 0;
    const fs::path dir = run(work, std::string("replay-") + durability,
                             campaign_text(pdir, n_record, durability), replay, &t, &n);
    if (dir.empty()) return 1;
    std::printf(
        "orchestration_ms_per_candidate_%-5s %.3f   (%u candidates in %.3f s, 4 agents, "
        "lockstep, whole run incl. start-up)\n",
        durability, n ? 1e3 * t / n : 0.0, n, t);
  }
  auto log = arc::replay::read_run(recorded);
  if (!log) return 1;
  // Verify repeatedly on the in-memory log; report the steady state and one cold run from disk.
  const int reps = 20;
  auto t0 = Clock::now();
  uint64_t events = 0;
  bool ok = true;
  for (int i = 0; i < reps; ++i) {
    auto report = arc::replay::verify_events(log.value());
    events += report.events;
    ok &= report.ok;
  }
  const double tv = seconds_since(t0);
  auto t1 = Clock::now();
  auto cold = arc::replay::verify_run(recorded);
  const double tc = seconds_since(t1);
  std::printf("verify_events_per_s %.0f   (%d verifications of %llu events, in memory, %s)\n",
              static_cast<double>(events) / tv, reps,
              static_cast<unsigned long long>(events / reps), ok ? "verified" : "FAILED");
  std::printf(
      "verify_run_seconds  %.3f   (from disk, including opening the log and loading the "
      "problem and skills; %s)\n",
      tc, cold.ok ? "verified" : cold.message.c_str());
  if (work_dir.empty()) fs::remove_all(work);
  return 0;
}
