#pragma once
// A run directory for export tests: a real RocksDB log built event by event for a shipped
// problem, its seed proposed and KEPT as the baseline, then `best` KEPT with a higher score,
// each evaluated on every workload, the best's workloads carrying the details given (e.g. a
// cuBLASLt "plan" and "library", as the CUDA evaluator records them).
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "actors/view.h"
#include "problem/problem.h"
#include "storage/journal.h"
#include "tests/scratch.h"

namespace arc::testing {

// workload -> (key, value) details of the best's evaluation.
using WorkloadDetails = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

inline std::filesystem::path synthetic_run(
    const std::filesystem::path& run, const std::string& problem_dir,
    const problem::Candidate& best, const WorkloadDetails& details,
    const std::string& device = "cuda: NVIDIA H200 (sm_90a)") {
  namespace fs = std::filesystem;
  auto problem = problem::load_problem(fs::path(ARC_SOURCE_DIR) / problem_dir);
  EXPECT_TRUE(problem.ok()) << problem.status().to_string();
  fs::remove_all(run);
  fs::create_directories(run);
  auto j = storage::Journal::open((run / "log").string(), {});
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  auto& journal = *j.value();
  EXPECT_TRUE(journal.set_campaign("exporttest").is_ok());
  auto add = [&journal](const std::string& actor, auto payload) {
    auto e = events::make_event(actor, std::move(payload));
    auto seq = journal.append(e);
    EXPECT_TRUE(seq.ok()) << seq.status().to_string();
    return seq.ok() ? seq.value() : 0;
  };
  fb::CampaignStartedT s;
  s.problem_name = problem->name;
  s.problem_dir = problem->dir.string();
  s.problem_hash = problem->hash;
  s.kernel_type = problem->kernel_type;
  s.mode = "lockstep";
  s.device = device;
  add(actors::kCampaignActor, s);
  fb::AgentSpawnedT a;
  a.agent = "tiler";
  a.skill = "tiling";
  a.backend = "builtin";
  add(actors::kCampaignActor, a);
  auto propose_and_keep = [&](const std::string& agent, const problem::Candidate& c, double score,
                              const std::string& move) {
    fb::CandidateProposedT p;
    p.candidate_hash = c.hash();
    p.agent = agent;
    p.move = move;
    p.canonical = c.canonical();
    add(agent, p);
    fb::CandidateEvaluatedT ev;
    ev.candidate_hash = c.hash();
    ev.evaluator = problem->backend;
    for (const auto& w : problem->workloads) {
      auto we = std::make_unique<fb::WorkloadEvaluationT>();
      we->workload = w.name;
      we->status = fb::WorkloadStatus::OK;
      we->median_ns = 1e5 / score;
      if (auto it = details.find(w.name); it != details.end() && agent != actors::kCampaignActor) {
        for (const auto& [key, value] : it->second) {
          auto kv = std::make_unique<fb::KeyValueT>();
          kv->key = key;
          kv->value = value;
          we->details.push_back(std::move(kv));
        }
      }
      ev.workloads.push_back(std::move(we));
    }
    const uint64_t eval_seq = add(actors::kGuardActor, std::move(ev));
    fb::DecisionT d;
    d.candidate_hash = c.hash();
    d.agent = agent;
    d.verdict = fb::Verdict::KEEP;
    d.score = score;
    d.evaluation_seq = eval_seq;
    for (size_t i = 0; i < problem->workloads.size(); ++i) d.speedups.push_back(score);
    add(actors::kGuardActor, d);
  };
  propose_and_keep(actors::kCampaignActor, problem->seed, 1.0, actors::kBaselineMove);
  propose_and_keep("tiler", best, 2.5, "shape_gate:1_gates");
  return run;
}

}  // namespace arc::testing
