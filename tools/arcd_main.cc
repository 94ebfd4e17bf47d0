// arcd: runs KernelArc campaigns. Exit codes: 0 done; 1 the campaign ran but failed (e.g. the
// seed fails its own check; `check`: a compile failure); 2 bad input (a file, field or flag;
// nothing was written); 3 storage or I/O error; 4 internal error; 5 no usable CUDA device for
// a CUDA problem (`check`: everything compiled, nothing ran; run, resume, sweep, confirm:
// nothing was run or written); 6 a file the run read is neither in its log nor unchanged where
// the log names it (resume, export, confirm of a log written before runs kept their inputs, or
// a log whose copy of them is damaged; actors/run_inputs.h).
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "actors/campaign_runner.h"
#include "actors/campaign_workers.h"
#include "actors/check.h"
#include "actors/run_directory.h"
#include "actors/sandbox_policy.h"
#include "actors/sweep.h"
#include "actors/worker_setup.h"
#include "base/arc_home.h"
#include "eval/evaluators.h"
#include "events/printer.h"
#include "replay/confirm.h"
#include "replay/kernel_export.h"
#include "replay/progress.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "storage/run_lock.h"
#include "tools/integer_flag.h"

namespace {

// Ranges of arcd's own numeric flags; those that override a campaign field share its range
// (actors/campaign_config.h).
constexpr arc::IntegerRange kSweepSampleRange{1, 10000000, "all"};
constexpr arc::IntegerRange kConfirmRoundsRange{1, 1000};

int exit_code(const arc::Status& s) {
  switch (s.code()) {
    case arc::Status::Code::kOk:
      return 0;
    case arc::Status::Code::kInvalidArgument:
    case arc::Status::Code::kNotFound:
      return 2;
    case arc::Status::Code::kIoError:
    case arc::Status::Code::kCorruption:
      return 3;
    case arc::Status::Code::kMissingInput:
      return 6;
    default:
      return 4;
  }
}

int fail(const arc::Status& s) {
  std::fprintf(stderr, "arcd: %s\n", s.message().c_str());
  return exit_code(s);
}

// Before anything is run or written: a CUDA campaign needs a usable CUDA device.
int no_device(const std::string& what, const arc::Status& why) {
  std::fprintf(stderr,
               "arcd: %s: cannot run on the CUDA evaluator: %s; nothing was run or written\n",
               what.c_str(), why.message().c_str());
  return arc::actors::kCheckNoDevice;
}

std::filesystem::path default_run_dir(const std::string& name) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  return std::filesystem::path("runs") / (name + "-" + stamp + "-" + std::to_string(getpid()));
}

// Prints a stopped campaign's summary; the exit code it stopped with.
int print_summary(const arc::replay::CampaignSummary& summary, const std::filesystem::path& run_dir,
                  bool json) {
  if (json) {
    auto j = arc::replay::to_json(summary);
    j["run_dir"] = run_dir.string();
    std::cout << arc::events::dump_json(j, 2) << std::endl;
  } else {
    std::cout << "\n"
              << arc::replay::to_table(summary) << "run directory: " << run_dir.string() << "\n";
  }
  return summary.stop_reason.rfind("baseline failed", 0) == 0 ? 1 : 0;
}

// Runs (or resumes) a prepared campaign, writes its outputs and prints its summary.
int run_and_report(arc::actors::PreparedCampaign prepared, const arc::actors::RunOptions& options,
                   arc::replay::ProgressPrinter& progress, bool json) {
  // The outputs show the problem the run read (on resume perhaps the log's copy of it).
  const arc::problem::Problem problem = prepared.problem;
  auto result = arc::actors::run_campaign(std::move(prepared), options);
  progress.finish();
  if (!result) return fail(result.status());
  auto log = arc::replay::read_run(result->run_dir);
  if (!log) return fail(log.status());
  auto summary = arc::replay::summarize(log.value(), &problem);
  if (auto s = arc::replay::write_run_outputs(result->run_dir, summary, false, nullptr, &problem);
      !s) {
    return fail(s);
  }
  return print_summary(summary, result->run_dir, json);
}

// Prints what restoring a run's inputs found, one line each.
void print_notice(const std::string& line) { std::fprintf(stderr, "arcd: %s\n", line.c_str()); }

// A campaign that stopped (CampaignStopped is logged) but whose run was killed before its
// outputs were all written: writes the missing ones from the log, which it leaves as it is.
// `problem`: the run's (replay/reconstruct.h), or null when its inputs cannot be restored.
int complete_stopped(const std::string& run_dir, const std::vector<arc::events::Event>& log,
                     bool json, const arc::problem::Problem* problem) {
  auto summary = arc::replay::summarize(log, problem);
  std::vector<std::string> written;
  if (auto s = arc::replay::write_run_outputs(run_dir, summary, /*only_missing=*/true, &written,
                                              problem);
      !s) {
    return fail(s);
  }
  std::string what;
  for (const auto& w : written) what += (what.empty() ? "" : ", ") + w;
  std::fprintf(stderr, "arcd: %s: the campaign already stopped (%s); %s\n", run_dir.c_str(),
               summary.stop_reason.c_str(),
               written.empty() ? "its outputs are all in place, nothing to write"
                               : ("wrote its missing outputs: " + what).c_str());
  return print_summary(summary, run_dir, json);
}

// The sandbox policy (actors/sandbox_policy.h), and a warning when candidates run unconfined.
arc::Status sandbox_policy(const arc::actors::CampaignConfig& config,
                           const arc::eval::Sandbox& sandbox) {
  if (auto s = arc::actors::check_sandbox_policy(config, sandbox); !s) return s;
  if (!sandbox.enabled()) {
    std::fprintf(stderr, "arcd: warning: candidates run without a sandbox (%s)\n",
                 sandbox.reason().c_str());
  }
  return arc::Status::ok();
}

int start_run(arc::actors::CampaignConfig config, arc::actors::RunOptions options, bool json,
              const arc::eval::EvaluatorChoice& choice, const arc::actors::WorkerFlags& workers,
              bool quiet);

// The run's workers (actors/worker_setup.h), and the device check for its local ones: a CUDA
// campaign served by remote workers alone needs no GPU here.
arc::Status set_up_workers(arc::actors::RunOptions& options,
                           const arc::actors::CampaignConfig& config,
                           const arc::problem::Problem& problem,
                           const arc::eval::EvaluatorChoice& choice,
                           const arc::actors::WorkerFlags& workers) {
  if (auto s = arc::actors::configure_workers(options, config, problem, choice, workers); !s) {
    return s;
  }
  options.worker_notice = [](const std::string& what) {
    std::fprintf(stderr, "arcd: %s\n", what.c_str());
  };
  for (const auto& w : options.workers) {
    if (w.local) return arc::actors::require_device(problem, choice);
  }
  return arc::Status::ok();
}

int cmd_run(const std::string& campaign_file, const std::string& run_dir_flag,
            std::optional<uint64_t> seed, std::optional<uint32_t> budget, const std::string& mode,
            bool json, const arc::eval::EvaluatorChoice& choice,
            const arc::actors::WorkerFlags& workers, bool quiet) {
  auto config = arc::actors::load_campaign(campaign_file);
  if (!config) return fail(config.status());
  arc::actors::RunOptions options;
  options.seed = seed;
  options.budget = budget;
  if (mode == "async") options.mode = arc::actors::Mode::kAsync;
  if (mode == "lockstep") options.mode = arc::actors::Mode::kLockstep;
  options.run_dir =
      run_dir_flag.empty() ? default_run_dir(config->name) : std::filesystem::path(run_dir_flag);
  return start_run(std::move(config.value()), std::move(options), json, choice, workers, quiet);
}

// Starts a campaign from its beginning in options.run_dir.
int start_run(arc::actors::CampaignConfig config, arc::actors::RunOptions options, bool json,
              const arc::eval::EvaluatorChoice& choice, const arc::actors::WorkerFlags& workers,
              bool quiet) {
  options.notice = [](const std::string& what) {
    std::fprintf(stderr, "arcd: %s\n", what.c_str());
  };
  auto prepared = arc::actors::prepare_campaign(std::move(config), options);
  if (!prepared) return fail(prepared.status());
  if (auto s = sandbox_policy(prepared->config, choice.sandbox); !s) return fail(s);
  if (auto s = set_up_workers(options, prepared->config, prepared->problem, choice, workers); !s) {
    if (s.code() == arc::Status::Code::kUnavailable) {
      return no_device("campaign " + prepared->config.name, s);
    }
    return fail(s);
  }
  options.make_evaluator = [choice](const arc::problem::Problem& p) {
    return arc::eval::make_evaluator(choice, p);
  };
  const bool terminal = isatty(fileno(stdout)) != 0 && !json;
  FILE* progress_out = json ? stderr : stdout;
  arc::replay::ProgressPrinter progress(progress_out, terminal, prepared->config.budget);
  if (!quiet) {
    options.observer = [&progress](const arc::events::Event& e) { progress.on_event(e); };
    std::fprintf(progress_out, "arcd: campaign %s on %s (%zu agents, budget %u, %s) -> %s\n",
                 prepared->config.name.c_str(), prepared->problem.name.c_str(),
                 prepared->config.agents.size(), prepared->config.budget,
                 arc::actors::to_string(prepared->config.mode), options.run_dir.c_str());
  }
  return run_and_report(std::move(prepared.value()), options, progress, json);
}

int cmd_resume(const std::string& run_dir, bool json, const arc::eval::EvaluatorChoice& choice,
               const arc::actors::WorkerFlags& workers, bool quiet) {
  // One arcd per run, from before its log is read (storage/run_lock.h).
  std::shared_ptr<arc::storage::RunLock> lock;
  if (std::filesystem::is_directory(run_dir)) {
    auto l = arc::storage::RunLock::acquire(run_dir);
    if (!l) return fail(l.status());
    lock = std::move(l.value());
  }
  auto inspection = arc::actors::inspect_run_dir(run_dir);
  if (!inspection) return fail(inspection.status());
  if (inspection->state == arc::actors::RunDirState::kUnstarted) {
    // Killed before CampaignStarted was logged: start the campaign it was starting.
    if (inspection->start_request.empty()) {
      return fail(arc::Status::invalid_argument(
          run_dir +
          ": killed before its campaign was recorded (its log holds no event): "
          "nothing to resume; start it with `arcd run CAMPAIGN.toml --run-dir " +
          run_dir + "`"));
    }
    arc::actors::RunOptions options;
    options.run_dir = run_dir;
    options.run_lock = lock;
    auto config =
        arc::actors::campaign_of_start_request(inspection->start_request, run_dir, options);
    if (!config) return fail(config.status());
    std::fprintf(stderr,
                 "arcd: %s: killed before CampaignStarted was logged; starting campaign %s "
                 "from the beginning\n",
                 run_dir.c_str(), config->file.c_str());
    return start_run(std::move(config.value()), std::move(options), json, choice, workers, quiet);
  }
  // The log is read (and its inputs restored) read-only, then closed: run_campaign opens it
  // for writing.
  std::vector<arc::events::Event> log;
  auto rec = arc::replay::reconstruct_run(run_dir, log);
  if (!rec && rec.status().code() == arc::Status::Code::kInvalidArgument &&
      (log.empty() || log.front().payload.type != arc::fb::Payload::CampaignStarted)) {
    return fail(arc::Status::invalid_argument(run_dir +
                                              ": the log does not begin with "
                                              "CampaignStarted; start it again with `arcd run`"));
  }
  if (!log.empty() && log.back().payload.type == arc::fb::Payload::CampaignStopped) {
    // Its outputs from the log; the problem only adds best/'s sources.
    if (!rec) {
      std::fprintf(stderr, "arcd: warning: %s; best/ gets candidate.json alone\n",
                   rec.status().message().c_str());
    } else {
      arc::replay::tell_input_notices(rec.value(), print_notice);
    }
    return complete_stopped(run_dir, log, json, rec ? &rec->problem : nullptr);
  }
  if (!rec) return fail(rec.status());
  arc::replay::tell_input_notices(rec.value(), print_notice);
  if (auto s = sandbox_policy(rec->config, choice.sandbox); !s) return fail(s);
  arc::actors::RunOptions options;
  options.run_dir = run_dir;
  options.resume = true;
  options.run_lock = lock;
  if (auto s = set_up_workers(options, rec->config, rec->problem, choice, workers); !s) {
    if (s.code() == arc::Status::Code::kUnavailable) {
      return no_device("campaign " + rec->config.name, s);
    }
    return fail(s);
  }
  options.make_evaluator = [choice](const arc::problem::Problem& p) {
    return arc::eval::make_evaluator(choice, p);
  };
  const bool terminal = isatty(fileno(stdout)) != 0 && !json;
  FILE* progress_out = json ? stderr : stdout;
  arc::replay::ProgressPrinter progress(progress_out, terminal, rec->config.budget);
  if (!quiet) {
    options.observer = [&progress](const arc::events::Event& e) { progress.on_event(e); };
    std::fprintf(progress_out, "arcd: resuming campaign %s at seq %llu -> %s\n",
                 rec->config.name.c_str(), static_cast<unsigned long long>(log.back().seq),
                 run_dir.c_str());
  }
  arc::actors::PreparedCampaign prepared{std::move(rec->config), std::move(rec->problem),
                                         std::move(rec->skills)};
  return run_and_report(std::move(prepared), options, progress, json);
}

int cmd_sweep(const std::string& problem_path, const std::string& run_dir_flag, uint32_t sample,
              uint64_t seed, const std::string& campaign_flag,
              const std::vector<std::string>& families, bool quiet,
              const arc::eval::Sandbox& sandbox, const arc::actors::WorkerFlags& workers) {
  auto p = arc::problem::load_problem(problem_path);
  if (!p) return fail(p.status());
  arc::actors::SweepOptions o;
  o.families = families;
  o.sample = sample;
  o.seed = seed;
  // Evaluation settings and [[workers]]: those of the given campaign, else of the problem's own
  // campaign.toml.
  const std::filesystem::path campaign =
      campaign_flag.empty() ? p->dir / "campaign.toml" : std::filesystem::path(campaign_flag);
  arc::actors::CampaignConfig config;
  if (std::filesystem::exists(campaign)) {
    auto c = arc::actors::load_campaign(campaign);
    if (!c) return fail(c.status());
    o.evaluation = c->evaluation;
    config = std::move(c.value());
  } else if (!campaign_flag.empty()) {
    return fail(arc::Status::invalid_argument("--campaign " + campaign_flag + ": no such file"));
  }
  o.run_dir = run_dir_flag.empty() ? default_run_dir("sweep-" + p->name)
                                   : std::filesystem::path(run_dir_flag);
  if (!quiet) {
    o.progress = [](uint32_t done, uint32_t total) {
      if (done % 10 == 0 || done == total) std::fprintf(stderr, "swept %u/%u\n", done, total);
    };
  }
  o.notice = [](const std::string& what) { std::fprintf(stderr, "arcd: %s\n", what.c_str()); };
  arc::eval::EvaluatorChoice choice;
  choice.sandbox = sandbox;
  arc::actors::RunOptions run;
  run.make_evaluator = [choice](const arc::problem::Problem& problem) {
    return arc::eval::make_evaluator(choice, problem);
  };
  if (auto s = arc::actors::configure_workers(run, config, p.value(), choice, workers); !s) {
    return fail(s);
  }
  run.worker_notice = o.notice;
  for (const auto& w : run.workers) {
    if (!w.local) continue;
    if (auto s = arc::actors::require_device(p.value(), choice); !s) {
      return no_device("sweep of problem " + p->name, s);
    }
    break;
  }
  auto opened = arc::actors::open_workers(p.value(), run, {});
  if (!opened) return fail(opened.status());
  auto r = arc::actors::run_sweep(p.value(), opened->workers, o);
  if (!r) return fail(r.status());
  std::printf("swept %u candidates of %s (%u correct; space of %llu) on %zu worker%s into %s\n",
              r->candidates, p->name.c_str(), r->ok, static_cast<unsigned long long>(r->space),
              opened->workers.size(), opened->workers.size() == 1 ? "" : "s", o.run_dir.c_str());
  return 0;
}

int cmd_export(const std::string& run_dir, const std::string& format, const std::string& out) {
  const std::filesystem::path out_dir =
      out.empty() ? std::filesystem::path(run_dir) / "export" / format : std::filesystem::path(out);
  auto written = arc::replay::export_run(run_dir, format, out_dir, print_notice);
  if (!written) return fail(written.status());
  for (const auto& p : written.value()) std::printf("wrote %s\n", p.c_str());
  return 0;
}

int cmd_confirm(const std::string& run_dir, uint32_t rounds, bool json,
                const arc::eval::EvaluatorChoice& choice) {
  arc::replay::ConfirmOptions options;
  options.rounds = rounds;
  options.choice = choice;
  options.notice = print_notice;
  auto c = arc::replay::confirm_run(run_dir, options);
  if (!c && c.status().code() == arc::Status::Code::kUnavailable) {
    return no_device("confirm of " + run_dir, c.status());
  }
  if (!c) return fail(c.status());
  if (json) {
    std::cout << arc::events::dump_json(arc::replay::to_json(c.value()), 2) << std::endl;
  } else {
    std::printf("%s", arc::replay::to_table(c.value()).c_str());
  }
  for (const auto& w : c->workloads) {
    if (w.status != "OK") return 1;
  }
  return 0;
}

int cmd_list(bool json) {
  namespace fs = std::filesystem;
  const fs::path home = arc::arc_home();
  nlohmann::json j = {{"problems", nlohmann::json::array()}, {"skills", nlohmann::json::array()}};
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(home / "problems", ec);
       !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == "problem.toml") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  if (!json) std::printf("problems (%s):\n", (home / "problems").c_str());
  for (const auto& f : files) {
    auto p = arc::problem::load_problem(f);
    const auto rel = fs::relative(f.parent_path(), home).string();
    if (!p) {
      if (!json) std::printf("  %-28s (invalid: %s)\n", rel.c_str(), p.status().message().c_str());
      continue;
    }
    const bool has_campaign = fs::exists(f.parent_path() / "campaign.toml");
    j["problems"].push_back({{"path", rel},
                             {"name", p->name},
                             {"kernel_type", p->kernel_type},
                             {"backend", p->backend},
                             {"families", p->families.size()},
                             {"workloads", p->workloads.size()},
                             {"campaign", has_campaign}});
    if (!json) {
      std::printf("  %-28s %-10s %-5s %zu families, %zu workloads%s\n", rel.c_str(),
                  p->kernel_type.c_str(), p->backend.c_str(), p->families.size(),
                  p->workloads.size(), has_campaign ? ", campaign.toml" : "");
    }
  }
  auto skills = arc::skills::load_skills(home / "skills");
  if (!json) std::printf("skills (%s):\n", (home / "skills").c_str());
  if (skills) {
    for (const auto& s : skills.value()) {
      j["skills"].push_back({{"name", s.name}, {"kernel_types", s.kernel_types}});
      if (!json) std::printf("  %-12s %s\n", s.name.c_str(), s.description.c_str());
    }
  } else if (!json) {
    std::printf("  (invalid: %s)\n", skills.status().message().c_str());
  }
  if (json) std::cout << arc::events::dump_json(j, 2) << std::endl;
  return 0;
}

int cmd_check(const std::string& problem_path, const arc::eval::EvaluatorChoice& choice) {
  auto p = arc::problem::load_problem(problem_path);
  if (!p) return fail(p.status());
  std::printf("problem %s (%s, %s): %zu families, %zu workloads, hash %s\n", p->name.c_str(),
              p->kernel_type.c_str(), p->backend.c_str(), p->families.size(), p->workloads.size(),
              p->hash.substr(0, 12).c_str());
  std::fflush(stdout);
  arc::actors::CheckOptions options;
  options.choice = choice;
  auto report = arc::actors::check_problem(p.value(), options);
  if (!report) return fail(report.status());
  std::printf("%s", arc::actors::to_text(report.value()).c_str());
  return report->exit_code();
}

// "auto (the problem's backend) | host | cuda | replay", from the evaluator registry.
std::string evaluator_help(bool measuring_only) {
  std::string out;
  for (const auto& n : arc::eval::evaluator_choices(measuring_only)) {
    out += (out.empty() ? "" : " | ") + n + (n == "auto" ? " (the problem's backend)" : "");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"arcd: KernelArc campaigns"};
  app.require_subcommand(1);
  arc::eval::EvaluatorChoice choice;
  std::vector<std::string> replay_from;
  std::string sandbox_mode = "auto";
  const std::string sandbox_help =
      "auto (default): compile and run candidates in a bubblewrap sandbox where the machine "
      "allows one, and refuse llm and exec agents where it does not | on: require it | off: "
      "never (also lets llm and exec agents run unconfined)";
  auto add_sandbox_flag = [&sandbox_mode, &sandbox_help](CLI::App* sub) {
    sub->add_option("--sandbox", sandbox_mode, sandbox_help)
        ->check(CLI::IsMember({"auto", "on", "off"}));
  };

  auto* run = app.add_subcommand("run", "run a campaign");
  std::string campaign, run_dir, mode;
  std::optional<uint64_t> seed;
  std::optional<uint32_t> budget;
  bool json = false, quiet = false;
  run->add_option("campaign", campaign, "campaign.toml")->required();
  run->add_option("--run-dir", run_dir, "run directory (default runs/NAME-TIME-PID)");
  arc::tools::add_integer_flag(run, "--seed", seed, arc::actors::kSeedRange,
                               "override [campaign].seed");
  arc::tools::add_integer_flag(run, "--budget", budget, arc::actors::kBudgetRange,
                               "override [campaign].budget");
  run->add_option("--mode", mode, "override [campaign].mode")
      ->check(CLI::IsMember({"async", "lockstep"}));
  run->add_flag("--json", json, "print the summary as JSON");
  run->add_flag("--quiet", quiet, "no live progress");
  run->add_option("--evaluator", choice.kind, evaluator_help(false))
      ->check(CLI::IsMember(arc::eval::evaluator_choices()));
  run->add_option("--replay-from", replay_from,
                  "run directories the replay evaluator answers from");
  arc::tools::add_integer_flag(
      run, "--resample", choice.resample_seed, arc::actors::kSeedRange,
      "replay: redraw recorded timing samples with this seed (0: as recorded)");
  run->add_option("--synthetic-seconds", choice.synthetic_seconds,
                  "synthetic: wall time of each evaluation (default 0.5)")
      ->check(CLI::Range(0.0, 3600.0));

  auto* resume = app.add_subcommand("resume", "continue an interrupted campaign from its log");
  std::string resume_dir;
  bool resume_json = false, resume_quiet = false;
  resume->add_option("run_dir", resume_dir, "run directory")->required();
  resume->add_flag("--json", resume_json, "print the summary as JSON");
  resume->add_flag("--quiet", resume_quiet, "no live progress");
  resume->add_option("--evaluator", choice.kind, evaluator_help(false))
      ->check(CLI::IsMember(arc::eval::evaluator_choices()));
  resume->add_option("--replay-from", replay_from,
                     "run directories the replay evaluator answers from");

  add_sandbox_flag(run);
  add_sandbox_flag(resume);
  arc::actors::WorkerFlags workers;
  const std::string workers_help =
      "the workers that measure (docs/distributed.md): auto (default: one local worker per "
      "visible GPU, one for host problems) or a comma-separated list of local, local:N and "
      "HOST:PORT (remote `arc-eval --serve` workers); default: the campaign's [[workers]]";
  const std::string secret_help =
      "the shared secret of remote workers (default: $ARC_WORKER_SECRET_FILE, else "
      "~/.config/kernelarc/worker.secret)";

  auto* sweep = app.add_subcommand("sweep", "measure a problem's search space into a log");
  std::string sweep_problem, sweep_dir, sweep_campaign;
  uint32_t sweep_sample = 0;
  uint64_t sweep_seed = 1;
  bool sweep_quiet = false;
  sweep->add_option("problem", sweep_problem, "problem.toml or its folder")->required();
  sweep->add_option("--run-dir", sweep_dir, "run directory (default runs/sweep-NAME-TIME-PID)");
  arc::tools::add_integer_flag(sweep, "--sample", sweep_sample, kSweepSampleRange,
                               "measure this many candidates (default: all)");
  arc::tools::add_integer_flag(sweep, "--seed", sweep_seed, arc::actors::kSeedRange,
                               "sampling and input seed");
  sweep->add_option("--campaign", sweep_campaign, "take [evaluation] from this campaign file");
  std::vector<std::string> sweep_families;
  sweep->add_option("--family", sweep_families,
                    "sweep only this family (repeatable; the seed is always measured)");
  sweep->add_flag("--quiet", sweep_quiet, "no progress");
  for (auto* sub : {run, resume, sweep}) {
    sub->add_option("--workers", workers.workers, workers_help);
    sub->add_option("--worker-secret", workers.secret_file, secret_help);
  }

  add_sandbox_flag(sweep);

  auto* list = app.add_subcommand("list", "list shipped problems and skills");
  bool list_json = false;
  list->add_flag("--json", list_json, "as JSON");

  auto* check = app.add_subcommand(
      "check",
      "validate a problem, compile its reference and every family at its knob extremes, then "
      "check its seed where the device exists. Exit codes: 0 everything compiled and the seed "
      "passed; 1 a compile failure (family, knobs and first error printed) or the seed fails "
      "its check; 2 bad input; 5 everything compiled but nothing ran: no usable CUDA device");
  std::string problem;
  check->add_option("problem", problem, "problem.toml or its folder")->required();
  add_sandbox_flag(check);

  auto* exp = app.add_subcommand("export",
                                 "write a run's best implementation as CUDA, as a "
                                 "SOL-ExecBench solution or (host problems) as C++");
  std::string export_dir, export_format = "cuda", export_out;
  exp->add_option("run_dir", export_dir, "run directory")->required();
  exp->add_option("--format", export_format,
                  "cuda (NAME.h + NAME.cu) | sol-execbench "
                  "(solution.json) | cpp (host problems: NAME.h + NAME.cpp)")
      ->check(CLI::IsMember({"cuda", "sol-execbench", "cpp"}));
  exp->add_option("-o,--output", export_out, "folder to write (default RUN_DIR/export/FORMAT)");

  auto* confirm = app.add_subcommand(
      "confirm", "measure a run's baseline and best again, side by side in pairs (docs/export.md)");
  std::string confirm_dir;
  uint32_t confirm_rounds = 5;
  bool confirm_json = false;
  confirm->add_option("run_dir", confirm_dir, "run directory")->required();
  arc::tools::add_integer_flag(confirm, "--rounds", confirm_rounds, kConfirmRoundsRange,
                               "pairs of evaluations, alternating order (default 5)");
  confirm->add_flag("--json", confirm_json, "print the confirmation as JSON");
  add_sandbox_flag(confirm);
  confirm->add_option("--evaluator", choice.kind, evaluator_help(true))
      ->check(CLI::IsMember(arc::eval::evaluator_choices(/*measuring_only=*/true)));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  for (const auto& r : replay_from) choice.replay_logs.emplace_back(r);
  if (*run || *resume || *sweep || *check || *confirm) {
    arc::eval::SandboxMode m = arc::eval::SandboxMode::kAuto;
    arc::eval::parse_sandbox_mode(sandbox_mode, &m);
    choice.sandbox = arc::eval::Sandbox::detect(m);
    if (m == arc::eval::SandboxMode::kOn && !choice.sandbox.enabled()) {
      return fail(arc::Status::invalid_argument("--sandbox on: the sandbox is unavailable: " +
                                                choice.sandbox.reason()));
    }
  }
  if (*run) return cmd_run(campaign, run_dir, seed, budget, mode, json, choice, workers, quiet);
  if (*resume) return cmd_resume(resume_dir, resume_json, choice, workers, resume_quiet);
  if (*sweep) {
    return cmd_sweep(sweep_problem, sweep_dir, sweep_sample, sweep_seed, sweep_campaign,
                     sweep_families, sweep_quiet, choice.sandbox, workers);
  }
  if (*list) return cmd_list(list_json);
  if (*check) return cmd_check(problem, choice);
  if (*exp) return cmd_export(export_dir, export_format, export_out);
  if (*confirm) return cmd_confirm(confirm_dir, confirm_rounds, confirm_json, choice);
  return 2;
}
