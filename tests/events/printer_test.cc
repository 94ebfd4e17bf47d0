#include "events/printer.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/events/sample_events.h"

namespace arc::events {
namespace {

using nlohmann::json;
using testing::all_payload_types;
using testing::sample_event;

// Field names of every table in events.fbs, read from the schema itself so that a field added
// there without a printer update fails this test.
std::map<std::string, std::set<std::string>> schema_fields() {
  std::ifstream in(std::string(ARC_SOURCE_DIR) + "/events/events.fbs");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // Drop comments.
  text = std::regex_replace(text, std::regex("//[^\n]*"), "");
  std::map<std::string, std::set<std::string>> out;
  const std::regex table_re(R"(table\s+(\w+)\s*\{([^}]*)\})");
  const std::regex field_re(R"((\w+)\s*:)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), table_re);
       it != std::sregex_iterator(); ++it) {
    const std::string body = (*it)[2];
    auto& fields = out[(*it)[1]];
    for (auto f = std::sregex_iterator(body.begin(), body.end(), field_re);
         f != std::sregex_iterator(); ++f) {
      fields.insert((*f)[1]);
    }
  }
  return out;
}

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
  return k;
}

Event stamped(fb::Payload type) {
  Event e = sample_event(type);
  e.seq = 42;
  e.campaign = "c0ffee";
  e.wall_time_ns = 123456789;
  return e;
}

TEST(PrinterTest, SchemaParsed) {
  const auto fields = schema_fields();
  ASSERT_TRUE(fields.count("Envelope"));
  EXPECT_TRUE(fields.at("Decision").count("evaluation_seq"));
  EXPECT_TRUE(fields.at("WorkloadEvaluation").count("samples_ns"));
}

TEST(PrinterTest, JsonHasEveryFieldOfEveryPayload) {
  const auto fields = schema_fields();
  for (auto t : all_payload_types()) {
    const std::string name = payload_name(t);
    const json j = to_json(stamped(t));
    std::set<std::string> envelope = fields.at("Envelope");
    envelope.insert("type");
    EXPECT_EQ(keys_of(j), envelope) << name;
    EXPECT_EQ(j.at("type"), name);
    EXPECT_EQ(j.at("seq"), 42);
    EXPECT_EQ(j.at("campaign"), "c0ffee");
    EXPECT_EQ(j.at("wall_time_ns"), 123456789);
    ASSERT_TRUE(fields.count(name)) << name;
    EXPECT_EQ(keys_of(j.at("payload")), fields.at(name)) << name;
  }
  // Nested tables too.
  const json started = to_json(stamped(fb::Payload::CampaignStarted)).at("payload");
  EXPECT_EQ(keys_of(started.at("software").at(0)), fields.at("KeyValue"));
  const json compiled = to_json(stamped(fb::Payload::CompileFinished)).at("payload");
  EXPECT_EQ(keys_of(compiled.at("variants").at(0)), fields.at("CompiledVariant"));
  const json evaluated = to_json(stamped(fb::Payload::CandidateEvaluated)).at("payload");
  EXPECT_EQ(keys_of(evaluated.at("workloads").at(0)), fields.at("WorkloadEvaluation"));
  EXPECT_EQ(keys_of(evaluated.at("clocks").at(0)), fields.at("KeyValue"));
}

TEST(PrinterTest, JsonValuesEnumsAsNamesAndFullHashes) {
  const json d = to_json(stamped(fb::Payload::Decision)).at("payload");
  EXPECT_EQ(d.at("verdict"), "REVERT");
  EXPECT_EQ(d.at("candidate_hash"), std::string(64, '2'));
  EXPECT_EQ(d.at("speedups"), json::array({1.2, 1.3}));
  EXPECT_EQ(d.at("evaluation_seq"), 17);
  const json w = to_json(stamped(fb::Payload::CandidateEvaluated)).at("payload").at("workloads")[0];
  EXPECT_EQ(w.at("status"), "WRONG_RESULT");
  EXPECT_EQ(w.at("samples_ns"), json::array({1000.0, 1010.0, 990.5}));
  EXPECT_EQ(w.at("rounds"), 5);
  const json c = to_json(stamped(fb::Payload::ConclusionRecorded)).at("payload");
  EXPECT_EQ(c.at("kind"), "TRAP");
  const json p = to_json(stamped(fb::Payload::PlateauDetected)).at("payload");
  EXPECT_EQ(p.at("scope"), "CAMPAIGN");
  const json s = to_json(stamped(fb::Payload::CampaignStarted)).at("payload");
  EXPECT_EQ(s.at("software").at(0).at("key"), "nvrtc");
  EXPECT_EQ(s.at("seed"), 43);
  EXPECT_EQ(s.at("config_text"), "[campaign]\nbudget = 64\n");
}

TEST(PrinterTest, JsonKeepsNonFiniteNumbersVisible) {
  Event e = stamped(fb::Payload::Decision);
  e.payload.AsDecision()->score = std::numeric_limits<double>::quiet_NaN();
  e.payload.AsDecision()->margin = std::numeric_limits<double>::infinity();
  const json d = to_json(e).at("payload");
  EXPECT_EQ(d.at("score"), "nan");
  EXPECT_EQ(d.at("margin"), "inf");
}

TEST(PrinterTest, TextLineHeadAndFields) {
  const std::string line = to_text(stamped(fb::Payload::CandidateProposed));
  EXPECT_EQ(line.rfind("#42 agent-1 CandidateProposed cand=3fa2c1e9b0d4 ", 0), 0u) << line;
  EXPECT_NE(line.find("move=knob:TILE=64"), std::string::npos) << line;
  EXPECT_NE(line.find("view_seq=41"), std::string::npos) << line;
  EXPECT_NE(line.find("parent=" + std::string(12, 'c') + " "), std::string::npos) << line;
  EXPECT_EQ(line.find(std::string(13, 'c')), std::string::npos) << "hash not shortened";
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(PrinterTest, TextOfEveryPayloadType) {
  // One distinctive field per type must show.
  const std::map<fb::Payload, std::vector<std::string>> expect = {
      {fb::Payload::CampaignStarted,
       {"problem=gemm_bf16", "seed=43", "mode=lockstep", "config=aaaaaaaaaaaa "}},
      {fb::Payload::AgentSpawned, {"agent=agent-1", "backend=builtin", "skill=tiling"}},
      {fb::Payload::CandidateProposed, {"cand=3fa2c1e9b0d4", "move=knob:TILE=64"}},
      {fb::Payload::CompileFinished, {"cand=dddddddddddd", "ok=true", "variants=1/1"}},
      {fb::Payload::CandidateEvaluated,
       {"cand=111111111111", "evaluator=cuda", "w.m4096=WRONG_RESULT"}},
      {fb::Payload::Decision,
       {"verdict=REVERT", "score=1.25", "incumbent=1.5", "slower_workload=large",
        "reason=\"slower than incumbent\""}},
      {fb::Payload::ConclusionRecorded,
       {"kind=TRAP", "move=knob:STAGES=5", "why=\"out of shared memory\""}},
      {fb::Payload::PlateauDetected, {"scope=CAMPAIGN", "window=8", "candidates=24"}},
      {fb::Payload::StrategyDrafted, {"from=tiling", "to=pipeline"}},
      {fb::Payload::SiblingInspected, {"sibling=agent-9", "adopted=true", "score=2.5"}},
      {fb::Payload::AgentExchange,
       {"backend=llm", "model=some-model", "tokens_in=1200", "prompt=555555555555 "}},
      {fb::Payload::CampaignStopped, {"reason=budget", "best=777777777777 ", "best_score=3.25"}},
      {fb::Payload::PeaksMeasured, {"device=\"NVIDIA H200\"", "bandwidth_bytes_per_s=4.27e+12"}},
      {fb::Payload::PairMeasured,
       {"incumbent=888888888888 ", "pair=3", "order=candidate-first", "w.m4096=OK:1000ns/OK:1040ns",
        "worker=127.0.0.1:7101"}},
      {fb::Payload::WorkerChanged,
       {"worker=10.0.0.7:7100", "state=lost", "live=2", "requeued=333333333333"}},
  };
  ASSERT_EQ(expect.size(), all_payload_types().size());
  for (auto t : all_payload_types()) {
    const Event e = stamped(t);
    const std::string line = to_text(e);
    const std::string head = "#42 " + e.actor + " " + payload_name(t);
    EXPECT_EQ(line.rfind(head, 0), 0u) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    for (const auto& frag : expect.at(t)) {
      EXPECT_NE(line.find(frag), std::string::npos) << "'" << frag << "' not in: " << line;
    }
  }
}

// A workload timed while the GPU throttled is flagged with its reasons (base/throttle.h); one
// that did not, or whose throttling is unknown, is not.
TEST(PrinterTest, TextFlagsWorkloadsTimedWhileThrottled) {
  Event e = stamped(fb::Payload::CandidateEvaluated);
  auto& x = *e.payload.AsCandidateEvaluated();
  auto add = [&x](const std::string& name, const std::string& throttled) {
    auto w = std::make_unique<fb::WorkloadEvaluationT>();
    w->workload = name;
    w->median_ns = 1000;
    w->details.push_back(testing::kv("after.sm_mhz", "1410"));
    w->details.push_back(testing::kv("throttled", throttled));
    x.workloads.push_back(std::move(w));
  };
  add("hot", "yes: sw_power_cap, hw_thermal_slowdown");
  add("cool", "no");
  add("host", "unknown: the host backend has no NVML");
  const std::string line = to_text(e);
  EXPECT_NE(line.find(R"(throttled.hot="sw_power_cap, hw_thermal_slowdown")"), std::string::npos)
      << line;
  EXPECT_NE(line.find("w.hot=OK:1000ns"), std::string::npos) << line;
  EXPECT_EQ(line.find("throttled.cool"), std::string::npos) << line;
  EXPECT_EQ(line.find("throttled.host"), std::string::npos) << line;
  EXPECT_EQ(line.find("throttled.m4096"), std::string::npos) << line;
  // The JSON form keeps every reading as recorded.
  const json w = to_json(e).at("payload").at("workloads")[1];
  EXPECT_EQ(w.at("details")[1].at("value"), "yes: sw_power_cap, hw_thermal_slowdown");
}

TEST(PrinterTest, TextQuotesAwkwardValues) {
  Event e = stamped(fb::Payload::StrategyDrafted);
  e.payload.AsStrategyDrafted()->reason = "two\nlines \"quoted\"";
  const std::string line = to_text(e);
  EXPECT_NE(line.find(R"(reason="two\nlines \"quoted\"")"), std::string::npos) << line;
}

}  // namespace
}  // namespace arc::events

namespace arc::events {
namespace {

// Found by fuzzing: error texts from compilers and candidates may hold bytes that are not
// UTF-8; printing them as JSON must not throw.
TEST(DumpJson, InvalidUtf8IsReplacedNotThrown) {
  fb::DecisionT d;
  d.reason = std::string("bad \xfb\x31 byte");
  Event e = make_event("guard", d);
  const std::string text = dump_json(to_json(e));
  EXPECT_NE(text.find("bad \xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

}  // namespace
}  // namespace arc::events
