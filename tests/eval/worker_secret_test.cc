// The workers' shared secret (eval/worker_secret.h): only a file its owner alone may read and
// write, holding enough secret, is accepted; a new one is created with mode 0600 and never
// overwrites another.
#include "eval/worker_secret.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/scratch.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void write(const fs::path& p, const std::string& text, fs::perms mode) {
  std::ofstream(p) << text;
  fs::permissions(p, mode);
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return st.st_mode & 0777;
}

const fs::perms kOwnerOnly = fs::perms::owner_read | fs::perms::owner_write;

TEST(WorkerSecret, NewSecretIsSixtyFourHexDigitsInAnOwnerOnlyFile) {
  const fs::path p = testing::scratch_path("secret", "new") / "sub" / "worker.secret";
  ASSERT_TRUE(write_new_worker_secret(p));
  EXPECT_EQ(mode_of(p), 0600u);
  auto secret = read_worker_secret(p);
  ASSERT_TRUE(secret) << secret.status().to_string();
  EXPECT_EQ(secret->size(), 64u);
  EXPECT_EQ(secret->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(testing::slurp(p), secret.value() + "\n");
}

TEST(WorkerSecret, NeverOverwritesAnExistingFile) {
  const fs::path p = testing::scratch_path("secret", "exists");
  write(p, std::string(40, 'k'), kOwnerOnly);
  Status s = write_new_worker_secret(p);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr(p.string()));
  EXPECT_THAT(s.message(), HasSubstr("refusing to overwrite"));
  EXPECT_EQ(testing::slurp(p), std::string(40, 'k'));
}

TEST(WorkerSecret, RefusesAFileGroupOrOthersMayRead) {
  const fs::path p = testing::scratch_path("secret", "readable");
  write(p, std::string(64, 'a'), kOwnerOnly | fs::perms::group_read);
  auto secret = read_worker_secret(p);
  ASSERT_FALSE(secret);
  EXPECT_THAT(secret.status().message(), HasSubstr(p.string()));
  EXPECT_THAT(secret.status().message(), HasSubstr("chmod 600"));
  fs::permissions(p, kOwnerOnly | fs::perms::others_write);
  EXPECT_FALSE(read_worker_secret(p));
  fs::permissions(p, kOwnerOnly);
  EXPECT_TRUE(read_worker_secret(p));
}

TEST(WorkerSecret, RefusesAShortSecretAndStripsTheTrailingNewline) {
  const fs::path p = testing::scratch_path("secret", "short");
  write(p, std::string(31, 's') + "\n", kOwnerOnly);
  auto secret = read_worker_secret(p);
  ASSERT_FALSE(secret);
  EXPECT_THAT(secret.status().message(), HasSubstr("at least 32 characters"));
  EXPECT_THAT(secret.status().message(), HasSubstr(p.string()));
  write(p, std::string(32, 's') + "\n", kOwnerOnly);
  auto ok = read_worker_secret(p);
  ASSERT_TRUE(ok) << ok.status().to_string();
  EXPECT_EQ(ok.value(), std::string(32, 's'));
}

TEST(WorkerSecret, RefusesAMissingFileOrAFolder) {
  const fs::path p = testing::scratch_path("secret", "missing");
  auto missing = read_worker_secret(p);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.status().message(), HasSubstr(p.string()));
  fs::create_directories(p);
  fs::permissions(p, fs::perms::owner_all);
  auto folder = read_worker_secret(p);
  ASSERT_FALSE(folder);
  EXPECT_THAT(folder.status().message(), HasSubstr("regular file"));
}

// Sets an environment variable for its lifetime (unset: null), restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(WorkerSecret, DefaultPathFollowsTheEnvironment) {
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv file("ARC_WORKER_SECRET_FILE", "/somewhere/s");
    EXPECT_EQ(default_worker_secret_path(), fs::path("/somewhere/s"));
  }
  ScopedEnv file("ARC_WORKER_SECRET_FILE", nullptr);
  {
    ScopedEnv config("XDG_CONFIG_HOME", "/cfg");
    EXPECT_EQ(default_worker_secret_path(), fs::path("/cfg/kernelarc/worker.secret"));
  }
  ScopedEnv config("XDG_CONFIG_HOME", nullptr);
  EXPECT_EQ(default_worker_secret_path(), fs::path("/home/u/.config/kernelarc/worker.secret"));
}

}  // namespace
}  // namespace arc::eval
