// Damage to the write-ahead log itself, the file RocksDB replays on open: a truncation or a
// flipped byte never yields a shorter log that reads as whole. The open fails with
// corruption naming the first missing seq (the acknowledged-seq mark, storage/acked_mark.h)
// or RocksDB's own WAL error, read-only and writable alike, and a writable open changes
// nothing on disk first.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/codec.h"
#include "storage/acked_mark.h"
#include "storage/journal.h"
#include "tests/events/sample_events.h"
#include "tests/storage/test_dir.h"

namespace arc::storage {
namespace {

namespace fs = std::filesystem;
using events::testing::all_payload_types;
using events::testing::sample_event;
using testing::TempDir;

// A log of `n` events left in its write-ahead log (small enough never to be flushed).
void write_log(const std::string& path, uint64_t n) {
  auto j = Journal::open(path, {});
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  ASSERT_TRUE(j.value()->set_campaign("wal-damage").is_ok());
  const auto types = all_payload_types();
  for (uint64_t i = 0; i < n; ++i) {
    events::Event e = sample_event(types[i % types.size()], static_cast<int>(i));
    ASSERT_TRUE(j.value()->append(e).ok());
  }
  ASSERT_TRUE(j.value()->sync().is_ok());
}

fs::path wal_of(const std::string& path) {
  fs::path best;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.path().extension() == ".log" &&
        (best.empty() || fs::file_size(e.path()) > fs::file_size(best))) {
      best = e.path();
    }
  }
  return best;
}

Result<std::unique_ptr<Journal>> reopen(const std::string& path, bool read_only) {
  JournalOptions o;
  o.read_only = read_only;
  o.create_if_missing = false;
  return Journal::open(path, o);
}

TEST(WalDamage, TheMarkFollowsEveryAppend) {
  TempDir dir;
  write_log(dir.path(), 30);
  auto mark = AckedMark::read(dir.path());
  ASSERT_TRUE(mark.ok()) << mark.status().to_string();
  ASSERT_TRUE(mark.value().has_value());
  EXPECT_EQ(*mark.value(), 30u);
  auto j = reopen(dir.path(), true);
  ASSERT_TRUE(j.ok()) << j.status().to_string();
  EXPECT_EQ(j.value()->last_seq(), 30u);
}

TEST(WalDamage, ATruncatedWalIsCorruptionNamingTheFirstMissingSeq) {
  for (bool read_only : {true, false}) {
    TempDir dir;
    write_log(dir.path(), 200);
    const fs::path wal = wal_of(dir.path());
    ASSERT_FALSE(wal.empty()) << "no write-ahead log in " << dir.path();
    fs::resize_file(wal, fs::file_size(wal) / 2);
    const auto size_before = fs::file_size(wal);
    auto j = reopen(dir.path(), read_only);
    ASSERT_FALSE(j.ok()) << "a log cut in half opened (read_only " << read_only << ")";
    EXPECT_EQ(j.status().code(), Status::Code::kCorruption) << j.status().to_string();
    EXPECT_NE(j.status().message().find("acknowledged events up to seq 200"), std::string::npos)
        << j.status().message();
    EXPECT_NE(j.status().message().find("is the first missing"), std::string::npos)
        << j.status().message();
    EXPECT_EQ(fs::file_size(wal), size_before) << "the refused open rewrote the log";
  }
}

TEST(WalDamage, AFlippedByteInTheWalIsCorruption) {
  for (bool read_only : {true, false}) {
    TempDir dir;
    write_log(dir.path(), 200);
    const fs::path wal = wal_of(dir.path());
    ASSERT_FALSE(wal.empty());
    {
      std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
      const auto at = static_cast<std::streamoff>(fs::file_size(wal) / 3);
      f.seekg(at);
      char c = 0;
      f.read(&c, 1);
      c = static_cast<char>(c ^ 0x5a);
      f.seekp(at);
      f.write(&c, 1);
    }
    auto j = reopen(dir.path(), read_only);
    EXPECT_FALSE(j.ok()) << "a log with a flipped WAL byte opened (read_only " << read_only << ")";
    if (!j.ok()) {
      EXPECT_EQ(j.status().code(), Status::Code::kCorruption) << j.status().to_string();
    }
  }
}

TEST(WalDamage, ADamagedMarkIsCorruptionNamingTheFile) {
  TempDir dir;
  write_log(dir.path(), 5);
  {
    std::fstream f(dir.path() + "/ACKED", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('\x7f');
  }
  auto j = reopen(dir.path(), true);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Status::Code::kCorruption);
  EXPECT_NE(j.status().message().find("ACKED"), std::string::npos) << j.status().message();
}

TEST(WalDamage, ADeletedMarkIsCorruptionNotAnOldLog) {
  // A log written with a mark says so in its meta: without the file, a lost tail could not be
  // told, so the open is refused instead of treating it as a log from before marks existed.
  for (bool read_only : {true, false}) {
    TempDir dir;
    write_log(dir.path(), 12);
    fs::remove(fs::path(dir.path()) / "ACKED");
    auto j = reopen(dir.path(), read_only);
    ASSERT_FALSE(j.ok()) << "a log without its mark opened (read_only " << read_only << ")";
    EXPECT_EQ(j.status().code(), Status::Code::kCorruption);
    EXPECT_NE(j.status().message().find("ACKED is missing"), std::string::npos)
        << j.status().message();
  }
}

}  // namespace
}  // namespace arc::storage
