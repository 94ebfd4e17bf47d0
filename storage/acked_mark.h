#pragma once
// The last acknowledged seq of a log, kept beside it in <log>/ACKED, where a damaged or
// truncated RocksDB write-ahead log cannot take it. RocksDB's recovery may silently stop at the
// first damaged WAL record; a log whose recovered last seq is below its mark has lost events,
// and the journal refuses to open it (journal.h). Format: 8-byte little-endian seq, then the
// CRC32C of those 8 bytes, little-endian, in 4 bytes.
//
// The journal writes the mark after each acknowledged append under durability kSync, and at
// sync() and close under kBatch, without an fsync of its own until sync() and close: it may lag
// behind the log (after a kill under kBatch, or a power loss), never run ahead of it.
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace arc::storage {

class AckedMark {
 public:
  // The mark of the log in folder `dir`: nothing when there is none (a log written before
  // marks existed, or nothing appended yet); corruption naming the file when it cannot be read
  // back as written.
  static Result<std::optional<uint64_t>> read(const std::string& dir);

  AckedMark() = default;
  ~AckedMark();
  AckedMark(const AckedMark&) = delete;
  AckedMark& operator=(const AckedMark&) = delete;

  // Writes go to <dir>/ACKED, created by the first store().
  Status open(const std::string& dir);
  // Records `seq` as acknowledged (no fsync). No-op before open().
  Status store(uint64_t seq);
  // Makes the last store durable.
  Status sync();

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace arc::storage
