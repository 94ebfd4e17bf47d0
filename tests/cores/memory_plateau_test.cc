#include <gtest/gtest.h>

#include "actors/memory_core.h"
#include "actors/plateau_core.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

fb::ConclusionRecordedT conclusion(fb::ConclusionKind kind, const std::string& move, double speedup,
                                   const std::string& type = "softmax") {
  fb::ConclusionRecordedT c;
  c.kind = kind;
  c.kernel_type = type;
  c.move = move;
  c.speedup = speedup;
  return c;
}

TEST(MemoryCore, KeepsTopWinsBySpeedupAndLastTraps) {
  MemoryCore m(MemoryBounds{2, 2});
  testing::LogBuilder log;
  for (auto [move, s] : std::vector<std::pair<std::string, double>>{
           {"w1", 1.1}, {"w2", 1.5}, {"w3", 1.2}, {"w4", 1.3}}) {
    m.apply(log.add("guard", conclusion(fb::ConclusionKind::WIN, move, s)));
  }
  for (const char* t : {"t1", "t2", "t3"}) {
    m.apply(log.add("guard", conclusion(fb::ConclusionKind::TRAP, t, 0)));
  }
  m.apply(log.add("guard", conclusion(fb::ConclusionKind::WIN, "other", 9.0, "gemm")));
  Recall r = m.recall("softmax");
  ASSERT_EQ(r.wins.size(), 2u);
  EXPECT_EQ(r.wins[0].move, "w2");
  EXPECT_EQ(r.wins[1].move, "w4");
  ASSERT_EQ(r.traps.size(), 2u);
  EXPECT_EQ(r.traps[0].move, "t3");
  EXPECT_EQ(r.traps[1].move, "t2");
}

TEST(MemoryCore, RecallsAsOfAnEarlierSeq) {
  MemoryCore m(MemoryBounds{16, 16});
  testing::LogBuilder log;
  m.apply(log.add("guard", conclusion(fb::ConclusionKind::WIN, "w1", 1.1)));
  const uint64_t cut = log.last_seq();
  m.apply(log.add("guard", conclusion(fb::ConclusionKind::WIN, "w2", 2.0)));
  m.apply(log.add("guard", conclusion(fb::ConclusionKind::TRAP, "t1", 0)));
  Recall then = m.recall("softmax", cut);
  ASSERT_EQ(then.wins.size(), 1u);
  EXPECT_EQ(then.wins[0].move, "w1");
  EXPECT_TRUE(then.traps.empty());
  EXPECT_EQ(m.recall("softmax").wins.size(), 2u);
}

TEST(MemoryCore, UnboundedKeepsEverything) {
  MemoryCore m(MemoryBounds{0, 0});
  testing::LogBuilder log;
  for (int i = 0; i < 40; ++i) {
    m.apply(log.add("guard", conclusion(fb::ConclusionKind::WIN, "w" + std::to_string(i), i)));
    m.apply(log.add("guard", conclusion(fb::ConclusionKind::TRAP, "t" + std::to_string(i), 0)));
  }
  Recall r = m.recall("softmax");
  EXPECT_EQ(r.wins.size(), 40u);
  EXPECT_EQ(r.traps.size(), 40u);
  EXPECT_EQ(r.wins.front().move, "w39");
}

fb::DecisionT decision(const std::string& agent, fb::Verdict v) {
  fb::DecisionT d;
  d.agent = agent;
  d.verdict = v;
  return d;
}

TEST(PlateauCore, FiresForAnAgentAfterWindowWithoutKeep) {
  PlateauCore p(PlateauConfig{3, 0});
  testing::LogBuilder log;
  p.apply(log.add("guard", decision("a", fb::Verdict::KEEP)));
  for (int i = 0; i < 2; ++i) {
    p.apply(log.add("guard", decision("a", fb::Verdict::REVERT)));
    EXPECT_TRUE(p.due().empty());
  }
  p.apply(log.add("guard", decision("a", fb::Verdict::REJECT)));
  auto due = p.due();
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].agent, "a");
  EXPECT_EQ(due[0].scope, fb::PlateauScope::AGENT);
  // Once recorded it does not fire again until the agent drafts.
  p.apply(log.add("plateau", due[0]));
  p.apply(log.add("guard", decision("a", fb::Verdict::REVERT)));
  EXPECT_TRUE(p.due().empty());
  fb::StrategyDraftedT d;
  d.agent = "a";
  p.apply(log.add("a", d));
  for (int i = 0; i < 3; ++i) p.apply(log.add("guard", decision("a", fb::Verdict::REVERT)));
  EXPECT_EQ(p.due().size(), 1u);
}

TEST(PlateauCore, OtherAgentsDoNotResetAnAgentsWindow) {
  PlateauCore p(PlateauConfig{2, 0});
  testing::LogBuilder log;
  p.apply(log.add("guard", decision("a", fb::Verdict::REVERT)));
  p.apply(log.add("guard", decision("b", fb::Verdict::KEEP)));
  p.apply(log.add("guard", decision("a", fb::Verdict::REVERT)));
  auto due = p.due();
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].agent, "a");
}

TEST(PlateauCore, CampaignPlateauAfterGlobalWindow) {
  PlateauCore p(PlateauConfig{100, 4});
  testing::LogBuilder log;
  for (int i = 0; i < 3; ++i)
    p.apply(log.add("guard", decision(i % 2 ? "a" : "b", fb::Verdict::REVERT)));
  EXPECT_TRUE(p.due().empty());
  p.apply(log.add("guard", decision("b", fb::Verdict::REVERT)));
  auto due = p.due();
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].scope, fb::PlateauScope::CAMPAIGN);
  p.apply(log.add("plateau", due[0]));
  EXPECT_TRUE(p.campaign_plateaued());
  EXPECT_TRUE(p.due().empty());
}

}  // namespace
}  // namespace arc::actors
