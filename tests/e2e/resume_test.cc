// Crash and resume: arcd is SIGKILLed at many points of one campaign and resumed each time.
// The log must verify, hold no proposal or evaluation twice, and end where an uninterrupted
// run with the same measurements (replay evaluator) ends, candidate for candidate.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/summary.h"
#include "replay/verifier.h"
#include "tests/scratch.h"

extern char** environ;

namespace arc {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) { return testing::scratch_path("resume", name); }

const fs::path kArcd = fs::path(ARC_BINARY_DIR) / "tools" / "arcd";
const fs::path kShipped = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";

// The shipped softmax campaign with the cheapest evaluation, so that a 60-candidate recording
// is quick; durability stays "sync", so that a kill can land between any two appends.
fs::path cheap_campaign() {
  std::string text = "[campaign]\nname = \"resume\"\nproblem = \"" +
                     (kShipped.parent_path() / "problem.toml").string() +
                     "\"\nseed = 3\nbudget = 60\nmode = \"lockstep\"\nglobal_plateau = 0\n"
                     "durability = \"sync\"\n"
                     "[evaluation]\nrounds = 1\nwarmup = 0\nrepetitions = 3\nbuffer_sets = 1\n"
                     "flush_cache = false\n";
  for (const char* a : {"vectorize", "fusion", "precision", "shape-gate"}) {
    text += std::string("[[agents]]\nname = \"") + a + "\"\nskill = \"" + a + "\"\n";
  }
  const fs::path file =
      fs::temp_directory_path() / ("arc-resume-" + std::to_string(::getpid()) + "-campaign.toml");
  std::ofstream(file) << text;
  return file;
}

// Starts `args`; stdout goes to `stdout_fd` when it is not -1, else to /dev/null.
pid_t spawn(const std::vector<std::string>& args, int stdout_fd = -1) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// Starts `args` with live progress on a pipe and SIGKILLs it right after its `decisions`-th
// progress line (each line follows a durable Decision, and the campaign goes on meanwhile, so
// the kill lands somewhere in the next candidates' proposal, evaluation and appends). Returns
// false if the process ended first.
bool kill_after_decisions(const std::vector<std::string>& args, int decisions) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = spawn(args, fds[1]);
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  int seen = 0;
  char line[512];
  while (seen < decisions && std::fgets(line, sizeof line, out) != nullptr) {
    if (line[0] == '[') ++seen;
  }
  if (seen == decisions) kill(pid, SIGKILL);
  std::fclose(out);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// Runs to the end; returns the exit code.
int run(const std::vector<std::string>& args) {
  int status = 0;
  waitpid(spawn(args), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> base_args(const std::string& verb, const fs::path& target,
                                   const fs::path& recorded) {
  std::vector<std::string> a = {kArcd.string(), verb, target.string()};
  if (verb == "run") a.insert(a.end(), {"--run-dir", ""});
  a.insert(a.end(), {"--quiet", "--evaluator", "replay", "--replay-from", recorded.string()});
  return a;
}

bool has_campaign_started(const fs::path& run_dir) {
  auto log = replay::read_run(run_dir);
  return log.ok() && !log->empty() && log->front().payload.type == fb::Payload::CampaignStarted;
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

TEST(CrashResume, TwentyKillsLoseNothingAndEndLikeAnUninterruptedRun) {
  // Real measurements first, then the uninterrupted reference run against them.
  const fs::path kCampaign = cheap_campaign();
  const fs::path live = scratch("live");
  ASSERT_EQ(run({kArcd.string(), "run", kCampaign.string(), "--run-dir", live.string(), "--quiet"}),
            0);
  const fs::path reference = scratch("reference");
  auto ref_args = base_args("run", kCampaign, live);
  ref_args[4] = reference.string();
  ASSERT_EQ(run(ref_args), 0);
  auto ref_log = replay::read_run(reference);
  ASSERT_TRUE(ref_log.ok());

  const fs::path dir = scratch("crashed");
  // Resumes the run if its first event is durable, else starts it again from nothing (a kill
  // before CampaignStarted leaves at most an empty run directory).
  const auto next_args = [&kCampaign, &dir, &live] {
    if (has_campaign_started(dir)) return base_args("resume", dir, live);
    fs::remove_all(dir);
    auto args = base_args("run", kCampaign, live);
    args[4] = dir.string();
    return args;
  };
  int kills = 0;
  bool finished = false;
  for (int cycle = 0; cycle < 20 && !finished; ++cycle) {
    std::vector<std::string> args = next_args();
    args.erase(std::find(args.begin(), args.end(), "--quiet"));
    // One to three decisions per cycle: 20 kills cut the 60-candidate campaign about 40
    // decisions in, and the final resume does the rest.
    if (kill_after_decisions(args, 1 + (cycle * 7) % 3)) {
      ++kills;
    } else {
      finished = true;  // it reached the end before the kill
    }
  }
  if (!finished) {
    EXPECT_EQ(run(next_args()), 0);
  }
  EXPECT_EQ(kills, 20);

  auto log = replay::read_run(dir);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  auto v = replay::verify_events(log.value());
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
  // Nothing evaluated twice, no proposal logged twice, no pair of a paired decision measured
  // twice.
  std::map<std::string, int> evaluated, proposed, paired;
  for (const auto& e : log.value()) {
    if (e.payload.type == fb::Payload::PairMeasured) {
      const auto* p = e.payload.AsPairMeasured();
      EXPECT_EQ(++paired[p->candidate_hash + p->incumbent_hash + std::to_string(p->index)], 1);
    }
    if (e.payload.type == fb::Payload::CandidateEvaluated) {
      EXPECT_EQ(++evaluated[e.payload.AsCandidateEvaluated()->candidate_hash], 1);
    }
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      EXPECT_EQ(++proposed[p->agent + p->candidate_hash], 1);
    }
  }
  EXPECT_EQ(proposals(log.value()), proposals(ref_log.value()));
  auto a = replay::summarize(log.value()), b = replay::summarize(ref_log.value());
  EXPECT_TRUE(a.stopped);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.best_hash, b.best_hash);
  EXPECT_DOUBLE_EQ(a.best_score, b.best_score);
  EXPECT_GT(paired.size(), 0u);
  std::printf("crash/resume: %d kills survived, %zu events, %zu pairs, %llu re-derived\n", kills,
              log->size(), paired.size(),
              static_cast<unsigned long long>(v.proposals + v.decisions));
}

}  // namespace
}  // namespace arc
