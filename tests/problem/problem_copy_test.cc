// Problem copies (problem/problem_copy.h): a shipped problem written elsewhere from its
// problem::Problem::files loads with the same hash; paths that would leave the copy's root are
// refused before anything is written.
#include "problem/problem_copy.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "problem/problem.h"
#include "tests/scratch.h"

namespace arc::problem {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ProblemCopy, LevelsUpCountsLeadingParentsOfPlainRelativePaths) {
  EXPECT_EQ(levels_up("problem.toml"), 0);
  EXPECT_EQ(levels_up("families/a.cpp"), 0);
  EXPECT_EQ(levels_up("../common/x.h"), 1);
  EXPECT_EQ(levels_up("../../x.h"), 2);
  EXPECT_EQ(levels_up("/etc/passwd"), -1);
  EXPECT_EQ(levels_up("a/../b"), -1);
  EXPECT_EQ(levels_up("./a"), -1);
  EXPECT_EQ(levels_up("a//b"), -1);
  EXPECT_EQ(levels_up(".."), -1);
  EXPECT_EQ(levels_up(""), -1);
}

TEST(ProblemCopy, AShippedProblemLoadsFromItsCopyWithTheSameHash) {
  auto original = load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/softmax");
  ASSERT_TRUE(original) << original.status().to_string();
  const fs::path root = testing::scratch_path("problem-copy", "root");
  auto dir = write_problem_files(root, original->dir.string(), original->files);
  ASSERT_TRUE(dir) << dir.status().to_string();
  EXPECT_EQ(dir->filename(), "softmax");
  auto copy = load_problem(dir.value());
  ASSERT_TRUE(copy) << copy.status().to_string();
  EXPECT_EQ(copy->hash, original->hash);
  EXPECT_EQ(copy->files, original->files);
}

TEST(ProblemCopy, SharedIncludesAboveTheFolderStayInsideTheRoot) {
  const fs::path root = testing::scratch_path("problem-copy", "shared");
  auto dir = write_problem_files(root, "/x/y/p", {{"problem.toml", "a"}, {"../common/c.h", "c"}});
  ASSERT_TRUE(dir) << dir.status().to_string();
  EXPECT_EQ(dir.value(), root / "problem" / "p");
  EXPECT_EQ(testing::slurp(root / "problem" / "common" / "c.h"), "c");
  // A folder too short for the ".." it needs gets made-up names above it.
  auto short_dir =
      write_problem_files(root / "s", "p", {{"../../c.h", "c"}, {"problem.toml", "a"}});
  ASSERT_TRUE(short_dir) << short_dir.status().to_string();
  EXPECT_EQ(short_dir.value(), root / "s" / "problem" / "up1" / "p");
  EXPECT_EQ(testing::slurp(root / "s" / "problem" / "c.h"), "c");
}

TEST(ProblemCopy, RefusesPathsThatLeaveTheRoot) {
  const fs::path root = testing::scratch_path("problem-copy", "hostile");
  for (const std::string bad : {"/etc/x", "a/../../x", "../", "./x"}) {
    auto dir = write_problem_files(root, "/p", {{"problem.toml", "a"}, {bad, "evil"}});
    ASSERT_FALSE(dir) << bad;
    EXPECT_THAT(dir.status().message(), HasSubstr("problem file \"" + bad + "\""));
  }
  std::string deep;
  for (int i = 0; i <= kMaxProblemLevelsUp; ++i) deep += "../";
  EXPECT_FALSE(write_problem_files(root, "/p", {{deep + "x", "evil"}}));
  EXPECT_FALSE(fs::exists(root / "problem"));
}

TEST(ProblemCopy, PrivateFolderIsRemovedWithItsLastPointer) {
  fs::path where;
  {
    auto folder = make_private_folder("kernelarc-test");
    ASSERT_TRUE(folder) << folder.status().to_string();
    where = *folder.value();
    EXPECT_TRUE(fs::is_directory(where));
    EXPECT_EQ((fs::status(where).permissions() & fs::perms::group_all), fs::perms::none);
  }
  EXPECT_FALSE(fs::exists(where));
}

}  // namespace
}  // namespace arc::problem
