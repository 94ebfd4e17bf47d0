// Workload measurements taken while the GPU throttled (their "throttled" detail says yes,
// base/throttle.h) are flagged in the summary, in `arc-replay show`'s table and JSON, and in
// report.md; a run that never throttled says so, and one that cannot know says why. Logs are
// built event by event: no GPU needed.
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actors/view.h"
#include "replay/summary.h"

namespace arc::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The shipped host softmax problem names the workloads: r64_c4096, r256_c1024, r1024_c256,
// r2048_c128.
const std::vector<std::string> kWorkloads = {"r64_c4096", "r256_c1024", "r1024_c256", "r2048_c128"};

class Log {
 public:
  Log() {
    fb::CampaignStartedT s;
    s.problem_name = "softmax";
    s.problem_dir = std::string(ARC_SOURCE_DIR) + "/problems/host/softmax";
    s.mode = "lockstep";
    add(actors::kCampaignActor, s);
    fb::AgentSpawnedT a;
    a.agent = "a1";
    a.skill = "tiling";
    add(actors::kCampaignActor, a);
  }
  // A candidate proposed, evaluated with these "throttled" verdicts (workload -> verdict; none
  // for a workload left out), and decided. Returns the CandidateEvaluated's seq.
  uint64_t candidate(const std::string& agent, const std::string& hash, fb::Verdict verdict,
                     double score, const std::map<std::string, std::string>& throttled) {
    fb::CandidateProposedT p;
    p.agent = agent;
    p.candidate_hash = hash;
    p.move = agent == actors::kCampaignActor ? actors::kBaselineMove : "knob:VEC=4";
    p.canonical = R"({"base":{"family":"naive"}})";
    add(agent, p);
    fb::CandidateEvaluatedT ev;
    ev.candidate_hash = hash;
    for (const auto& name : kWorkloads) {
      auto w = std::make_unique<fb::WorkloadEvaluationT>();
      w->workload = name;
      w->status = fb::WorkloadStatus::OK;
      w->median_ns = 1000 / score;
      if (auto it = throttled.find(name); it != throttled.end()) {
        auto kv = std::make_unique<fb::KeyValueT>();
        kv->key = "throttled";
        kv->value = it->second;
        w->details.push_back(std::move(kv));
      }
      ev.workloads.push_back(std::move(w));
    }
    add("guard", ev);
    const uint64_t seq = log_.back().seq;
    fb::DecisionT d;
    d.agent = agent;
    d.candidate_hash = hash;
    d.verdict = verdict;
    d.score = score;
    d.evaluation_seq = seq;
    add("guard", d);
    return seq;
  }
  const std::vector<events::Event>& events() const { return log_; }

 private:
  template <class T>
  void add(const std::string& actor, T payload) {
    auto e = events::make_event(actor, std::move(payload));
    e.seq = log_.size() + 1;
    e.campaign = "c";
    e.wall_time_ns = 1000 * static_cast<int64_t>(e.seq);
    log_.push_back(std::move(e));
  }
  std::vector<events::Event> log_;
};

std::map<std::string, std::string> all(const std::string& verdict) {
  std::map<std::string, std::string> m;
  for (const auto& w : kWorkloads) m[w] = verdict;
  return m;
}

TEST(ThrottleReport, ThrottledMeasurementsAreListedAndTheHeadlineTimesMarked) {
  Log log;
  auto base = all("no");
  base["r64_c4096"] = "yes: sw_power_cap";
  const uint64_t base_seq =
      log.candidate(actors::kCampaignActor, "base", fb::Verdict::KEEP, 1.0, base);
  auto best = all("no");
  best["r256_c1024"] = "yes: hw_thermal_slowdown, power_violation";
  const uint64_t best_seq = log.candidate("a1", "c1", fb::Verdict::KEEP, 2.0, best);
  auto other = all("no");
  other["r2048_c128"] = "yes: sw_thermal_slowdown";
  other["r1024_c256"] = "unknown: no NVML readings";
  const uint64_t other_seq = log.candidate("a1", "c2", fb::Verdict::REVERT, 1.5, other);

  const CampaignSummary s = summarize(log.events());
  ASSERT_EQ(s.best_hash, "c1");
  EXPECT_EQ(s.throttle.verdicts, 12u);
  EXPECT_EQ(s.throttle.unknown, 1u);
  EXPECT_EQ(s.throttle.unknown_why, "no NVML readings");
  ASSERT_EQ(s.throttle.throttled.size(), 3u);
  const auto& t = s.throttle.throttled;
  EXPECT_EQ(t[0].seq, base_seq);
  EXPECT_EQ(t[0].candidate_hash, "base");
  EXPECT_EQ(t[0].agent, actors::kCampaignActor);
  EXPECT_EQ(t[0].workload, "r64_c4096");
  EXPECT_EQ(t[0].reasons, "sw_power_cap");
  EXPECT_EQ(t[1].seq, best_seq);
  EXPECT_EQ(t[1].agent, "a1");
  EXPECT_EQ(t[1].workload, "r256_c1024");
  EXPECT_EQ(t[1].reasons, "hw_thermal_slowdown, power_violation");
  EXPECT_EQ(t[2].seq, other_seq);
  EXPECT_EQ(t[2].workload, "r2048_c128");

  ASSERT_EQ(s.workloads.size(), 4u);
  EXPECT_EQ(s.workloads[0].baseline_throttled, "sw_power_cap");
  EXPECT_EQ(s.workloads[0].best_throttled, "");
  EXPECT_EQ(s.workloads[1].baseline_throttled, "");
  EXPECT_EQ(s.workloads[1].best_throttled, "hw_thermal_slowdown, power_violation");
  // c2 was not the best: its throttled workload marks no headline time.
  EXPECT_EQ(s.workloads[3].best_throttled, "");

  const std::string md = report_markdown(s);
  EXPECT_THAT(md, HasSubstr("## Throttling"));
  EXPECT_THAT(md, HasSubstr("**3 of 12 workload measurements were taken while the GPU "
                            "throttled**"));
  EXPECT_THAT(md, HasSubstr("| " + std::to_string(best_seq) +
                            " | `c1` | a1 | r256_c1024 | hw_thermal_slowdown, power_violation |"));
  EXPECT_THAT(md, HasSubstr("| " + std::to_string(other_seq) +
                            " | `c2` | a1 | r2048_c128 | sw_thermal_slowdown |"));
  EXPECT_THAT(md, HasSubstr("| r64_c4096 | 1.0 us (throttled) | 500.0 ns |"));
  EXPECT_THAT(md, HasSubstr("| r256_c1024 | 1.0 us | 500.0 ns (throttled) |"));
  EXPECT_THAT(md, HasSubstr("| r2048_c128 | 1.0 us | 500.0 ns |"));
  EXPECT_THAT(md, HasSubstr("Whether the device throttled is unknown for 1 of 12 workload "
                            "measurements: no NVML readings."));

  const std::string table = to_table(s);
  EXPECT_THAT(table, HasSubstr("throttled 3 of 12 workload measurements were taken while the "
                               "GPU throttled:"));
  EXPECT_THAT(table, HasSubstr("  #" + std::to_string(best_seq) +
                               " c1 a1 r256_c1024: hw_thermal_slowdown, power_violation\n"));
  EXPECT_THAT(table, HasSubstr("baseline throttled: sw_power_cap"));
  EXPECT_THAT(table, HasSubstr("best throttled: hw_thermal_slowdown, power_violation"));

  const nlohmann::json j = to_json(s);
  EXPECT_EQ(j.at("throttle").at("verdicts"), 12);
  ASSERT_EQ(j.at("throttle").at("throttled").size(), 3u);
  EXPECT_EQ(j.at("throttle").at("throttled")[1].at("workload"), "r256_c1024");
  EXPECT_EQ(j.at("workloads")[1].at("best_throttled"), "hw_thermal_slowdown, power_violation");
}

TEST(ThrottleReport, ARunThatNeverThrottledSaysSo) {
  Log log;
  log.candidate(actors::kCampaignActor, "base", fb::Verdict::KEEP, 1.0, all("no"));
  log.candidate("a1", "c1", fb::Verdict::KEEP, 2.0, all("no"));
  const CampaignSummary s = summarize(log.events());
  EXPECT_TRUE(s.throttle.throttled.empty());
  const std::string md = report_markdown(s);
  EXPECT_THAT(md, HasSubstr("No workload measurement was taken while the GPU throttled (8 with "
                            "NVML readings before and after the timed runs)."));
  EXPECT_THAT(md, Not(HasSubstr("(throttled)")));
  EXPECT_THAT(md, Not(HasSubstr("unknown")));
  EXPECT_THAT(to_table(s), Not(HasSubstr("throttled")));
}

TEST(ThrottleReport, AHostRunSaysThrottlingIsUnknownAndWhy) {
  Log log;
  const auto host = all("unknown: the host backend has no NVML");
  log.candidate(actors::kCampaignActor, "base", fb::Verdict::KEEP, 1.0, host);
  log.candidate("a1", "c1", fb::Verdict::KEEP, 2.0, host);
  const std::string md = report_markdown(summarize(log.events()));
  EXPECT_THAT(md, HasSubstr("## Throttling\n\nWhether the device throttled is unknown for 8 of 8 "
                            "workload measurements: the host backend has no NVML.\n"));
  EXPECT_THAT(md, Not(HasSubstr("No workload measurement")));
}

TEST(ThrottleReport, ALogWithoutVerdictsHasNoThrottlingSection) {
  Log log;
  log.candidate(actors::kCampaignActor, "base", fb::Verdict::KEEP, 1.0, {});
  const CampaignSummary s = summarize(log.events());
  EXPECT_EQ(s.throttle.verdicts, 0u);
  EXPECT_THAT(report_markdown(s), Not(HasSubstr("Throttling")));
}

}  // namespace
}  // namespace arc::replay
