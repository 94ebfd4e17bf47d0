// The run directory's lifecycle at its edges: a second arcd on a run in use, a run killed after
// its campaign stopped but before its outputs were written, and a run killed before
// CampaignStarted was logged. Real arcd processes on real logs.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/campaign_config.h"
#include "actors/run_directory.h"
#include "replay/summary.h"
#include "storage/journal.h"
#include "storage/run_lock.h"
#include "tests/e2e/arcd_process.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using testing::kArcd;
using testing::kArcReplay;
using testing::run_process;

const fs::path kCampaign = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";
const fs::path kMeasurements = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax";

fs::path scratch(const std::string& name) { return testing::scratch_path("run-dir", name); }

std::vector<std::string> with_replay(std::vector<std::string> args) {
  args.insert(args.end(),
              {"--quiet", "--evaluator", "replay", "--replay-from", kMeasurements.string()});
  return args;
}

std::vector<std::string> run_args(const fs::path& run_dir) {
  return with_replay(
      {kArcd.string(), "run", kCampaign.string(), "--run-dir", run_dir.string(), "--budget", "12"});
}

std::vector<std::string> resume_args(const fs::path& run_dir) {
  return with_replay({kArcd.string(), "resume", run_dir.string()});
}

std::vector<events::Event> log_of(const fs::path& run_dir) {
  auto log = replay::read_run(run_dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? log.value() : std::vector<events::Event>{};
}

void expect_verifies(const fs::path& run_dir) {
  auto v = run_process({kArcReplay.string(), "verify", run_dir.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

void expect_whole_run(const fs::path& run_dir) {
  const auto log = log_of(run_dir);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.front().payload.type, fb::Payload::CampaignStarted);
  EXPECT_EQ(log.back().payload.type, fb::Payload::CampaignStopped);
  EXPECT_TRUE(fs::exists(run_dir / "summary.json"));
  EXPECT_TRUE(fs::exists(run_dir / "report.md"));
  EXPECT_TRUE(fs::exists(run_dir / "best" / "candidate.json"));
  EXPECT_FALSE(fs::exists(run_dir / storage::RunLock::kFileName)) << "the lock outlived arcd";
  expect_verifies(run_dir);
}

TEST(RunDirectory, SecondArcdOnARunInUseIsToldWhichProcessHoldsIt) {
  const fs::path dir = scratch("held");
  fs::create_directories(dir);
  // This test process holds the run as a live arcd would.
  auto lock = storage::RunLock::acquire(dir);
  ASSERT_TRUE(lock.ok()) << lock.status().to_string();
  const std::string holder = "another arcd (pid " + std::to_string(::getpid()) + ") holds this run";
  auto r = run_process(run_args(dir));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find(holder), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("LOCK"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "log")) << "the refused run wrote its log";

  lock.value().reset();
  ASSERT_EQ(run_process(run_args(dir)).code, 0);
  lock = storage::RunLock::acquire(dir);
  ASSERT_TRUE(lock.ok());
  r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find(holder), std::string::npos) << r.err;
}

TEST(RunDirectory, LockLeftByADeadArcdDoesNotBlock) {
  const fs::path dir = scratch("stale");
  fs::create_directories(dir);
  // A lock file naming a process that is gone, as a SIGKILLed arcd leaves it.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  std::ofstream(dir / storage::RunLock::kFileName) << dead << "\n";
  auto r = run_process(run_args(dir));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_whole_run(dir);
}

TEST(RunDirectory, ResumeOfAStoppedRunWritesOnlyTheMissingOutputsAndKeepsTheLog) {
  const fs::path dir = scratch("stopped");
  ASSERT_EQ(run_process(run_args(dir)).code, 0);
  const auto log = log_of(dir);
  const std::string summary = testing::slurp(dir / "summary.json");
  // Killed after CampaignStopped was logged, before best/ and report.md were written.
  fs::remove_all(dir / "best");
  fs::remove(dir / "report.md");
  auto r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("already stopped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("best/, report.md"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("summary.json"), std::string::npos) << "summary.json was there: " << r.err;
  expect_whole_run(dir);
  EXPECT_EQ(testing::slurp(dir / "summary.json"), summary);
  const auto after = log_of(dir);
  ASSERT_EQ(after.size(), log.size()) << "resume of a stopped run appended to its log";
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(events::encode_frame(after[i]), events::encode_frame(log[i])) << "seq " << i + 1;
  }
  // Everything in place: nothing to write, still exit 0; --json prints the summary.
  fs::remove(dir / "summary.json");
  r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(testing::slurp(dir / "summary.json"), summary);
  r = run_process({kArcd.string(), "resume", dir.string(), "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nothing to write"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"stop_reason\""), std::string::npos) << r.out;
  EXPECT_EQ(log_of(dir).size(), log.size());
}

// What a kill during the creation of the log leaves: RocksDB's first files, no CURRENT.
void half_made_log(const fs::path& dir) {
  fs::create_directories(dir / "log");
  std::ofstream(dir / "log" / "IDENTITY") << "0f1e2d3c-half-made\n";
  std::ofstream(dir / "log" / "LOCK");
  std::ofstream(dir / "log" / "MANIFEST-000001") << std::string(7, '\0');
}

TEST(RunDirectory, RunKilledWhileCreatingItsLogIsStartedAgainByRun) {
  const fs::path dir = scratch("half-made");
  half_made_log(dir);
  // Nothing recorded which campaign it was: resume cannot know, and says how to go on.
  auto r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("arcd run"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "log" / "IDENTITY")) << "a refused resume changed the log";

  r = run_process(run_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("starting afresh"), std::string::npos) << r.err;
  expect_whole_run(dir);
}

// What a kill between the journal's first writes and CampaignStarted leaves: the campaign id
// and the start request in the log's meta, no event.
void unstarted_log(const fs::path& dir, const std::string& budget) {
  auto config = actors::load_campaign(kCampaign);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  config->budget = static_cast<uint32_t>(std::stoul(budget));
  config->overrides["budget"] = budget;
  fs::create_directories(dir);
  auto j = storage::Journal::open(actors::log_dir_of(dir).string(), storage::JournalOptions{});
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  ASSERT_TRUE(j.value()->set_campaign("killed-while-starting").is_ok());
  ASSERT_TRUE(
      j.value()->put_meta(actors::kStartRequestKey, actors::start_request_text(*config)).is_ok());
}

TEST(RunDirectory, RunKilledBeforeCampaignStartedIsStartedFromTheBeginningByResume) {
  const fs::path dir = scratch("unstarted");
  unstarted_log(dir, "9");
  auto r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("from the beginning"), std::string::npos) << r.err;
  expect_whole_run(dir);
  // The budget the killed run was given holds: 9 candidates and the baseline.
  size_t proposals = 0;
  for (const auto& e : log_of(dir)) proposals += e.payload.type == fb::Payload::CandidateProposed;
  EXPECT_EQ(proposals, 10u);
  EXPECT_NE(log_of(dir).front().campaign, "killed-while-starting") << "a new campaign";
}

TEST(RunDirectory, RunKilledBeforeCampaignStartedIsStartedAfreshByRun) {
  const fs::path dir = scratch("unstarted-run");
  unstarted_log(dir, "9");
  auto r = run_process(run_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("starting afresh"), std::string::npos) << r.err;
  expect_whole_run(dir);
}

TEST(RunDirectory, RunRefusesAStartedRunAndForeignFiles) {
  const fs::path started = scratch("started");
  ASSERT_EQ(run_process(run_args(started)).code, 0);
  const size_t events = log_of(started).size();
  auto r = run_process(run_args(started));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("arcd resume"), std::string::npos) << r.err;
  EXPECT_EQ(log_of(started).size(), events);

  const fs::path foreign = scratch("foreign");
  fs::create_directories(foreign);
  std::ofstream(foreign / "notes.txt") << "mine\n";
  r = run_process(run_args(foreign));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(fs::exists(foreign / "log"));
  EXPECT_TRUE(fs::exists(foreign / "notes.txt"));
}

}  // namespace
}  // namespace arc
