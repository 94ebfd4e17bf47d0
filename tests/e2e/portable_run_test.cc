// Portable runs (DESIGN.md §10, actors/run_inputs.h): a run keeps in its log everything it read,
// so that once it is moved and its campaign, problem (shared includes above its folder too) and
// skills are deleted, `arc-replay verify` and `show`, `arcd confirm`, `export` and `resume` (of
// an interrupted copy) still work. A problem whose files changed since is a warning; a log that
// keeps no copy of a changed or deleted problem, or whose copy lacks an artifact or holds
// damaged bytes, is MISSING INPUT, exit 6, naming the file. Real arcd and arc-replay processes on
// real RocksDB logs.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rocksdb/db.h>

#include "actors/campaign_config.h"
#include "actors/run_inputs.h"
#include "actors/view.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"
#include "storage/journal.h"
#include "tests/e2e/arcd_process.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kArcd;
using testing::kArcReplay;
using testing::run_process;

const fs::path kSource = ARC_SOURCE_DIR;
const fs::path kMeasurements = kSource / "tests/data/sweeps/host-softmax";

fs::path scratch(const std::string& name) { return testing::scratch_path("portable", name); }

using testing::slurp;

// A source tree of its own under `src`: the shipped host softmax problem (with `shared`, also
// an include folder above it, ../common), the shipped skills, and a cheap campaign naming them.
fs::path make_tree(const fs::path& src, uint32_t budget, bool shared) {
  fs::create_directories(src / "problems");
  fs::copy(kSource / "problems/host/softmax", src / "problems/softmax",
           fs::copy_options::recursive);
  if (shared) {
    fs::create_directories(src / "problems/common");
    std::ofstream(src / "problems/common/portable.h") << "#pragma once\n#define PORTABLE 1\n";
    const std::string toml = slurp(src / "problems/softmax/problem.toml");
    std::ofstream(src / "problems/softmax/problem.toml") << "include_dirs = [\"../common\"]\n"
                                                         << toml;
  }
  fs::create_directories(src / "skills");
  for (const auto& entry : fs::directory_iterator(kSource / "skills")) {
    if (!entry.is_directory()) continue;
    fs::copy(entry.path(), src / "skills" / entry.path().filename(), fs::copy_options::recursive);
  }
  std::ofstream(src / "campaign.toml")
      << "[campaign]\nname = \"portable\"\nproblem = \"problems/softmax\"\nskills = \"skills\"\n"
      << "seed = 2\nbudget = " << budget
      << "\nmode = \"lockstep\"\ndurability = \"batch\"\n"
         "[evaluation]\nrounds = 1\nwarmup = 0\nrepetitions = 3\nbuffer_sets = 1\n"
         "flush_cache = false\n"
         "[[agents]]\nname = \"vectorizer\"\nskill = \"vectorize\"\n"
         "[[agents]]\nname = \"fuser\"\nskill = \"fusion\"\n";
  return src / "campaign.toml";
}

// A run of the tree's campaign, moved to `moved` once it finished; the tree is deleted. With
// `live`, the host evaluator measures; else the recorded host-softmax sweep answers.
void record(const fs::path& src, const fs::path& moved, bool live) {
  const fs::path campaign = make_tree(src, live ? 6 : 12, live);
  std::vector<std::string> args = {kArcd.string(),         "run",    campaign.string(), "--run-dir",
                                   (src / "run").string(), "--quiet"};
  if (!live) {
    args.insert(args.end(), {"--evaluator", "replay", "--replay-from", kMeasurements.string()});
  }
  auto r = run_process(args);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  fs::create_directories(moved.parent_path());
  fs::rename(src / "run", moved);
  fs::remove_all(src);
}

// The events of `run`'s log.
std::vector<events::Event> events_of(const fs::path& run) {
  auto log = replay::read_run(run);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? log.value() : std::vector<events::Event>{};
}

// A copy of `from`'s log in `to`, cut after its first `keep` events (a run killed there), with
// every artifact but `drop`. `legacy`: its CampaignStarted names no inputs manifest, as logs
// written before runs kept their inputs.
void copy_log(const fs::path& from, const fs::path& to, size_t keep, const std::string& drop = "",
              bool legacy = false) {
  auto src = replay::open_run_log(from);
  ASSERT_TRUE(src.ok()) << src.status().to_string();
  fs::remove_all(to);
  fs::create_directories(to);
  auto dst = storage::Journal::open((to / "log").string(), {});
  ASSERT_TRUE(dst.ok()) << dst.status().to_string();
  ASSERT_TRUE(dst.value()->set_campaign(src.value()->campaign()).is_ok());
  std::unique_ptr<rocksdb::Iterator> it(src.value()->raw_db_for_testing()->NewIterator(
      rocksdb::ReadOptions(), src.value()->artifacts_cf_for_testing()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().ToString() == drop || legacy) continue;
    ASSERT_TRUE(dst.value()->put_artifact(it->value().ToString()).ok());
  }
  ASSERT_TRUE(it->status().ok());
  auto all = src.value()->read_all();
  ASSERT_TRUE(all.ok());
  std::vector<events::Event> prefix(all->begin(), all->begin() + static_cast<long>(keep));
  if (legacy) prefix.front().payload.AsCampaignStarted()->inputs_ref.clear();
  ASSERT_TRUE(dst.value()->append_all(prefix).ok());
}

// The number of events up to and including the n-th Decision (and its conclusion).
size_t through_decision(const std::vector<events::Event>& log, int n) {
  int seen = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].payload.type == fb::Payload::Decision && ++seen == n) {
      // A decision and its conclusion are one append: a kill never separates them.
      const bool concluded =
          i + 1 < log.size() && log[i + 1].payload.type == fb::Payload::ConclusionRecorded;
      return i + (concluded ? 2 : 1);
    }
  }
  ADD_FAILURE() << "the log has fewer than " << n << " decisions";
  return log.size();
}

// The manifest of `run`'s inputs.
actors::RunInputsManifest manifest_of(const fs::path& run) {
  auto j = replay::open_run_log(run);
  EXPECT_TRUE(j.ok());
  auto all = j.value()->read_all();
  EXPECT_TRUE(all.ok());
  auto text = j.value()->get_artifact(all->front().payload.AsCampaignStarted()->inputs_ref);
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  auto m = actors::parse_manifest(text.ok() ? text.value() : "");
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? m.value() : actors::RunInputsManifest{};
}

TEST(PortableRun, AMovedRunVerifiesShowsConfirmsAndResumesWithoutItsSourceTree) {
  const fs::path src = scratch("live-src");
  const fs::path moved = scratch("live-moved") / "run";
  ASSERT_NO_FATAL_FAILURE(record(src, moved, /*live=*/true));
  const std::string gone_note =
      "note: problem " + (src / "problems/softmax").string() + ": not found; using the copy";
  ASSERT_FALSE(fs::exists(src));

  auto verify = run_process({kArcReplay.string(), "verify", moved.string()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("re-derived identically"));
  EXPECT_THAT(verify.err, HasSubstr("arc-replay: " + gone_note));

  // The summary's workload rows come from the log's copy of the problem.
  auto show = run_process({kArcReplay.string(), "show", moved.string(), "--json"});
  ASSERT_EQ(show.code, 0) << show.err;
  auto shipped = problem::load_problem(kSource / "problems/host/softmax");
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(nlohmann::json::parse(show.out)["workloads"].size(), shipped->workloads.size());

  // The baseline and best compiled from the restored files and measured again.
  auto confirm = run_process({kArcd.string(), "confirm", moved.string(), "--rounds", "1"});
  EXPECT_EQ(confirm.code, 0) << confirm.out << confirm.err;
  EXPECT_THAT(confirm.err, HasSubstr("arcd: " + gone_note));

  // A copy of the run as a kill three decisions in would have left it, resumed live.
  const fs::path cut = scratch("live-cut") / "run";
  const std::vector<events::Event> full = events_of(moved);
  ASSERT_NO_FATAL_FAILURE(copy_log(moved, cut, through_decision(full, 3)));
  auto resume = run_process({kArcd.string(), "resume", cut.string(), "--quiet"});
  ASSERT_EQ(resume.code, 0) << resume.out << resume.err;
  EXPECT_THAT(resume.err, HasSubstr("arcd: " + gone_note));
  const std::vector<events::Event> resumed = events_of(cut);
  ASSERT_FALSE(resumed.empty());
  EXPECT_EQ(resumed.back().payload.type, fb::Payload::CampaignStopped);
  EXPECT_GT(resumed.size(), through_decision(full, 3));
  // best/ shows the sources of the log's copy, as an uninterrupted run's does.
  EXPECT_TRUE(fs::exists(cut / "best" / "base.cpp"));
  EXPECT_EQ(slurp(cut / "best" / "base.cpp").empty(), false);
  auto verify_cut = run_process({kArcReplay.string(), "verify", cut.string()});
  EXPECT_EQ(verify_cut.code, 0) << verify_cut.out << verify_cut.err;
  fs::remove_all(moved.parent_path());
  fs::remove_all(cut.parent_path());
}

TEST(PortableRun, AChangedProblemIsAWarningAndALogWithoutACopyOfItIsExitSix) {
  const fs::path src = scratch("changed-src");
  const fs::path moved = scratch("changed-moved") / "run";
  ASSERT_NO_FATAL_FAILURE(record(src, moved, /*live=*/false));
  // The tree back where the run read it, one file edited since.
  make_tree(src, 12, false);
  const fs::path problem_dir = src / "problems/softmax";
  std::ofstream(problem_dir / "reference.cpp", std::ios::app) << "// edited since the run\n";

  auto verify = run_process({kArcReplay.string(), "verify", moved.string()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.err, HasSubstr("arc-replay: warning: problem " + problem_dir.string() +
                                    ": its files changed since the run (hash "));
  EXPECT_THAT(verify.err, HasSubstr("); using the copy in the run's log"));
  auto json = run_process({kArcReplay.string(), "verify", moved.string(), "--json"});
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out)["warnings"].size(), 1u);

  // The same log as written before runs kept their inputs: nothing to fall back on.
  const fs::path legacy = scratch("changed-legacy") / "run";
  const std::vector<events::Event> full = events_of(moved);
  ASSERT_NO_FATAL_FAILURE(copy_log(moved, legacy, full.size(), "", /*legacy=*/true));
  auto changed = run_process({kArcReplay.string(), "verify", legacy.string()});
  EXPECT_EQ(changed.code, 6) << changed.out << changed.err;
  EXPECT_THAT(changed.out, HasSubstr("MISSING INPUT: problem " + problem_dir.string() +
                                     ": its files changed since the run"));
  EXPECT_THAT(changed.out, HasSubstr("the log keeps no copy of the run's inputs"));
  EXPECT_THAT(changed.out, ::testing::Not(HasSubstr("DIVERGENCE")));

  fs::remove_all(src);
  auto gone = run_process({kArcReplay.string(), "verify", legacy.string()});
  EXPECT_EQ(gone.code, 6) << gone.out << gone.err;
  EXPECT_THAT(gone.out, HasSubstr("MISSING INPUT: problem " + problem_dir.string() + ": "));
  const fs::path legacy_cut = scratch("changed-legacy-cut") / "run";
  ASSERT_NO_FATAL_FAILURE(
      copy_log(moved, legacy_cut, through_decision(full, 3), "", /*legacy=*/true));
  auto resume = run_process({kArcd.string(), "resume", legacy_cut.string(), "--quiet",
                             "--evaluator", "replay", "--replay-from", kMeasurements.string()});
  EXPECT_EQ(resume.code, 6) << resume.out << resume.err;
  EXPECT_THAT(resume.err, HasSubstr("arcd: problem " + problem_dir.string() + ": "));
  // Summaries need no input: show still works, without the workload rows.
  auto show = run_process({kArcReplay.string(), "show", legacy.string()});
  EXPECT_EQ(show.code, 0) << show.err;
  for (const auto& p : {moved, legacy, legacy_cut}) fs::remove_all(p.parent_path());
}

TEST(PortableRun, AMissingOrDamagedArtifactOfTheInputsIsExitSixNamingTheFile) {
  const fs::path src = scratch("artifact-src");
  const fs::path moved = scratch("artifact-moved") / "run";
  ASSERT_NO_FATAL_FAILURE(record(src, moved, /*live=*/false));
  const actors::RunInputsManifest m = manifest_of(moved);
  const std::string reference = m.problem_files.at("reference.cpp");
  const std::string named = "problem file " + (src / "problems/softmax/reference.cpp").string() +
                            " (artifact " + reference + ") cannot be read from the log";
  const std::vector<events::Event> full = events_of(moved);

  const fs::path missing = scratch("artifact-missing") / "run";
  ASSERT_NO_FATAL_FAILURE(copy_log(moved, missing, full.size(), reference));
  auto verify = run_process({kArcReplay.string(), "verify", missing.string()});
  EXPECT_EQ(verify.code, 6) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("MISSING INPUT: " + named));
  EXPECT_THAT(verify.out, HasSubstr("not stored"));
  auto confirm = run_process({kArcd.string(), "confirm", missing.string(), "--rounds", "1"});
  EXPECT_EQ(confirm.code, 6) << confirm.out << confirm.err;
  EXPECT_THAT(confirm.err, HasSubstr(named));

  const fs::path missing_cut = scratch("artifact-missing-cut") / "run";
  ASSERT_NO_FATAL_FAILURE(copy_log(moved, missing_cut, through_decision(full, 3), reference));
  auto resume = run_process({kArcd.string(), "resume", missing_cut.string(), "--quiet",
                             "--evaluator", "replay", "--replay-from", kMeasurements.string()});
  EXPECT_EQ(resume.code, 6) << resume.out << resume.err;
  EXPECT_THAT(resume.err, HasSubstr(named));
  EXPECT_EQ(events_of(missing_cut).size(), through_decision(full, 3)) << "resume wrote events";

  // The artifact present with other bytes than it had.
  const fs::path damaged = scratch("artifact-damaged") / "run";
  ASSERT_NO_FATAL_FAILURE(copy_log(moved, damaged, full.size()));
  {
    auto j = storage::Journal::open((damaged / "log").string(), {});
    ASSERT_TRUE(j.ok()) << j.status().to_string();
    ASSERT_TRUE(j.value()
                    ->raw_db_for_testing()
                    ->Put(rocksdb::WriteOptions(), j.value()->artifacts_cf_for_testing(), reference,
                          "int damaged;\n")
                    .ok());
  }
  auto bad = run_process({kArcReplay.string(), "verify", damaged.string()});
  EXPECT_EQ(bad.code, 6) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("MISSING INPUT: " + named));
  EXPECT_THAT(bad.out, HasSubstr("hash to"));
  for (const auto& p : {moved, missing, missing_cut, damaged}) fs::remove_all(p.parent_path());
}

// A CUDA run (built event by event: no GPU here) whose problem takes its reference, families and
// shared includes from a folder above it exports from its log alone.
TEST(PortableRun, ACudaRunExportsWithoutItsSourceTree) {
  const fs::path src = scratch("cuda-src");
  const fs::path run = scratch("cuda-run") / "run";
  fs::create_directories(src / "problems");
  fs::copy(kSource / "problems/gpu/softmax_bf16", src / "problems/softmax_bf16",
           fs::copy_options::recursive);
  fs::copy(kSource / "problems/gpu/common", src / "problems/common", fs::copy_options::recursive);
  fs::create_directories(src / "skills");
  fs::copy(kSource / "skills/vectorize", src / "skills/vectorize", fs::copy_options::recursive);
  std::ofstream(src / "campaign.toml")
      << "[campaign]\nname = \"cuda\"\nproblem = \"problems/softmax_bf16\"\nskills = \"skills\"\n"
         "[[agents]]\nname = \"v\"\nskill = \"vectorize\"\n";
  auto config = actors::load_campaign(src / "campaign.toml");
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  auto problem = problem::load_problem(config->problem);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  auto skills = skills::load_skills(config->skills);
  ASSERT_TRUE(skills.ok()) << skills.status().to_string();
  problem::Candidate best;
  best.base.family = "online";
  {
    fs::create_directories(run);
    auto j = storage::Journal::open((run / "log").string(), {});
    ASSERT_TRUE(j.ok()) << j.status().to_string();
    storage::Journal& journal = *j.value();
    ASSERT_TRUE(journal.set_campaign("cudaexport").is_ok());
    auto inputs =
        actors::store_run_inputs(journal, config.value(), problem.value(), skills.value());
    ASSERT_TRUE(inputs.ok()) << inputs.status().to_string();
    fb::CampaignStartedT s;
    s.config_text = config->text;
    s.config_path = config->file.string();
    s.problem_name = problem->name;
    s.problem_dir = problem->dir.string();
    s.problem_hash = problem->hash;
    s.kernel_type = problem->kernel_type;
    s.mode = "lockstep";
    s.device = "cuda: NVIDIA H200 (sm_90a)";
    s.inputs_ref = inputs.value();
    std::vector<events::Event> batch;
    batch.push_back(events::make_event(actors::kCampaignActor, std::move(s)));
    const std::pair<const problem::Candidate*, double> kept[] = {{&problem->seed, 1.0},
                                                                 {&best, 2.0}};
    for (const auto& [c, score] : kept) {
      const std::string agent = score == 1.0 ? actors::kCampaignActor : "v";
      fb::CandidateProposedT p;
      p.candidate_hash = c->hash();
      p.agent = agent;
      p.move = score == 1.0 ? actors::kBaselineMove : "family:online";
      p.canonical = c->canonical();
      batch.push_back(events::make_event(agent, std::move(p)));
      fb::CandidateEvaluatedT ev;
      ev.candidate_hash = c->hash();
      ev.evaluator = "cuda";
      for (const auto& w : problem->workloads) {
        auto we = std::make_unique<fb::WorkloadEvaluationT>();
        we->workload = w.name;
        we->status = fb::WorkloadStatus::OK;
        we->median_ns = 1e5 / score;
        ev.workloads.push_back(std::move(we));
      }
      batch.push_back(events::make_event(actors::kGuardActor, std::move(ev)));
      fb::DecisionT d;
      d.candidate_hash = c->hash();
      d.agent = agent;
      d.verdict = fb::Verdict::KEEP;
      d.score = score;
      d.evaluation_seq = batch.size();
      batch.push_back(events::make_event(actors::kGuardActor, std::move(d)));
    }
    ASSERT_TRUE(journal.append_all(batch).ok());
  }
  fs::remove_all(src);
  const fs::path out = scratch("cuda-out");
  auto exported =
      run_process({kArcd.string(), "export", run.string(), "--format", "cuda", "-o", out.string()});
  ASSERT_EQ(exported.code, 0) << exported.out << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("note: problem " + (src / "problems/softmax_bf16").string() +
                                      ": not found; using the copy in the run's log"));
  const std::string cu = slurp(out / "softmax_bf16.cu");
  EXPECT_THAT(cu, HasSubstr("// ---- shared source elem_io.cuh ----"));
  EXPECT_THAT(cu, HasSubstr(best.hash()));
  fs::remove_all(run.parent_path());
  fs::remove_all(out);
}

}  // namespace
}  // namespace arc
