// Running out of disk in the middle of a campaign: arcd exits 3 naming the file and the OS
// error, acknowledges nothing it could not write, and leaves a log that verifies and that
// `arcd resume` finishes once there is room again. Real arcd processes, real RocksDB: the disk
// fills for real (a small tmpfs, where the test may mount one), or every file is capped with
// RLIMIT_FSIZE (anywhere).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include "replay/summary.h"
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

// A 60-candidate campaign against recorded measurements: its log is ~240 KB.
std::vector<std::string> run_args(const fs::path& run_dir) {
  return {kArcd.string(),
          "run",
          kCampaign.string(),
          "--run-dir",
          run_dir.string(),
          "--budget",
          "60",
          "--quiet",
          "--evaluator",
          "replay",
          "--replay-from",
          kMeasurements.string()};
}

std::vector<std::string> resume_args(const fs::path& run_dir) {
  return {kArcd.string(), "resume", run_dir.string(), "--quiet",
          "--evaluator",  "replay", "--replay-from",  kMeasurements.string()};
}

// What the log holds: its events, read the way arc-replay reads them.
std::vector<events::Event> log_of(const fs::path& run_dir) {
  auto log = replay::read_run(run_dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? log.value() : std::vector<events::Event>{};
}

bool stopped(const std::vector<events::Event>& log) {
  return !log.empty() && log.back().payload.type == fb::Payload::CampaignStopped;
}

// The run stopped mid-campaign on a failed write: exit 3, the log's path and the OS error
// named, the acknowledged events verifiable, then a resume with room finishes the campaign.
void expect_clean_stop_then_resume(const fs::path& run_dir, const testing::ProcessResult& r,
                                   const std::string& os_error,
                                   const std::function<void()>& make_room) {
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find((run_dir / "log").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(os_error), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Assertion"), std::string::npos) << r.err;

  const auto partial = log_of(run_dir);
  ASSERT_FALSE(partial.empty());
  EXPECT_EQ(partial.front().payload.type, fb::Payload::CampaignStarted);
  EXPECT_FALSE(stopped(partial)) << "the disk was meant to fill mid-campaign";
  auto verify = run_process({kArcReplay.string(), "verify", run_dir.string()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;

  make_room();
  auto resumed = run_process(resume_args(run_dir));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const auto whole = log_of(run_dir);
  ASSERT_GT(whole.size(), partial.size());
  EXPECT_TRUE(stopped(whole));
  // Resume continued the log: what was there before is there unchanged.
  for (size_t i = 0; i < partial.size(); ++i) {
    EXPECT_EQ(events::encode_frame(whole[i]), events::encode_frame(partial[i])) << "seq " << i + 1;
  }
  verify = run_process({kArcReplay.string(), "verify", run_dir.string()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  EXPECT_TRUE(fs::exists(run_dir / "summary.json"));
  EXPECT_TRUE(fs::exists(run_dir / "report.md"));
}

TEST(StorageFault, FileSizeLimitMidCampaignExits3AndTheLogStillVerifies) {
  const fs::path dir = testing::scratch_path("storage-fault", "fsize");
  // Past 96 KB a write fails with EFBIG ("File too large"): the write-ahead log reaches it
  // after a few dozen candidates.
  auto r = run_process(run_args(dir), 96 * 1024);
  expect_clean_stop_then_resume(dir, r, "File too large", [] {});
  fs::remove_all(dir.parent_path());
}

// A tmpfs of 160 KB under the scratch folder; unmounted when the test ends.
class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_point_ = testing::scratch_path("storage-fault", "tmpfs");
    fs::create_directories(mount_point_);
    if (::mount("arc-full-disk", mount_point_.c_str(), "tmpfs", 0, "size=160k") != 0) {
      GTEST_SKIP() << "cannot mount a small tmpfs here (" << std::strerror(errno)
                   << "; needs root): the RLIMIT_FSIZE case covers a failed write instead";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(mount_point_.parent_path(), ec);
  }
  bool grow(const char* size) {
    const std::string options = std::string("size=") + size;
    return ::mount("arc-full-disk", mount_point_.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) ==
           0;
  }

  fs::path mount_point_;
  bool mounted_ = false;
};

TEST_F(FullDisk, NoSpaceMidCampaignExits3AndResumeFinishesOnceThereIsRoom) {
  const fs::path dir = mount_point_ / "run";
  auto r = run_process(run_args(dir));
  expect_clean_stop_then_resume(dir, r, "No space left on device",
                                [this] { ASSERT_TRUE(grow("8m")) << std::strerror(errno); });
}

TEST_F(FullDisk, NoSpaceForTheOutputsExits3NamingTheFileAndResumeWritesThem) {
  // Room for the whole log, not for the outputs after it: the campaign stops, its outputs
  // fail, and a resume with room writes them without touching the log.
  ASSERT_TRUE(grow("8m"));
  const fs::path dir = mount_point_ / "run";
  auto args = run_args(dir);
  args[6] = "20";  // --budget
  auto full = run_process(args);
  ASSERT_EQ(full.code, 0) << full.err;
  const auto log = log_of(dir);
  fs::remove_all(dir / "best");
  fs::remove(dir / "report.md");
  fs::remove(dir / "summary.json");
  // Fill the disk but for two pages: room for the run's lock file and not for the outputs.
  struct statvfs fs_stat {};
  ASSERT_EQ(::statvfs(mount_point_.c_str(), &fs_stat), 0);
  const uint64_t free_bytes = static_cast<uint64_t>(fs_stat.f_bavail) * fs_stat.f_bsize;
  ASSERT_GT(free_bytes, 8192u);
  {
    std::ofstream filler(mount_point_ / "filler", std::ios::binary);
    const std::string block(free_bytes - 8192, 'x');
    filler.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  auto r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find(dir.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  fs::remove(mount_point_ / "filler");
  r = run_process(resume_args(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "summary.json"));
  EXPECT_TRUE(fs::exists(dir / "report.md"));
  EXPECT_TRUE(fs::is_directory(dir / "best"));
  EXPECT_EQ(log_of(dir).size(), log.size());
}

}  // namespace
}  // namespace arc
