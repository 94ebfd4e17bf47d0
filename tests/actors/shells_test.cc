// The actor shells under CAF's deterministic test scheduler, with a real RocksDB journal and,
// for the full campaign, the real host evaluator.
#include "actors/shells.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "actors/campaign_config.h"
#include "actors/messages.h"
#include "caf/all.hpp"
#include "eval/host_evaluator.h"
#include "problem/problem.h"
#include "replay/verifier.h"
#include "skills/skill.h"
#include "storage/journal.h"
#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

namespace fs = std::filesystem;

struct test_config : caf::actor_system_config {
  test_config() {
    add_arc_message_types(*this);
    set("scheduler.policy", caf::atom("testing"));
    set("logger.file-verbosity", caf::atom("quiet"));
  }
};

class Shells : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("arc-shells-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto j = storage::Journal::open((dir_ / "log").string(), {});
    ASSERT_TRUE(j.ok()) << j.status().to_string();
    journal_ = std::move(j.value());
    ASSERT_TRUE(journal_->set_campaign("test").is_ok());
    ctx_.journal = journal_.get();
    ctx_.problem = testing::toy_problem();
    ctx_.config.plateau_window = 2;
    ctx_.config.global_plateau = 0;
    ctx_.detached_guard = false;
    ctx_.build_cores();
  }
  void TearDown() override {
    for (auto& a : spawned_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
    journal_.reset();
    fs::remove_all(dir_);
  }
  caf::actor keep(caf::actor a) {
    spawned_.push_back(a);
    return a;
  }
  seq_list append(caf::actor journal, event_list list) {
    auto rh = self->request(journal, caf::infinite, append_atom_v, std::move(list));
    sched.run();
    seq_list out;
    rh.receive([&out](const seq_list& s) { out = s; },
               [this](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  fs::path dir_;
  std::unique_ptr<storage::Journal> journal_;
  CampaignContext ctx_;
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys, true};
  caf::scheduler::test_coordinator& sched =
      dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::vector<caf::actor> spawned_;
};

fb::ConclusionRecordedT win(const std::string& move, double speedup) {
  fb::ConclusionRecordedT c;
  c.kind = fb::ConclusionKind::WIN;
  c.kernel_type = "softmax";
  c.move = move;
  c.speedup = speedup;
  return c;
}

TEST_F(Shells, JournalPublishesDurableEventsInOrder) {
  auto journal = keep(spawn_journal(sys, &ctx_));
  auto seen = std::make_shared<std::vector<uint64_t>>();
  auto subscriber = keep(sys.spawn(
      [seen](caf::event_based_actor*, int32_t) -> caf::behavior {
        return {[seen](const published_events& p) {
          for (const auto& f : *p.frames) {
            auto e = events::decode_frame(f);
            ASSERT_TRUE(e.ok());
            seen->push_back(e->seq);
          }
        }};
      },
      int32_t{0}));
  self->send(journal, subscribe_atom_v, subscriber);
  sched.run();
  event_list list;
  list.events.push_back(events::make_event("guard", win("a", 1.2)));
  list.events.push_back(events::make_event("guard", win("b", 1.3)));
  auto seqs = append(journal, std::move(list));
  EXPECT_EQ(seqs.seqs, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(*seen, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(journal_->last_seq(), 2u);  // durable before it was published
}

TEST_F(Shells, MemoryAnswersRecallOnlyOnceItHasReachedTheSeq) {
  auto journal = keep(spawn_journal(sys, &ctx_));
  auto memory = keep(spawn_memory(sys, &ctx_, journal));
  sched.run();
  auto rh =
      self->request(memory, caf::infinite, recall_atom_v, std::string("softmax"), uint64_t{2});
  sched.run();
  EXPECT_EQ(self->mailbox().size(), 0u);  // seq 2 is not in the log yet: no answer
  event_list list;
  list.events.push_back(events::make_event("guard", win("a", 1.2)));
  list.events.push_back(events::make_event("guard", win("b", 1.5)));
  list.events.push_back(events::make_event("guard", win("c", 2.0)));
  append(journal, std::move(list));
  sched.run();
  Recall got;
  rh.receive([&got](const recall_msg& r) { got = r.recall; },
             [this](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  ASSERT_EQ(got.wins.size(), 2u);  // as of seq 2: "c" is not recalled
  EXPECT_EQ(got.wins[0].move, "b");
  EXPECT_EQ(got.wins[1].move, "a");
}

TEST_F(Shells, PlateauRecordsWhatIsDueOnce) {
  auto journal = keep(spawn_journal(sys, &ctx_));
  auto plateau = keep(spawn_plateau(sys, &ctx_, journal));
  sched.run();
  event_list list;
  for (int i = 0; i < 2; ++i) {
    fb::DecisionT d;
    d.agent = "a1";
    d.verdict = fb::Verdict::REVERT;
    list.events.push_back(events::make_event("guard", d));
  }
  auto seqs = append(journal, std::move(list));
  auto check = [&](uint64_t upto) {
    auto rh = self->request(plateau, caf::infinite, check_atom_v, upto);
    sched.run();
    uint64_t last = 0;
    rh.receive([&last](uint64_t s) { last = s; },
               [this](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return last;
  };
  EXPECT_EQ(check(seqs.seqs.back()), 3u);  // PlateauDetected appended as seq 3
  EXPECT_EQ(check(3), 3u);                 // nothing new is due
  auto all = journal_->read_all();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(all->back().payload.type, fb::Payload::PlateauDetected);
  EXPECT_EQ(all->back().payload.AsPlateauDetected()->agent, "a1");
}

TEST_F(Shells, WholeCampaignRunsAndVerifiesUnderTheDeterministicScheduler) {
  const fs::path campaign =
      fs::path(ARC_SOURCE_DIR) / "problems" / "host" / "softmax" / "campaign.toml";
  auto config = load_campaign(campaign);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  ctx_.config = config.value();
  ctx_.config.budget = 6;
  ctx_.config.mode = Mode::kLockstep;
  ctx_.config.overrides["budget"] = "6";
  ctx_.config.overrides["mode"] = "lockstep";
  auto problem = problem::load_problem(ctx_.config.problem);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  ctx_.problem = problem.value();
  auto skills = skills::load_skills(ctx_.config.skills);
  ASSERT_TRUE(skills.ok()) << skills.status().to_string();
  ctx_.skills = skills.value();
  eval::HostEvaluator evaluator(ctx_.problem);
  ctx_.evaluator = &evaluator;
  ctx_.device = evaluator.device();
  ctx_.build_cores();

  auto journal = keep(spawn_journal(sys, &ctx_));
  auto memory = keep(spawn_memory(sys, &ctx_, journal));
  auto plateau = keep(spawn_plateau(sys, &ctx_, journal));
  auto guard = keep(spawn_guard(sys, &ctx_, journal, plateau));
  std::vector<caf::actor> agents;
  for (uint32_t i = 0; i < ctx_.config.agents.size(); ++i) {
    agents.push_back(keep(spawn_agent(sys, &ctx_, i, journal, memory, guard)));
  }
  auto campaign_actor = keep(spawn_campaign(sys, &ctx_, journal, guard, plateau, agents));
  sched.run();
  auto rh = self->request(campaign_actor, caf::infinite, start_atom_v);
  sched.run();
  std::string reason;
  rh.receive([&reason](const std::string& r) { reason = r; },
             [this](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_NE(reason.find("budget of 6"), std::string::npos) << reason;
  auto log = journal_->read_all();
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->back().payload.type, fb::Payload::CampaignStopped);
  auto report = replay::verify_events(log.value());
  EXPECT_TRUE(report.ok) << report.divergence_seq << ": " << report.message;
  EXPECT_EQ(report.proposals, 6u);
  EXPECT_EQ(report.decisions, 7u);
}

}  // namespace
}  // namespace arc::actors
