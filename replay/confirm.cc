#include "replay/confirm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "actors/campaign_config.h"
#include "actors/check.h"
#include "base/stats.h"
#include "eval/pair.h"
#include "eval/worker.h"
#include "problem/problem.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"

namespace arc::replay {

namespace fs = std::filesystem;

namespace {

double median_of(std::vector<double> v) { return arc::median(std::move(v)); }

// The candidate the campaign proposed as its baseline (move "baseline"), from the log.
std::string baseline_canonical(const std::vector<events::Event>& log) {
  for (const auto& e : log) {
    if (e.payload.type != fb::Payload::CandidateProposed) continue;
    const auto* p = e.payload.AsCandidateProposed();
    if (p->move == "baseline") return p->canonical;
  }
  return "";
}

}  // namespace

Result<Confirmation> confirm_run(const fs::path& run_dir, const ConfirmOptions& options) {
  if (options.rounds == 0)
    return Status::invalid_argument("--rounds: expected a positive integer, got 0");
  std::vector<events::Event> log;
  auto rec = reconstruct_run(run_dir, log);
  if (!rec) return rec.status();
  tell_input_notices(rec.value(), options.notice);
  const problem::Problem& problem = rec->problem;
  const CampaignSummary s = summarize(log, &problem);
  if (s.best_canonical.empty()) {
    return Status::invalid_argument(run_dir.string() + ": the run has no evaluated baseline yet");
  }
  const std::string base_text = baseline_canonical(log);
  if (base_text.empty()) {
    return Status::invalid_argument(run_dir.string() + ": the log has no baseline proposal");
  }
  const actors::CampaignConfig& config = rec->config;
  auto baseline = problem::Candidate::from_canonical(base_text);
  if (!baseline) return baseline.status();
  auto best = problem::Candidate::from_canonical(s.best_canonical);
  if (!best) return best.status();

  // A CUDA run confirmed without a GPU: kUnavailable before anything is measured.
  if (Status dev = actors::require_device(problem, options.choice); !dev) return dev;
  auto evaluator = eval::make_evaluator(options.choice, problem);
  if (!evaluator) return evaluator.status();
  eval::Evaluator& ev = *evaluator.value();

  Confirmation c;
  c.run_dir = run_dir.string();
  c.problem = problem.name;
  c.device = ev.device();
  c.evaluator = ev.name();
  c.baseline_hash = baseline->hash();
  c.best_hash = s.best_hash;
  c.best_is_baseline = c.best_hash == c.baseline_hash;
  c.logged_score = s.best_score;
  c.rounds = options.rounds;

  struct Side {
    const problem::Candidate* candidate;
    std::string hash;
    fb::CompileFinishedT compiled;
  };
  Side sides[2] = {{&baseline.value(), c.baseline_hash, {}}, {&best.value(), c.best_hash, {}}};
  for (Side& side : sides) {
    side.compiled = ev.compile(*side.candidate, side.hash);
    if (!side.compiled.ok) {
      std::string why = "a variant failed to compile";
      for (const auto& v : side.compiled.variants) {
        if (!v->error.empty()) {
          why = v->error.substr(0, 400);
          break;
        }
      }
      return Status::internal("candidate " + side.hash.substr(0, 12) +
                              " no longer compiles: " + why);
    }
  }
  for (const auto& w : problem.workloads) {
    WorkloadConfirmation wc;
    wc.workload = w.name;
    for (const auto& ws : s.workloads) {
      if (ws.name == w.name) wc.logged_speedup = ws.speedup;
    }
    c.workloads.push_back(std::move(wc));
  }
  for (uint32_t r = 0; r < options.rounds; ++r) {
    // Both sides of a round see the same inputs; baseline first in even rounds.
    const uint64_t input_seed = eval::derive_seed(s.seed, 0xC0FF1A, r);
    std::vector<double> medians[2] = {std::vector<double>(c.workloads.size(), 0.0),
                                      std::vector<double>(c.workloads.size(), 0.0)};
    // The best is the pair's candidate, the baseline its incumbent (eval/pair.h).
    const fb::PairMeasuredT pair =
        eval::measure_pair(ev, {sides[1].candidate, sides[1].hash, &sides[1].compiled},
                           {sides[0].candidate, sides[0].hash, &sides[0].compiled}, r % 2 == 1,
                           input_seed, config.evaluation);
    for (const auto& pw : pair.workloads) {
      for (size_t i = 0; i < c.workloads.size(); ++i) {
        WorkloadConfirmation& wc = c.workloads[i];
        if (pw->workload != wc.workload) continue;
        const fb::PairSideT* by_side[2] = {pw->incumbent.get(), pw->candidate.get()};
        for (int side = 0; side < 2; ++side) {
          const fb::PairSideT& ps = *by_side[side];
          if (ps.status != fb::WorkloadStatus::OK) {
            if (wc.status == "OK") {
              wc.status = fb::EnumNameWorkloadStatus(ps.status);
              wc.error = std::string(side == 0 ? "baseline" : "best") + ": " + ps.error;
            }
          } else {
            medians[side][i] = ps.median_ns;
          }
        }
      }
    }
    for (size_t i = 0; i < c.workloads.size(); ++i) {
      WorkloadConfirmation& wc = c.workloads[i];
      if (wc.status != "OK" || medians[0][i] <= 0 || medians[1][i] <= 0) {
        if (wc.status == "OK") {
          wc.status = "NOT_RUN";
          wc.error = "no measurement in round " + std::to_string(r);
        }
        continue;
      }
      wc.baseline_ns.push_back(medians[0][i]);
      wc.best_ns.push_back(medians[1][i]);
      wc.ratios.push_back(medians[0][i] / medians[1][i]);
    }
  }
  double log_sum = 0;
  int counted = 0;
  for (WorkloadConfirmation& wc : c.workloads) {
    if (wc.status != "OK" || wc.ratios.empty()) continue;
    wc.median_ratio = median_of(wc.ratios);
    wc.min_ratio = *std::min_element(wc.ratios.begin(), wc.ratios.end());
    wc.max_ratio = *std::max_element(wc.ratios.begin(), wc.ratios.end());
    log_sum += std::log(wc.median_ratio);
    ++counted;
  }
  c.geomean_median_ratio = counted > 0 ? std::exp(log_sum / counted) : 0;
  return c;
}

nlohmann::json to_json(const Confirmation& c) {
  nlohmann::json j = {{"run_dir", c.run_dir},
                      {"problem", c.problem},
                      {"device", c.device},
                      {"evaluator", c.evaluator},
                      {"baseline_hash", c.baseline_hash},
                      {"best_hash", c.best_hash},
                      {"best_is_baseline", c.best_is_baseline},
                      {"logged_score", c.logged_score},
                      {"rounds", c.rounds},
                      {"geomean_median_ratio", c.geomean_median_ratio},
                      {"workloads", nlohmann::json::array()}};
  for (const auto& w : c.workloads) {
    j["workloads"].push_back({{"workload", w.workload},
                              {"status", w.status},
                              {"error", w.error},
                              {"baseline_ns", w.baseline_ns},
                              {"best_ns", w.best_ns},
                              {"ratios", w.ratios},
                              {"median_ratio", w.median_ratio},
                              {"min_ratio", w.min_ratio},
                              {"max_ratio", w.max_ratio},
                              {"logged_speedup", w.logged_speedup}});
  }
  return j;
}

std::string to_table(const Confirmation& c) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: baseline %s vs best %s, %u rounds in pairs (alternating order), on %s\n",
                c.problem.c_str(), c.baseline_hash.substr(0, 12).c_str(),
                c.best_hash.substr(0, 12).c_str(), c.rounds, c.device.c_str());
  out += line;
  if (c.best_is_baseline) {
    out +=
        "nothing was kept: the best is the baseline, so the ratios show the measurement's own "
        "spread\n";
  }
  std::snprintf(line, sizeof line, "  %-26s %12s %12s %9s %9s %9s %9s\n", "workload", "baseline",
                "best", "speedup", "min", "max", "logged");
  out += line;
  for (const auto& w : c.workloads) {
    if (w.status != "OK") {
      std::snprintf(line, sizeof line, "  %-26s %s: %s\n", w.workload.c_str(), w.status.c_str(),
                    w.error.substr(0, 200).c_str());
      out += line;
      continue;
    }
    std::snprintf(line, sizeof line, "  %-26s %10.1fus %10.1fus %8.3fx %8.3fx %8.3fx %8.3fx\n",
                  w.workload.c_str(), median_of(w.baseline_ns) / 1e3, median_of(w.best_ns) / 1e3,
                  w.median_ratio, w.min_ratio, w.max_ratio, w.logged_speedup);
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-26s %12s %12s %8.3fx %29s %8.3fx\n", "geomean", "", "",
                c.geomean_median_ratio, "", c.logged_score);
  out += line;
  return out;
}

}  // namespace arc::replay
