// Journal::holds_no_events: tells a log that a run killed while starting left behind (nothing
// in it was ever acknowledged) from one that holds events, without writing to it.
#include <algorithm>
#include <filesystem>

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "storage/acked_mark.h"
#include "storage/journal.h"

namespace arc::storage {

Result<bool> Journal::holds_no_events(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) return true;
  auto mark = AckedMark::read(path);
  if (!mark) return Status::corruption("journal " + path + ": " + mark.status().message());
  if (mark.value() && *mark.value() > 0) return false;
  // RocksDB names CURRENT last when it creates a database: without it nothing was written.
  if (!fs::exists(fs::path(path) / "CURRENT", ec)) return true;
  std::vector<std::string> families;
  rocksdb::DBOptions o;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(o, path, &families);
  if (!s.ok()) {
    return Status::corruption("journal " + path +
                              ": not a readable RocksDB database: " + s.ToString());
  }
  // Events are written only once the journal has made its column families.
  if (std::find(families.begin(), families.end(), "events") == families.end()) return true;
  JournalOptions ro;
  ro.read_only = true;
  ro.create_if_missing = false;
  auto j = Journal::open(path, ro);
  if (!j) return j.status();
  return j.value()->last_seq() == 0;
}

}  // namespace arc::storage
