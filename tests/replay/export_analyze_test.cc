#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rocksdb/db.h>

#include "actors/view.h"
#include "replay/analyze.h"
#include "replay/export.h"
#include "replay/plot.h"
#include "replay/verifier.h"
#include "storage/journal.h"

namespace arc::replay {
namespace {

// A small, consistent log built event by event: a baseline, a KEEP with a win and a REJECT
// with a trap, a plateau and a draft.
class SmallLog {
 public:
  SmallLog() {
    fb::CampaignStartedT s;
    s.problem_name = "toy";
    s.mode = "lockstep";
    add(actors::kCampaignActor, s);
    for (const char* a : {"a1", "a2"}) {
      fb::AgentSpawnedT sp;
      sp.agent = a;
      sp.skill = "tiling";
      add(actors::kCampaignActor, sp);
    }
    propose(actors::kCampaignActor, "base", "baseline", "");
    evaluate("base", {1000, 2000}, fb::WorkloadStatus::OK);
    decide(actors::kCampaignActor, "base", fb::Verdict::KEEP, 1.0);
    propose("a1", "c1", "knob:TILE=8", "tiling");
    evaluate("c1", {500, 1000}, fb::WorkloadStatus::OK);
    decide("a1", "c1", fb::Verdict::KEEP, 2.0);
    conclude("a1", "c1", fb::ConclusionKind::WIN, "knob:TILE=8");
    propose("a2", "c2", "knob:VEC=16", "vectorize");
    evaluate("c2", {400, 0}, fb::WorkloadStatus::WRONG_RESULT);
    decide("a2", "c2", fb::Verdict::REJECT, 0);
    conclude("a2", "c2", fb::ConclusionKind::TRAP, "knob:VEC=16");
    fb::PlateauDetectedT p;
    p.agent = "a2";
    add("plateau", p);
    fb::StrategyDraftedT d;
    d.agent = "a2";
    d.from_skill = "vectorize";
    d.to_skill = "tiling";
    add("a2", d);
  }
  const std::vector<events::Event>& log() const { return log_; }

 private:
  template <class T>
  void add(const std::string& actor, T payload) {
    auto e = events::make_event(actor, std::move(payload));
    e.seq = log_.size() + 1;
    e.campaign = "c";
    e.wall_time_ns = 1000 * static_cast<int64_t>(e.seq);
    log_.push_back(std::move(e));
  }
  void propose(const std::string& agent, const std::string& hash, const std::string& move,
               const std::string& skill) {
    fb::CandidateProposedT p;
    p.agent = agent;
    p.candidate_hash = hash;
    p.move = move;
    p.skill = skill;
    p.canonical = R"({"base":{"family":"f"}})";
    add(agent, p);
  }
  void evaluate(const std::string& hash, std::vector<double> ns, fb::WorkloadStatus second) {
    fb::CandidateEvaluatedT ev;
    ev.candidate_hash = hash;
    for (size_t i = 0; i < ns.size(); ++i) {
      auto w = std::make_unique<fb::WorkloadEvaluationT>();
      w->workload = i == 0 ? "w0" : "w1,odd \"name\"";
      w->status = i == 0 ? fb::WorkloadStatus::OK : second;
      w->median_ns = ns[i];
      w->samples_ns = {ns[i], ns[i]};
      w->error = w->status == fb::WorkloadStatus::OK ? "" : "2 of 4 elements\nwithin tolerance";
      ev.workloads.push_back(std::move(w));
    }
    add("guard", ev);
    last_eval_ = log_.back().seq;
  }
  void decide(const std::string& agent, const std::string& hash, fb::Verdict v, double score) {
    fb::DecisionT d;
    d.agent = agent;
    d.candidate_hash = hash;
    d.verdict = v;
    d.score = score;
    d.evaluation_seq = last_eval_;
    add("guard", d);
  }
  void conclude(const std::string& agent, const std::string& hash, fb::ConclusionKind k,
                const std::string& move) {
    fb::ConclusionRecordedT c;
    c.agent = agent;
    c.candidate_hash = hash;
    c.kind = k;
    c.move = move;
    add("guard", c);
  }
  std::vector<events::Event> log_;
  uint64_t last_eval_ = 0;
};

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Export, EvaluationsCsvHasOneRowPerDecidedWorkloadWithQuoting) {
  SmallLog log;
  std::ostringstream out;
  export_log(log.log(), ExportTable::kEvaluations, ExportFormat::kCsv, out);
  const std::string text = out.str();
  auto rows = lines(text);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].rfind("seq,candidate,agent,skill,move,parent,workload,status,median_ns", 0),
            0u);
  // 3 decided candidates x 2 workloads; the error with a line break stays in one quoted field.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 6 + 1);
  EXPECT_NE(text.find("\"w1,odd \"\"name\"\"\""), std::string::npos);
  EXPECT_NE(text.find("c2,a2,vectorize,knob:VEC=16"), std::string::npos);
  EXPECT_NE(text.find("WRONG_RESULT"), std::string::npos);
  EXPECT_NE(text.find(",REJECT,"), std::string::npos);
}

TEST(Export, EventsJsonlCarriesColumnsAndTheWholeEvent) {
  SmallLog log;
  std::ostringstream out;
  export_log(log.log(), ExportTable::kEvents, ExportFormat::kJsonl, out);
  auto rows = lines(out.str());
  ASSERT_EQ(rows.size(), log.log().size());
  for (size_t i = 0; i < rows.size(); ++i) {
    auto j = nlohmann::json::parse(rows[i]);
    EXPECT_EQ(j["seq"], std::to_string(i + 1));
    for (const auto& c : export_columns(ExportTable::kEvents)) EXPECT_TRUE(j.contains(c)) << c;
    EXPECT_EQ(j["event"]["seq"].get<uint64_t>(), i + 1);
  }
  EXPECT_EQ(nlohmann::json::parse(rows.back())["type"], "StrategyDrafted");
}

TEST(Analyze, TalliesPerAgentAndSkillWithCurves) {
  SmallLog log;
  RunAnalysis r = analyze_run("run", log.log());
  EXPECT_EQ(r.candidates, 2u);
  EXPECT_DOUBLE_EQ(r.best_score, 2.0);
  EXPECT_EQ(r.agents["a1"].keeps, 1u);
  EXPECT_EQ(r.agents["a1"].wins, 1u);
  EXPECT_EQ(r.agents["a2"].rejects, 1u);
  EXPECT_EQ(r.agents["a2"].traps, 1u);
  EXPECT_EQ(r.agents["a2"].rejects_by_reason["WRONG_RESULT"], 1u);
  EXPECT_EQ(r.agents["a2"].plateaus, 1u);
  EXPECT_EQ(r.agents["a2"].drafts, 1u);
  EXPECT_EQ(r.skills["vectorize"].rejects, 1u);
  EXPECT_EQ(r.skills["tiling"].keeps, 1u);
  ASSERT_EQ(r.campaign_curve.size(), 2u);
  EXPECT_DOUBLE_EQ(r.campaign_curve[1].second, 2.0);
  EXPECT_DOUBLE_EQ(r.curves["a2"][1].second, 1.0);
  auto all = aggregate({r, r});
  EXPECT_EQ(all.agents["a1"].keeps, 2u);
  EXPECT_NE(to_table(all).find("WRONG_RESULT=2"), std::string::npos);
  EXPECT_EQ(to_json(all)["runs"].size(), 2u);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(Plot, OneRunDrawsALinePerAgentAndMarksKeepsAndPlateaus) {
  SmallLog log;
  RunAnalysis r = analyze_run("run", log.log());
  const std::string svg = plot_svg({r}, "toy <run>");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("toy &lt;run&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(count(svg, "<circle "), 1u);                     // one KEEP
  EXPECT_EQ(count(svg, "a2 plateau"), 1u);                   // one plateau marker
  EXPECT_NE(svg.find(">a1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">campaign best</text>"), std::string::npos);
}

TEST(Plot, ManyRunsDrawMedianAndInterquartileBand) {
  SmallLog log;
  RunAnalysis r = analyze_run("run", log.log());
  const std::string svg = plot_svg({r, r, r}, "three");
  EXPECT_NE(svg.find(">median</text>"), std::string::npos);
  EXPECT_NE(svg.find(">interquartile</text>"), std::string::npos);
  EXPECT_NE(svg.find("each run (3)"), std::string::npos);
}

TEST(VerifyDamage, AFlippedByteIsReportedAtItsSeqAndAMissingLogClearly) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("arc-damage-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  SmallLog small;
  {
    auto j = storage::Journal::open((dir / "log").string(), {});
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE(j.value()->set_campaign("c").is_ok());
    for (auto e : small.log()) ASSERT_TRUE(j.value()->append(e).ok());
    std::string value;
    const std::string key = j.value()->event_key_for_testing(9);
    ASSERT_TRUE(j.value()
                    ->raw_db_for_testing()
                    ->Get({}, j.value()->events_cf_for_testing(), key, &value)
                    .ok());
    value[value.size() / 2] ^= 0x40;
    ASSERT_TRUE(j.value()
                    ->raw_db_for_testing()
                    ->Put({}, j.value()->events_cf_for_testing(), key, value)
                    .ok());
  }
  auto r = verify_run(dir);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.divergence_seq, 9u);
  EXPECT_NE(r.message.find("seq 9"), std::string::npos) << r.message;
  auto missing = verify_run(dir / "nothing-here");
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.divergence_seq, 0u);
  EXPECT_NE(missing.message.find("no such run directory"), std::string::npos) << missing.message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace arc::replay
