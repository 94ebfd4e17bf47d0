// arc-replay: reads campaign logs. Exit codes: 0 ok; 1 verify found a divergence (its seq is
// printed); 2 bad input (no such run directory, unreadable flags); 3 the log is damaged; 6 verify:
// a file the run read is neither in its log nor unchanged where the log names it
// (actors/run_inputs.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "actors/campaign_config.h"
#include "events/printer.h"
#include "replay/ablate.h"
#include "replay/analyze.h"
#include "replay/conversation.h"
#include "replay/export.h"
#include "replay/kt_export.h"
#include "replay/plot.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "tools/integer_flag.h"

namespace {

constexpr arc::IntegerRange kAblateSeedsRange{1, 100000};
constexpr arc::IntegerRange kAblateJobsRange{1, 1024, "one per core"};

// arc-replay export --format kernel-tuner (replay/kt_export.h): the problem is restored from the
// log where it can be (knob order, problem_size), else the log alone is exported.
int export_kernel_tuner(const std::string& dir, const std::string& workload,
                        const std::string& out_file) {
  std::vector<arc::events::Event> log;
  auto inputs = arc::replay::run_problem(dir, log);
  if (!inputs) {
    if (log.empty() || inputs.status().code() == arc::Status::Code::kCorruption) {
      std::fprintf(stderr, "arc-replay: %s\n", inputs.status().message().c_str());
      return inputs.status().code() == arc::Status::Code::kCorruption ? 3 : 2;
    }
    std::fprintf(stderr,
                 "arc-replay: note: the problem of %s cannot be restored (%s): knob values are "
                 "ordered without it and problem_size is empty\n",
                 dir.c_str(), inputs.status().message().c_str());
  }
  arc::replay::KernelTunerExportOptions o;
  o.workload = workload;
  auto r = arc::replay::kernel_tuner_cache(log, inputs ? &inputs->problem : nullptr, o);
  if (!r) {
    std::fprintf(stderr, "arc-replay: %s: %s\n", dir.c_str(), r.status().message().c_str());
    return 2;
  }
  if (out_file.empty()) {
    std::cout << r->text;
  } else {
    std::ofstream out(out_file);
    out << r->text;
    if (!out) {
      std::fprintf(stderr, "arc-replay: cannot write %s\n", out_file.c_str());
      return 2;
    }
  }
  std::fprintf(
      stderr,
      "arc-replay: %u configurations (%u failed, %u unmeasured and %u gated or free-source "
      "left out); best %s at %.6g ms\n",
      r->configurations, r->failed, r->unmeasured, r->gated, r->best_key.c_str(), r->best_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"arc-replay: KernelArc campaign logs"};
  app.require_subcommand(1);

  auto* show = app.add_subcommand("show", "summary and events of a run");
  std::string show_dir;
  bool show_json = false, show_events = false;
  show->add_option("run_dir", show_dir, "run directory")->required();
  show->add_flag("--json", show_json, "as JSON");
  show->add_flag("--events", show_events, "every event, one per line (JSON lines with --json)");
  bool show_conversation = false;
  std::string show_agent;
  show->add_flag("--conversation", show_conversation,
                 "every llm/exec exchange: prompt, reply and what it gave");
  show->add_option("--agent", show_agent, "with --conversation: only this agent's exchanges");

  auto* verify = app.add_subcommand("verify", "re-derive every proposal and decision");
  std::string verify_dir;
  bool verify_json = false;
  verify->add_option("run_dir", verify_dir, "run directory")->required();
  verify->add_flag("--json", verify_json, "as JSON");

  auto* exp = app.add_subcommand(
      "export", "a run's events or evaluations as CSV or JSON lines, or a Kernel Tuner cache");
  std::string export_dir, export_format = "csv", export_table = "evaluations", export_out;
  std::string export_workload;
  exp->add_option("run_dir", export_dir, "run directory or sweep")->required();
  exp->add_option("--format", export_format, "csv | jsonl | kernel-tuner")
      ->check(CLI::IsMember({"csv", "jsonl", "kernel-tuner"}));
  exp->add_option("--workload", export_workload,
                  "kernel-tuner: the workload whose time is the objective (default: the "
                  "geometric mean over the workloads)");
  exp->add_option("--table", export_table, "events | evaluations (default)")
      ->check(CLI::IsMember({"events", "evaluations"}));
  exp->add_option("-o,--output", export_out, "file to write (default: standard output)");

  auto* analyze = app.add_subcommand("analyze", "per agent and skill, per run and over runs");
  std::vector<std::string> analyze_dirs;
  bool analyze_json = false;
  analyze->add_option("run_dirs", analyze_dirs, "run directories")->required();
  analyze->add_flag("--json", analyze_json, "as JSON");

  auto* plot = app.add_subcommand("plot", "best-so-far speedup against candidates, as SVG");
  std::vector<std::string> plot_dirs;
  std::string plot_out, plot_title;
  plot->add_option("run_dirs", plot_dirs, "run directories")->required();
  plot->add_option("-o,--output", plot_out, "SVG file to write")->required();
  plot->add_option("--title", plot_title, "title (default: problem and campaign)");

  auto* ablate =
      app.add_subcommand("ablate", "counterfactual campaigns against recorded measurements");
  std::string ablate_campaign, ablate_json, ablate_csv, ablate_work;
  std::vector<std::string> ablate_from, ablate_configs;
  std::vector<uint32_t> ablate_budgets = {25, 50, 100, 200};
  uint32_t ablate_seeds = 5;
  ablate->add_option("campaign", ablate_campaign, "base campaign.toml")->required();
  ablate->add_option("--from", ablate_from, "sweeps or run directories to answer from")->required();
  arc::tools::add_integer_flag(ablate, "--seeds", ablate_seeds, kAblateSeedsRange,
                               "seeds per configuration (default 5)");
  arc::tools::add_integer_list_flag(ablate, "--budgets", ablate_budgets, arc::actors::kBudgetRange,
                                    "budgets to report (default 25,50,100,200)");
  ablate->add_option("--config", ablate_configs,
                     "NAME:KEY=VALUE,... (repeatable; keys: agents, wins, traps, drafting, "
                     "sibling_inspection, plateau_window, global_plateau, skill, skill.AGENT; "
                     "default: one-agent, bounded, unbounded, no-drafting, no-siblings)");
  ablate->add_option("--json", ablate_json, "write the report as JSON to this file");
  ablate->add_option("--csv", ablate_csv, "write the report as CSV to this file");
  std::string ablate_plot;
  ablate->add_option("--plot", ablate_plot, "write median and IQR bands per configuration (SVG)");
  ablate->add_option("--work-dir", ablate_work, "scratch folder (default: a temp folder)");
  uint32_t ablate_jobs = 0;
  arc::tools::add_integer_flag(
      ablate, "--jobs", ablate_jobs, kAblateJobsRange,
      "campaigns run at once (default 0: one per core); the report is the same");
  bool ablate_on_disk = false;
  ablate->add_flag("--logs-on-disk", ablate_on_disk,
                   "keep each campaign's log in RocksDB under --work-dir instead of in memory");
  double ablate_target = 0;
  ablate
      ->add_option("--target-score", ablate_target,
                   "the score 'to 90/95/99%' are fractions of (default 0: the best known)")
      ->check(CLI::NonNegativeNumber);
  bool ablate_exact = false;
  ablate->add_flag("--exact", ablate_exact,
                   "answer every campaign with the recorded medians (no resampling per seed)");
  std::string ablate_space = "full";
  ablate
      ->add_option("--space", ablate_space,
                   "where builtin agents search: full (the problem's space) or measured (only "
                   "candidates whose every variant the measurements measured; for sampled sweeps)")
      ->check(CLI::IsMember({"full", "measured"}));
  std::string ablate_baseline;
  ablate->add_option("--baseline", ablate_baseline,
                     "start every campaign from this recorded candidate (its hash or a unique "
                     "prefix; measured correct on every workload) instead of the problem's seed");
  std::vector<std::string> ablate_excluded;
  ablate->add_option("--exclude-family", ablate_excluded,
                     "a family the builtin agents never propose (repeatable)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (*show) {
    auto log = arc::replay::read_run(show_dir);
    if (!log) {
      std::fprintf(stderr, "arc-replay: %s\n", log.status().message().c_str());
      return log.status().code() == arc::Status::Code::kCorruption ? 3 : 2;
    }
    if (show_conversation) {
      auto journal = arc::replay::open_run_log(show_dir);
      if (!journal) {
        std::fprintf(stderr, "arc-replay: %s\n", journal.status().message().c_str());
        return 2;
      }
      const arc::storage::Journal* j = journal.value().get();
      std::cout << arc::replay::conversation_text(
          log.value(), [j](const std::string& h) { return j->get_artifact(h); }, show_agent);
      return 0;
    }
    if (show_events) {
      for (const auto& e : log.value()) {
        if (show_json) {
          std::cout << arc::events::dump_json(arc::events::to_json(e)) << "\n";
        } else {
          std::cout << arc::events::to_text(e) << "\n";
        }
      }
      return 0;
    }
    // The workloads' rows follow the run's problem: the log's copy when its folder is gone or
    // changed (a run whose inputs cannot be restored is summarized without them).
    std::vector<arc::events::Event> again;
    auto inputs = arc::replay::run_problem(show_dir, again);
    auto summary = arc::replay::summarize(log.value(), inputs ? &inputs->problem : nullptr);
    if (show_json) {
      std::cout << arc::events::dump_json(arc::replay::to_json(summary), 2) << std::endl;
    } else {
      std::cout << arc::replay::to_table(summary);
    }
    return 0;
  }
  if (*exp && export_format == "kernel-tuner") {
    return export_kernel_tuner(export_dir, export_workload, export_out);
  }
  if (*exp) {
    auto log = arc::replay::read_run(export_dir);
    if (!log) {
      std::fprintf(stderr, "arc-replay: %s\n", log.status().message().c_str());
      return log.status().code() == arc::Status::Code::kCorruption ? 3 : 2;
    }
    const auto table = export_table == "events" ? arc::replay::ExportTable::kEvents
                                                : arc::replay::ExportTable::kEvaluations;
    const auto format = export_format == "jsonl" ? arc::replay::ExportFormat::kJsonl
                                                 : arc::replay::ExportFormat::kCsv;
    if (export_out.empty()) {
      arc::replay::export_log(log.value(), table, format, std::cout);
    } else {
      std::ofstream out(export_out);
      arc::replay::export_log(log.value(), table, format, out);
      if (!out) {
        std::fprintf(stderr, "arc-replay: cannot write %s\n", export_out.c_str());
        return 2;
      }
    }
    return 0;
  }
  if (*analyze) {
    std::vector<arc::replay::RunAnalysis> runs;
    for (const auto& dir : analyze_dirs) {
      auto log = arc::replay::read_run(dir);
      if (!log) {
        std::fprintf(stderr, "arc-replay: %s\n", log.status().message().c_str());
        return log.status().code() == arc::Status::Code::kCorruption ? 3 : 2;
      }
      runs.push_back(arc::replay::analyze_run(dir, log.value()));
    }
    auto a = arc::replay::aggregate(std::move(runs));
    if (analyze_json) {
      std::cout << arc::events::dump_json(arc::replay::to_json(a), 2) << std::endl;
    } else {
      std::cout << arc::replay::to_table(a);
    }
    return 0;
  }
  if (*plot) {
    std::vector<arc::replay::RunAnalysis> runs;
    for (const auto& dir : plot_dirs) {
      auto log = arc::replay::read_run(dir);
      if (!log) {
        std::fprintf(stderr, "arc-replay: %s\n", log.status().message().c_str());
        return log.status().code() == arc::Status::Code::kCorruption ? 3 : 2;
      }
      runs.push_back(arc::replay::analyze_run(dir, log.value()));
    }
    if (plot_title.empty()) {
      plot_title =
          runs.front().problem + (runs.size() == 1 ? ", campaign " + runs.front().campaign
                                                   : ", " + std::to_string(runs.size()) + " runs");
    }
    std::ofstream out(plot_out);
    out << arc::replay::plot_svg(runs, plot_title);
    if (!out) {
      std::fprintf(stderr, "arc-replay: cannot write %s\n", plot_out.c_str());
      return 2;
    }
    return 0;
  }
  if (*ablate) {
    arc::replay::AblationOptions o;
    o.base_campaign = ablate_campaign;
    for (const auto& f : ablate_from) o.measurements.emplace_back(f);
    o.seeds = ablate_seeds;
    o.budgets = ablate_budgets;
    o.jobs = ablate_jobs;
    o.logs_on_disk = ablate_on_disk;
    o.target_score = ablate_target;
    o.exact = ablate_exact;
    o.measured_space = ablate_space == "measured";
    o.baseline = ablate_baseline;
    o.excluded_families = ablate_excluded;
    if (ablate_configs.empty()) {
      o.configs = arc::replay::default_ablation_configs();
    } else {
      for (const auto& spec : ablate_configs) {
        auto c = arc::replay::parse_ablation_config(spec);
        if (!c) {
          std::fprintf(stderr, "arc-replay: %s\n", c.status().message().c_str());
          return 2;
        }
        o.configs.push_back(c.value());
      }
    }
    o.work_dir = ablate_work.empty() ? std::filesystem::temp_directory_path() /
                                           ("arc-ablate-" + std::to_string(::getpid()))
                                     : std::filesystem::path(ablate_work);
    auto r = arc::replay::run_ablation(o);
    std::error_code ec;
    if (ablate_work.empty()) std::filesystem::remove_all(o.work_dir, ec);
    if (!r) {
      std::fprintf(stderr, "arc-replay: %s\n", r.status().message().c_str());
      return r.status().code() == arc::Status::Code::kInvalidArgument ? 2 : 3;
    }
    std::cout << arc::replay::to_table(r.value());
    if (!ablate_json.empty())
      std::ofstream(ablate_json) << arc::events::dump_json(arc::replay::to_json(r.value()), 2)
                                 << "\n";
    if (!ablate_csv.empty()) std::ofstream(ablate_csv) << arc::replay::to_csv(r.value());
    if (!ablate_plot.empty()) {
      std::ofstream(ablate_plot) << arc::replay::plot_ablation_svg(
          r.value(), "ablation of " + ablate_campaign + ", " + std::to_string(ablate_seeds) +
                         " seeds per configuration");
    }
    return 0;
  }
  if (*verify) {
    auto r = arc::replay::verify_run(verify_dir);
    if (verify_json) {
      nlohmann::json j = {{"ok", r.ok},
                          {"events", r.events},
                          {"proposals", r.proposals},
                          {"decisions", r.decisions},
                          {"plateaus", r.plateaus},
                          {"pairs", r.pairs},
                          {"exchanges", r.exchanges},
                          {"divergence_seq", r.divergence_seq},
                          {"damaged", r.damaged},
                          {"missing_input", r.missing_input},
                          {"message", r.message},
                          {"warnings", r.warnings},
                          {"notes", r.notes},
                          {"seconds", r.seconds}};
      std::cout << arc::events::dump_json(j, 2) << std::endl;
    } else if (r.ok) {
      std::printf(
          "verified %llu events: %llu proposals, %llu decisions, %llu pairs, %llu plateaus, "
          "%llu exchanges re-derived identically (%.3f s)\n",
          static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.proposals),
          static_cast<unsigned long long>(r.decisions), static_cast<unsigned long long>(r.pairs),
          static_cast<unsigned long long>(r.plateaus), static_cast<unsigned long long>(r.exchanges),
          r.seconds);
    } else if (r.damaged) {
      std::printf("DAMAGED LOG: %s\n", r.message.c_str());
    } else if (r.missing_input) {
      std::printf("MISSING INPUT: %s\n", r.message.c_str());
    } else if (r.divergence_seq == 0) {
      std::printf("NO SUCH RUN: %s\n", r.message.c_str());
    } else {
      std::printf("DIVERGENCE at seq %llu: %s\n", static_cast<unsigned long long>(r.divergence_seq),
                  r.message.c_str());
    }
    for (const auto& w : r.warnings) std::fprintf(stderr, "arc-replay: warning: %s\n", w.c_str());
    for (const auto& n : r.notes) std::fprintf(stderr, "arc-replay: note: %s\n", n.c_str());
    // As README.md says: 0 verified, 1 divergence, 2 no such run, 3 damaged log, 6 missing input.
    if (r.ok) return 0;
    if (r.damaged) return 3;
    if (r.missing_input) return 6;
    return r.divergence_seq == 0 ? 2 : 1;
  }
  return 2;
}
