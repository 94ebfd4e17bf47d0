#include "actors/campaign_core.h"

#include <gtest/gtest.h>

#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using testing::LogBuilder;

Proposal proposal_of(const std::string& agent, const std::string& hash) {
  Proposal p;
  p.proposed.emplace();
  p.proposed->agent = agent;
  p.proposed->candidate_hash = hash;
  return p;
}

fb::DecisionT decision(const std::string& agent, const std::string& hash, fb::Verdict v,
                       double score) {
  fb::DecisionT d;
  d.agent = agent;
  d.candidate_hash = hash;
  d.verdict = v;
  d.score = score;
  return d;
}

TEST(CampaignCore, StopsWhenTheBudgetIsSpent) {
  CampaignCore c(2, 0, {"a", "b"}, {"w"});
  LogBuilder log;
  EXPECT_EQ(c.remaining(), 2u);
  for (const char* h : {"h1", "h2"}) {
    fb::CandidateProposedT p;
    p.agent = "a";
    p.candidate_hash = h;
    p.canonical = R"({"base":{"family":"f"}})";
    c.apply(log.add("a", p));
    EXPECT_FALSE(c.stop_reason().has_value());
    c.apply(log.add("guard", decision("a", h, fb::Verdict::REVERT, 0.9)));
  }
  ASSERT_TRUE(c.stop_reason().has_value());
  EXPECT_NE(c.stop_reason()->find("budget of 2"), std::string::npos);
  EXPECT_EQ(c.remaining(), 0u);
  auto s = c.stopped(*c.stop_reason());
  EXPECT_EQ(s.candidates, 2u);
}

TEST(CampaignCore, StopsOnACampaignPlateau) {
  CampaignCore c(100, 5, {"a"}, {"w"});
  LogBuilder log;
  fb::PlateauDetectedT p;
  p.scope = fb::PlateauScope::AGENT;
  p.agent = "a";
  c.apply(log.add("plateau", p));
  EXPECT_FALSE(c.stop_reason().has_value());
  p.scope = fb::PlateauScope::CAMPAIGN;
  c.apply(log.add("plateau", p));
  ASSERT_TRUE(c.stop_reason().has_value());
  EXPECT_NE(c.stop_reason()->find("plateau"), std::string::npos);
}

TEST(CampaignCore, RoundSelectionKeepsAgentOrderDropsDuplicatesAndRespectsBudget) {
  CampaignCore c(3, 0, {"a", "b", "c", "d", "e"}, {"w"});
  std::vector<std::optional<Proposal>> replies = {
      proposal_of("a", "x"), Proposal{}, proposal_of("c", "x"), proposal_of("d", "y"),
      proposal_of("e", "z"),
  };
  replies[1]->idle_reason = "nothing new";
  // b has nothing, c duplicates a, and the budget leaves room for three.
  EXPECT_EQ(c.select_round(replies), (std::vector<size_t>{0, 3, 4}));
  CampaignCore small(1, 0, {"a", "b"}, {"w"});
  EXPECT_EQ(small.select_round(replies), (std::vector<size_t>{0}));
}

TEST(CampaignCore, AllIdleOnlyWhenEveryAgentLookedAfterTheLastDecision) {
  CampaignCore c(100, 0, {"a", "b"}, {"w"});
  LogBuilder log;
  c.apply(log.add("guard", decision("a", "h", fb::Verdict::REVERT, 1.0)));  // seq 1
  c.mark_idle("a", 1);
  EXPECT_FALSE(c.all_idle());
  c.mark_idle("b", 0);  // looked before the last decision: may find something now
  EXPECT_FALSE(c.all_idle());
  c.mark_idle("b", 1);
  EXPECT_TRUE(c.all_idle());
  fb::CandidateProposedT p;
  p.agent = "a";
  p.candidate_hash = "h2";
  c.apply(log.add("a", p));  // a found something after all
  EXPECT_FALSE(c.all_idle());
}

TEST(JournalCore, RefusesAProposalAlreadyLogged) {
  JournalCore j;
  LogBuilder log;
  fb::CandidateProposedT p;
  p.agent = "a";
  p.candidate_hash = "abc";
  std::vector<events::Event> batch = {events::make_event("a", p)};
  EXPECT_EQ(j.refuse(batch), "");
  j.apply(log.add("a", p));
  EXPECT_NE(j.refuse(batch).find("already proposed candidate abc at seq 1"), std::string::npos);
  // Another agent may propose the same candidate (the guard decides it from the first
  // evaluation).
  p.agent = "b";
  EXPECT_EQ(j.refuse({events::make_event("b", p)}), "");
  EXPECT_NE(j.refuse({events::make_event("b", p), events::make_event("b", p)}).find("twice"),
            std::string::npos);
  EXPECT_NE(j.refuse({events::Event{}}), "");
}

}  // namespace
}  // namespace arc::actors
