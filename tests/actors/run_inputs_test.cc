// A run's inputs kept in its log (actors/run_inputs.h): the manifest's format and checks, and
// storing then restoring a real problem (with a shared include above its folder) and real skills
// through a real RocksDB log, with the folders present, changed, gone, or the log's copy damaged.
#include "actors/run_inputs.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "base/sha256.h"
#include "storage/journal.h"
#include "tests/scratch.h"

namespace arc::actors {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kSource = ARC_SOURCE_DIR;

using testing::slurp;

// A source tree of its own: the shipped host softmax problem including ../common/portable.h,
// two shipped skills, and a campaign naming both; stored into a log at `log`.
class RunInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::scratch_path("run-inputs",
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    tree_ = root_ / "src";
    problem_dir_ = tree_ / "problems" / "softmax";
    fs::create_directories(tree_ / "problems");
    fs::copy(kSource / "problems/host/softmax", problem_dir_, fs::copy_options::recursive);
    fs::create_directories(tree_ / "problems/common");
    std::ofstream(tree_ / "problems/common/portable.h") << "#pragma once\n#define PORTABLE 1\n";
    const std::string toml = slurp(problem_dir_ / "problem.toml");
    std::ofstream(problem_dir_ / "problem.toml") << "include_dirs = [\"../common\"]\n" << toml;
    fs::create_directories(tree_ / "skills");
    for (const char* s : {"vectorize", "fusion"}) {
      fs::copy(kSource / "skills" / s, tree_ / "skills" / s, fs::copy_options::recursive);
    }
    std::ofstream(tree_ / "campaign.toml")
        << "[campaign]\nname = \"inputs\"\nproblem = \"problems/softmax\"\nskills = \"skills\"\n"
           "[[agents]]\nname = \"v\"\nskill = \"vectorize\"\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  // Loads the tree and stores its inputs into a log at root_/log; `started_` names them.
  void store() {
    auto config = load_campaign(tree_ / "campaign.toml");
    ASSERT_TRUE(config.ok()) << config.status().to_string();
    auto problem = problem::load_problem(config->problem);
    ASSERT_TRUE(problem.ok()) << problem.status().to_string();
    auto skills = skills::load_skills(config->skills);
    ASSERT_TRUE(skills.ok()) << skills.status().to_string();
    problem_ = problem.value();
    skills_ = skills.value();
    auto journal = storage::Journal::open((root_ / "log").string(), {});
    ASSERT_TRUE(journal.ok()) << journal.status().to_string();
    journal_ = std::move(journal.value());
    ASSERT_TRUE(journal_->set_campaign("inputs").is_ok());
    auto ref = store_run_inputs(*journal_, config.value(), problem_, skills_);
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    started_.problem_dir = problem_.dir.string();
    started_.problem_hash = problem_.hash;
    started_.inputs_ref = ref.value();
    skills_dir_ = config->skills;
  }

  ArtifactSource artifacts() const {
    const storage::Journal* j = journal_.get();
    return [j](const std::string& hash) { return j->get_artifact(hash); };
  }

  // The manifest stored by store().
  RunInputsManifest manifest() const {
    auto text = journal_->get_artifact(started_.inputs_ref);
    EXPECT_TRUE(text.ok());
    auto m = parse_manifest(text.value());
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    return m.value();
  }

  fs::path root_, tree_, problem_dir_, skills_dir_;
  problem::Problem problem_;
  std::vector<skills::Skill> skills_;
  std::unique_ptr<storage::Journal> journal_;
  fb::CampaignStartedT started_;
};

TEST_F(RunInputsTest, TheManifestListsEveryFileTheRunReadAndReadsBack) {
  store();
  const RunInputsManifest m = manifest();
  EXPECT_EQ(m.problem_hash, problem_.hash);
  EXPECT_EQ(m.problem_dir, problem_dir_.string());
  EXPECT_EQ(m.skills_dir, (tree_ / "skills").string());
  // problem.toml, the reference, every family source and the shared include above the folder.
  EXPECT_EQ(m.problem_files.size(), problem_.files.size());
  EXPECT_EQ(m.problem_files.count("problem.toml"), 1u);
  EXPECT_EQ(m.problem_files.count("reference.cpp"), 1u);
  EXPECT_EQ(m.problem_files.count("../common/portable.h"), 1u);
  for (const auto& f : problem_.families) {
    const std::string rel = f.source.lexically_relative(problem_dir_).generic_string();
    EXPECT_EQ(m.problem_files.count(rel), 1u) << rel;
  }
  EXPECT_EQ(m.skill_files.size(), 4u);
  EXPECT_EQ(m.skill_files.count("fusion/SKILL.md"), 1u);
  EXPECT_EQ(m.skill_files.at("vectorize/skill.toml"),
            arc::sha256_hex(slurp(tree_ / "skills/vectorize/skill.toml")));
  auto again = parse_manifest(manifest_text(m));
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(manifest_text(again.value()), manifest_text(m));
}

TEST(RunInputsManifest, AMalformedManifestIsAMissingInputNamingTheField) {
  RunInputsManifest m;
  m.campaign_path = "/c/campaign.toml";
  m.campaign_sha256 = std::string(64, 'a');
  m.problem_dir = "/c/p";
  m.problem_hash = std::string(64, 'b');
  m.problem_files = {{"problem.toml", std::string(64, 'c')}};
  m.skills_dir = "/c/skills";
  m.skill_files = {{"tiling/skill.toml", std::string(64, 'd')}};
  ASSERT_TRUE(parse_manifest(manifest_text(m)).ok());
  struct Case {
    std::function<void(RunInputsManifest&)> change;
    std::string field;
  };
  std::string deep;
  for (int i = 0; i < 17; ++i) deep += "../";
  const std::vector<Case> cases = {
      {[](RunInputsManifest& x) { x.problem_files["/etc/passwd"] = std::string(64, 'e'); },
       "problem.files[\"/etc/passwd\"]"},
      {[](RunInputsManifest& x) { x.problem_files["a/../../b"] = std::string(64, 'e'); },
       "problem.files[\"a/../../b\"]"},
      {[](RunInputsManifest& x) { x.problem_files["./a"] = std::string(64, 'e'); },
       "problem.files[\"./a\"]"},
      {[deep](RunInputsManifest& x) { x.problem_files[deep + "x.h"] = std::string(64, 'e'); },
       "problem.files[\"" + deep + "x.h\"]"},
      {[](RunInputsManifest& x) { x.problem_files["ref.c"] = "ABC"; },
       "problem.files[\"ref.c\"]': expected 64 lowercase hex digits"},
      {[](RunInputsManifest& x) {
         x.problem_files.erase("problem.toml");
         x.problem_files["ref.c"] = std::string(64, 'e');
       },
       "problem.files': expected an entry for problem.toml"},
      {[](RunInputsManifest& x) { x.skill_files["tiling/notes.txt"] = std::string(64, 'e'); },
       "skills.files[\"tiling/notes.txt\"]"},
      {[](RunInputsManifest& x) { x.skill_files["../skill.toml"] = std::string(64, 'e'); },
       "skills.files[\"../skill.toml\"]"},
      {[](RunInputsManifest& x) { x.campaign_sha256 = "x"; }, "campaign.sha256"},
      {[](RunInputsManifest& x) { x.problem_dir.clear(); }, "problem.dir"},
  };
  for (const auto& c : cases) {
    RunInputsManifest x = m;
    c.change(x);
    auto r = parse_manifest(manifest_text(x));
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), Status::Code::kMissingInput) << c.field;
    EXPECT_THAT(r.status().message(), HasSubstr("field '" + c.field)) << r.status().message();
  }
  for (const std::string text : {"", "[]", "{\"format\": \"kernelarc-run-inputs-v0\"}"}) {
    auto r = parse_manifest(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Status::Code::kMissingInput) << text;
  }
}

TEST_F(RunInputsTest, OnceTheSourceTreeIsGoneTheLogsCopyIsRestored) {
  store();
  fs::remove_all(tree_);
  fs::path restored_folder;
  {
    auto in = restore_run_inputs(started_, skills_dir_, artifacts());
    ASSERT_TRUE(in.ok()) << in.status().to_string();
    EXPECT_EQ(in->problem.hash, problem_.hash);
    EXPECT_EQ(in->problem.headers.at("portable.h"), "#pragma once\n#define PORTABLE 1\n");
    ASSERT_NE(in->restored, nullptr);
    restored_folder = *in->restored;
    EXPECT_EQ(in->problem_path.filename(), "softmax");
    EXPECT_EQ(in->problem_path.string().rfind(restored_folder.string(), 0), 0u);
    // Its family sources are files again, where compilers read them.
    for (const auto& f : in->problem.families) {
      EXPECT_TRUE(fs::is_regular_file(f.source)) << f.source;
    }
    ASSERT_EQ(in->notes.size(), 1u);
    EXPECT_THAT(in->notes[0], HasSubstr(problem_dir_.string() + ": not found; using the copy"));
    EXPECT_TRUE(in->warnings.empty());
    ASSERT_EQ(in->skills.size(), skills_.size());
    for (size_t i = 0; i < skills_.size(); ++i) {
      EXPECT_EQ(in->skills[i].name, skills_[i].name);
      EXPECT_EQ(in->skills[i].guidance, skills_[i].guidance);
      EXPECT_EQ(in->skills[i].moves, skills_[i].moves);
    }
    auto alone = restore_run_problem(started_, artifacts());
    ASSERT_TRUE(alone.ok()) << alone.status().to_string();
    EXPECT_EQ(alone->problem.hash, problem_.hash);
    EXPECT_TRUE(alone->skills.empty());
  }
  EXPECT_FALSE(fs::exists(restored_folder)) << "the private copy outlived its last holder";
}

TEST_F(RunInputsTest, AnUnchangedFolderIsReadAndAChangedOneIsAWarning) {
  store();
  auto same = restore_run_inputs(started_, skills_dir_, artifacts());
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ(same->problem_path, problem_dir_);
  EXPECT_EQ(same->problem.reference, problem_.reference);
  EXPECT_TRUE(same->warnings.empty());
  EXPECT_TRUE(same->notes.empty());

  const std::string original = slurp(problem_dir_ / "reference.cpp");
  std::ofstream(problem_dir_ / "reference.cpp", std::ios::app) << "// edited since\n";
  auto changed = restore_run_inputs(started_, skills_dir_, artifacts());
  ASSERT_TRUE(changed.ok()) << changed.status().to_string();
  ASSERT_EQ(changed->warnings.size(), 1u);
  EXPECT_THAT(changed->warnings[0],
              HasSubstr(problem_dir_.string() + ": its files changed since the run (hash "));
  EXPECT_THAT(changed->warnings[0],
              HasSubstr("logged " + problem_.hash.substr(0, 12) + "); using the copy"));
  EXPECT_EQ(changed->problem.hash, problem_.hash);
  EXPECT_EQ(slurp(changed->problem.reference), original);
}

TEST_F(RunInputsTest, ALogWithoutAManifestReadsTheFoldersItNames) {
  store();
  fb::CampaignStartedT legacy = started_;
  legacy.inputs_ref.clear();
  auto present = restore_run_inputs(legacy, skills_dir_, artifacts());
  ASSERT_TRUE(present.ok()) << present.status().to_string();
  EXPECT_EQ(present->problem_path, problem_dir_);
  EXPECT_EQ(present->restored, nullptr);

  std::ofstream(problem_dir_ / "reference.cpp", std::ios::app) << "// edited since\n";
  auto changed = restore_run_inputs(legacy, skills_dir_, artifacts());
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), Status::Code::kMissingInput);
  EXPECT_THAT(changed.status().message(),
              HasSubstr("problem " + problem_dir_.string() + ": its files changed since the run"));
  EXPECT_THAT(changed.status().message(), HasSubstr("the log keeps no copy of the run's inputs"));

  fs::remove_all(problem_dir_);
  auto gone = restore_run_problem(legacy, artifacts());
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Status::Code::kMissingInput);
  EXPECT_THAT(gone.status().message(), HasSubstr("no such problem file"));
}

TEST_F(RunInputsTest, AMissingOrDamagedArtifactIsAMissingInputNamingTheFile) {
  store();
  fs::remove_all(tree_);
  const RunInputsManifest m = manifest();
  const std::string reference = m.problem_files.at("reference.cpp");
  rocksdb::DB* db = journal_->raw_db_for_testing();
  ASSERT_TRUE(
      db->Put(rocksdb::WriteOptions(), journal_->artifacts_cf_for_testing(), reference, "garbage")
          .ok());
  auto damaged = restore_run_problem(started_, artifacts());
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), Status::Code::kMissingInput);
  EXPECT_THAT(damaged.status().message(),
              HasSubstr("problem file " + (problem_dir_ / "reference.cpp").string() +
                        " (artifact " + reference + ") cannot be read from the log"));

  ASSERT_TRUE(
      db->Delete(rocksdb::WriteOptions(), journal_->artifacts_cf_for_testing(), reference).ok());
  auto missing = restore_run_problem(started_, artifacts());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kMissingInput);
  EXPECT_THAT(missing.status().message(), HasSubstr("(artifact " + reference + ")"));
  EXPECT_THAT(missing.status().message(), HasSubstr("not stored"));

  ASSERT_TRUE(
      db->Delete(rocksdb::WriteOptions(), journal_->artifacts_cf_for_testing(), started_.inputs_ref)
          .ok());
  auto no_manifest = restore_run_inputs(started_, skills_dir_, artifacts());
  ASSERT_FALSE(no_manifest.ok());
  EXPECT_EQ(no_manifest.status().code(), Status::Code::kMissingInput);
  EXPECT_THAT(no_manifest.status().message(),
              HasSubstr("the run's inputs manifest (artifact " + started_.inputs_ref + ")"));
}

}  // namespace
}  // namespace arc::actors
