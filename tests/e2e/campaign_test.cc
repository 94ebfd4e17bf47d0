// End-to-end: real campaigns on the shipped host problems with the host evaluator (real
// compiler, real worker process, real RocksDB log), then verification of their logs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "actors/campaign_runner.h"
#include "eval/evaluators.h"
#include "eval/worker.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) { return testing::scratch_path("e2e", name); }

fs::path campaign_file(const std::string& problem) {
  return fs::path(ARC_SOURCE_DIR) / "problems/host" / problem / "campaign.toml";
}

// Writes a copy of a shipped campaign with its problem path made absolute and `edit` applied.
fs::path edited_campaign(const std::string& problem, const std::string& name,
                         const std::function<void(std::string&)>& edit) {
  std::ifstream in(campaign_file(problem));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string key = "problem = \"";
  auto pos = text.find(key);
  auto end = text.find('"', pos + key.size());
  const std::string rel = text.substr(pos + key.size(), end - pos - key.size());
  text.replace(pos + key.size(), rel.size(),
               fs::weakly_canonical(campaign_file(problem).parent_path() / rel).string());
  edit(text);
  fs::path out = scratch(name + ".toml");
  std::ofstream(out) << text;
  return out;
}

struct Ran {
  fs::path run_dir;
  replay::CampaignSummary summary;
  std::vector<events::Event> log;
};

Ran run(const fs::path& file, const std::string& name, const eval::EvaluatorChoice& choice,
        std::optional<uint32_t> budget = std::nullopt,
        std::optional<uint64_t> seed = std::nullopt) {
  auto config = actors::load_campaign(file);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  actors::RunOptions o;
  o.run_dir = scratch(name);
  o.budget = budget;
  o.seed = seed;
  o.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  auto prepared = actors::prepare_campaign(std::move(config.value()), o);
  EXPECT_TRUE(prepared.ok()) << prepared.status().to_string();
  auto r = actors::run_campaign(std::move(prepared.value()), o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  auto log = replay::read_run(o.run_dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  Ran out{o.run_dir, replay::summarize(log.value()), log.value()};
  EXPECT_TRUE(replay::write_run_outputs(o.run_dir, out.summary).is_ok());
  return out;
}

std::vector<std::string> proposals(const std::vector<events::Event>& log) {
  std::vector<std::string> out;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      out.push_back(p->agent + " " + p->candidate_hash + " " + p->move);
    }
  }
  return out;
}

void expect_good_campaign(const Ran& r, uint32_t budget) {
  const auto& s = r.summary;
  EXPECT_TRUE(s.stopped);
  EXPECT_GT(s.candidates, 0u);
  EXPECT_LE(s.candidates, budget);
  if (s.candidates < budget) {
    EXPECT_TRUE(s.stop_reason.find("plateau") != std::string::npos ||
                s.stop_reason.find("out of new candidates") != std::string::npos)
        << s.stop_reason;
  }
  // The best passed every correctness check (it was KEPT) and beats the seed.
  EXPECT_GT(s.best_score, 1.05) << "best " << s.best_hash;
  for (const auto& w : s.workloads) {
    EXPECT_GT(w.best_ns, 0) << w.name;
    EXPECT_GT(w.baseline_ns, 0) << w.name;
  }
  bool best_kept = false;
  for (const auto& e : r.log) {
    if (e.payload.type == fb::Payload::Decision) {
      const auto* d = e.payload.AsDecision();
      if (d->candidate_hash == s.best_hash && d->verdict == fb::Verdict::KEEP) best_kept = true;
    }
  }
  EXPECT_TRUE(best_kept);
  EXPECT_TRUE(fs::exists(r.run_dir / "report.md"));
  EXPECT_TRUE(fs::exists(r.run_dir / "best" / "candidate.json"));
  EXPECT_TRUE(fs::exists(r.run_dir / "best" / "base.cpp"));
  auto v = replay::verify_run(r.run_dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
  EXPECT_EQ(v.events, r.log.size());
  EXPECT_GT(v.proposals, 0u);
  EXPECT_GT(v.decisions, s.candidates);  // every candidate and the baseline
}

class HostCampaign : public ::testing::TestWithParam<std::string> {};

TEST_P(HostCampaign, FourAgentsFortyCandidates) {
  Ran r = run(campaign_file(GetParam()), GetParam() + "-4", {}, 40);
  ASSERT_EQ(r.summary.agents.size(), 4u);
  expect_good_campaign(r, 40);
}

TEST_P(HostCampaign, OneAgentFortyCandidates) {
  auto file = edited_campaign(GetParam(), GetParam() + "-1", [](std::string& t) {
    // Keep only the first [[agents]] entry.
    auto first = t.find("[[agents]]");
    auto second = t.find("[[agents]]", first + 1);
    if (second != std::string::npos) t.erase(second);
  });
  Ran r = run(file, GetParam() + "-1", {}, 40);
  ASSERT_EQ(r.summary.agents.size(), 1u);
  expect_good_campaign(r, 40);
}

INSTANTIATE_TEST_SUITE_P(Problems, HostCampaign, ::testing::Values("softmax", "matmul"));

TEST(Lockstep, SameSeedAndMeasurementsProposeTheSameCandidatesInOrder) {
  auto file = edited_campaign("softmax", "lockstep", [](std::string& t) {
    auto m = t.find("mode = \"");
    if (m != std::string::npos) t.replace(m, t.find('"', m + 8) + 1 - m, "mode = \"lockstep\"");
  });
  Ran live = run(file, "lockstep-live", {}, 24, 5);
  eval::EvaluatorChoice replay;
  replay.kind = "replay";
  replay.replay_logs = {live.run_dir};
  Ran a = run(file, "lockstep-a", replay, 24, 5);
  Ran b = run(file, "lockstep-b", replay, 24, 5);
  const auto pl = proposals(live.log), pa = proposals(a.log), pb = proposals(b.log);
  ASSERT_GT(pl.size(), 10u);
  EXPECT_EQ(pa, pl);
  EXPECT_EQ(pb, pa);
  EXPECT_EQ(a.summary.best_hash, live.summary.best_hash);
  EXPECT_TRUE(replay::verify_run(a.run_dir).ok);
}

TEST(Async, CampaignReplaysExactly) {
  auto file = edited_campaign("matmul", "async", [](std::string& t) {
    auto m = t.find("mode = \"");
    if (m != std::string::npos) t.replace(m, t.find('"', m + 8) + 1 - m, "mode = \"async\"");
  });
  Ran r = run(file, "async", {}, 20);
  EXPECT_EQ(r.summary.mode, "async");
  auto v = replay::verify_run(r.run_dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
}

// The command line: bad input names file and field, exits 2 and writes nothing.
int run_cli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(ARC_BINARY_DIR) + "/tools/" + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return WEXITSTATUS(pclose(p));
}

TEST(Cli, BadCampaignNamesFileAndFieldAndWritesNothing) {
  auto file = edited_campaign("softmax", "bad", [](std::string& t) {
    auto b = t.find("budget = ");
    t.replace(b, t.find('\n', b) - b, "budget = \"forty\"");
  });
  const fs::path run_dir = scratch("bad-run");
  std::string out;
  const int rc = run_cli("arcd run " + file.string() + " --run-dir " + run_dir.string(), &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find(file.string()), std::string::npos) << out;
  EXPECT_NE(out.find("campaign.budget"), std::string::npos) << out;
  EXPECT_NE(out.find("expected an integer in [1, 1000000]"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(run_dir));
}

TEST(Cli, RunJsonThenShowAndVerify) {
  const fs::path run_dir = scratch("cli-run");
  std::string out;
  const int rc = run_cli("arcd run " + campaign_file("softmax").string() +
                             " --budget 8 --seed 2 --json --run-dir " + run_dir.string(),
                         &out);
  ASSERT_EQ(rc, 0) << out;
  auto brace = out.find("{\n");
  ASSERT_NE(brace, std::string::npos) << out;
  auto j = nlohmann::json::parse(out.substr(brace));
  EXPECT_EQ(j["candidates"].get<int>(), 8);
  EXPECT_EQ(j["seed"].get<int>(), 2);
  EXPECT_GT(j["best"]["score"].get<double>(), 1.0);
  std::string verify;
  EXPECT_EQ(run_cli("arc-replay verify " + run_dir.string(), &verify), 0) << verify;
  EXPECT_NE(verify.find("verified"), std::string::npos);
  std::string show;
  EXPECT_EQ(run_cli("arc-replay show " + run_dir.string() + " --events", &show), 0);
  EXPECT_NE(show.find("CampaignStopped"), std::string::npos);

  // The same run with its write-ahead log cut short: verify and resume report the damage with
  // exit 3 and the first missing seq; neither shortens the log for good.
  const fs::path damaged = scratch("cli-run-damaged");
  fs::remove_all(damaged);
  fs::copy(run_dir, damaged, fs::copy_options::recursive);
  fs::path wal;
  for (const auto& e : fs::directory_iterator(damaged / "log")) {
    if (e.path().extension() == ".log" && (wal.empty() || e.file_size() > fs::file_size(wal))) {
      wal = e.path();
    }
  }
  ASSERT_FALSE(wal.empty()) << "no write-ahead log in " << damaged;
  fs::resize_file(wal, fs::file_size(wal) * 2 / 3);
  const auto cut = fs::file_size(wal);
  std::string bad;
  EXPECT_EQ(run_cli("arc-replay verify " + damaged.string(), &bad), 3) << bad;
  EXPECT_NE(bad.find("is the first missing"), std::string::npos) << bad;
  std::string resumed;
  EXPECT_EQ(run_cli("arcd resume " + damaged.string(), &resumed), 3) << resumed;
  EXPECT_EQ(fs::file_size(wal), cut) << "resume rewrote the damaged log";
}

// arcd confirm: the run's baseline and best measured again in pairs; each round's ratio is the
// baseline's median over the best's, and the run's log is left as it was.
TEST(Cli, ConfirmMeasuresBaselineAndBestInPairsAndLeavesTheLogAlone) {
  const fs::path run_dir = scratch("confirm-run");
  std::string out;
  ASSERT_EQ(run_cli("arcd run " + campaign_file("softmax").string() +
                        " --budget 8 --seed 3 --json --quiet --run-dir " + run_dir.string(),
                    &out),
            0)
      << out;
  auto ran = nlohmann::json::parse(out.substr(out.find("{\n")));
  std::string before;
  ASSERT_EQ(run_cli("arc-replay show " + run_dir.string() + " --events", &before), 0) << before;

  std::string confirmed;
  ASSERT_EQ(run_cli("arcd confirm " + run_dir.string() + " --rounds 3 --json", &confirmed), 0)
      << confirmed;
  auto j = nlohmann::json::parse(confirmed.substr(confirmed.find("{\n")));
  EXPECT_EQ(j["rounds"].get<int>(), 3);
  EXPECT_EQ(j["problem"].get<std::string>(), "softmax");
  EXPECT_EQ(j["evaluator"].get<std::string>(), "host");
  EXPECT_EQ(j["best_hash"].get<std::string>(), ran["best"]["hash"].get<std::string>());
  EXPECT_EQ(j["best_is_baseline"].get<bool>(), j["baseline_hash"] == j["best_hash"]);
  EXPECT_DOUBLE_EQ(j["logged_score"].get<double>(), ran["best"]["score"].get<double>());
  ASSERT_EQ(j["workloads"].size(), ran["workloads"].size());
  double log_sum = 0;
  for (const auto& w : j["workloads"]) {
    SCOPED_TRACE(w["workload"].get<std::string>());
    EXPECT_EQ(w["status"].get<std::string>(), "OK") << w["error"];
    ASSERT_EQ(w["ratios"].size(), 3u);
    ASSERT_EQ(w["baseline_ns"].size(), 3u);
    ASSERT_EQ(w["best_ns"].size(), 3u);
    std::vector<double> ratios;
    for (int r = 0; r < 3; ++r) {
      const double b = w["baseline_ns"][r].get<double>(), c = w["best_ns"][r].get<double>();
      ASSERT_GT(b, 0);
      ASSERT_GT(c, 0);
      EXPECT_DOUBLE_EQ(w["ratios"][r].get<double>(), b / c);
      ratios.push_back(b / c);
    }
    std::sort(ratios.begin(), ratios.end());
    EXPECT_DOUBLE_EQ(w["median_ratio"].get<double>(), ratios[1]);
    EXPECT_DOUBLE_EQ(w["min_ratio"].get<double>(), ratios[0]);
    EXPECT_DOUBLE_EQ(w["max_ratio"].get<double>(), ratios[2]);
    EXPECT_GT(w["logged_speedup"].get<double>(), 0);
    log_sum += std::log(ratios[1]);
  }
  EXPECT_NEAR(j["geomean_median_ratio"].get<double>(), std::exp(log_sum / j["workloads"].size()),
              1e-12);

  std::string table;
  ASSERT_EQ(run_cli("arcd confirm " + run_dir.string() + " --rounds 1", &table), 0) << table;
  EXPECT_NE(table.find("1 rounds in pairs"), std::string::npos) << table;
  EXPECT_NE(table.find("geomean"), std::string::npos) << table;

  std::string after;
  ASSERT_EQ(run_cli("arc-replay show " + run_dir.string() + " --events", &after), 0);
  EXPECT_EQ(after, before);
  std::string verify;
  EXPECT_EQ(run_cli("arc-replay verify " + run_dir.string(), &verify), 0) << verify;

  std::string missing;
  const fs::path nowhere = scratch("confirm-missing") / "no-such-run";
  EXPECT_NE(run_cli("arcd confirm " + nowhere.string(), &missing), 0);
  EXPECT_NE(missing.find(nowhere.string()), std::string::npos) << missing;
  std::string zero;
  EXPECT_EQ(run_cli("arcd confirm " + run_dir.string() + " --rounds 0", &zero), 2) << zero;
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

// A family that crashes, aborts, hangs, allocates without bound, prints, or computes wrong or
// all-zero outputs, chosen by a knob: each fault is REJECTed with its reason, the worker is
// replaced, and the campaign goes on to a verified end.
TEST(Hostile, EveryFaultIsRejectedWithItsReasonAndTheCampaignGoesOn) {
  if (eval::kAddressSanitizer) {
    GTEST_SKIP() << "under AddressSanitizer the worker has no address-space limit, and this "
                    "campaign allocates without bound";
  }
  const fs::path file = fs::path(ARC_SOURCE_DIR) / "tests/data/hostile/campaign.toml";
  Ran r = run(file, "hostile", {});
  ASSERT_TRUE(r.summary.stopped);
  const std::map<std::string, fb::WorkloadStatus> expected = {
      {"segv", fb::WorkloadStatus::CRASH},         {"abort", fb::WorkloadStatus::CRASH},
      {"hang", fb::WorkloadStatus::TIMEOUT},       {"alloc", fb::WorkloadStatus::OUT_OF_MEMORY},
      {"wrong", fb::WorkloadStatus::WRONG_RESULT}, {"zero", fb::WorkloadStatus::WRONG_RESULT},
  };
  std::map<std::string, std::string> fault_of;  // candidate hash -> FAULT value
  std::map<std::string, fb::WorkloadStatus> status_of;
  std::set<std::string> seen;
  for (const auto& e : r.log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      auto c = problem::Candidate::from_canonical(e.payload.AsCandidateProposed()->canonical);
      ASSERT_TRUE(c.ok());
      auto it = c->base.knobs.find("FAULT");
      fault_of[e.payload.AsCandidateProposed()->candidate_hash] =
          it == c->base.knobs.end() ? "none" : it->second;
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      const auto* p = e.payload.AsCandidateEvaluated();
      fb::WorkloadStatus first_bad = fb::WorkloadStatus::OK;
      for (const auto& w : p->workloads) {
        if (w->status != fb::WorkloadStatus::OK) {
          first_bad = w->status;
          break;
        }
      }
      status_of[p->candidate_hash] = first_bad;
    } else if (e.payload.type == fb::Payload::Decision) {
      const auto* d = e.payload.AsDecision();
      const std::string fault = fault_of[d->candidate_hash];
      auto want = expected.find(fault);
      if (want == expected.end()) {
        EXPECT_NE(d->verdict, fb::Verdict::REJECT) << fault << ": " << d->reason;
        continue;
      }
      seen.insert(fault);
      EXPECT_EQ(d->verdict, fb::Verdict::REJECT) << fault;
      EXPECT_EQ(status_of[d->candidate_hash], want->second) << fault << ": " << d->reason;
      EXPECT_FALSE(d->reason.empty());
    }
  }
  EXPECT_GE(seen.size(), 5u) << "faults met: " << seen.size();
  auto best = problem::Candidate::from_canonical(r.summary.best_canonical);
  ASSERT_TRUE(best.ok());
  const std::string best_fault =
      best->base.knobs.count("FAULT") ? best->base.knobs.at("FAULT") : "none";
  EXPECT_TRUE(best_fault == "none" || best_fault == "print") << best_fault;
  auto v = replay::verify_run(r.run_dir);
  EXPECT_TRUE(v.ok) << v.divergence_seq << ": " << v.message;
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

TEST(Cli, BadProblemNamesFileAndFieldAndWritesNothing) {
  const fs::path src = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax";
  const fs::path dir = scratch("bad-problem");
  fs::copy(src, dir, fs::copy_options::recursive);
  {
    std::ifstream in(dir / "problem.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string from = "axes = { rows = 256, cols = 1024 }";
    text.replace(text.find(from), from.size(), "axes = { rows = 256, cols = -3 }");
    std::ofstream(dir / "problem.toml") << text;
  }
  const fs::path run_dir = scratch("bad-problem-run");
  std::string out;
  const int rc = run_cli(
      "arcd run " + (dir / "campaign.toml").string() + " --run-dir " + run_dir.string(), &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find((dir / "problem.toml").string()), std::string::npos) << out;
  EXPECT_NE(out.find("workloads[1].axes.cols"), std::string::npos) << out;
  EXPECT_NE(out.find("an integer in [1, 1099511627776]"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(run_dir));
}

}  // namespace
}  // namespace arc
