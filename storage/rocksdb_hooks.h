#pragma once
// What the journal plugs into RocksDB so that a storage error (a full disk, a read-only or
// immutable folder, EIO) ends in a Status, never in an abort. Debian's RocksDB keeps its
// assertions: once one of its file writers has failed, any later use of that writer (another
// line in its own info log, a WAL sync, an automatic recovery that retries the write) aborts
// the process. Hence:
//   - an info log that writes with plain write(2) and drops what it cannot write;
//   - a listener that turns RocksDB's automatic recovery from background errors off: the
//     journal stops at the first failed write instead (journal.h, write_failure()).
#include <memory>
#include <string>

namespace rocksdb {
class EventListener;
class Logger;
}  // namespace rocksdb

namespace arc::storage {

// RocksDB's diagnostics at WARN and above, appended to `file` (created when needed). A line that
// cannot be written is dropped; with an empty `file` every line is dropped (read-only opens
// write nothing beside the log).
std::shared_ptr<rocksdb::Logger> make_info_log(const std::string& file);

// Declines every automatic recovery RocksDB offers after a background error.
std::shared_ptr<rocksdb::EventListener> make_no_auto_recovery_listener();

}  // namespace arc::storage
