#pragma once
// The campaign log: an append-only RocksDB database.
//   column family "events":    key = 8-byte campaign key + big-endian seq, value = event frame
//   column family "artifacts": key = SHA-256 hex of the blob, value = blob (ArtifactStore)
//   column family "meta":      the campaign id (key "campaign") and small facts put_meta()
//                              writes (e.g. "summary"); the last seq is recovered from the
//                              last event key on open and checked against <log>/ACKED, the
//                              last acknowledged seq (storage/acked_mark.h): an open that
//                              recovers fewer events fails with corruption
// Events are written once and never updated or deleted. Seqs start at 1 and are dense.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "events/codec.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace arc::storage {

enum class Durability {
  kSync,   // every append is fsynced before it is acknowledged (default)
  kBatch,  // appends reach the OS (WAL write) before they are acknowledged, so a killed
           // process loses nothing acknowledged; fsync happens at sync() and on close, so a
           // power loss may lose what came after the last sync()
};

struct JournalOptions {
  Durability durability = Durability::kSync;
  bool create_if_missing = true;
  bool read_only = false;  // open without writing (arc-replay); no append allowed
  // With read_only: follow a log that a live process is still writing. The journal opens as a
  // RocksDB secondary instance (scratch files in a temporary folder, removed on close) and
  // wait_for() catches up with the writer. Without it a read-only journal is a snapshot taken
  // at open, meant for finished logs (RocksDB leaves a plain read-only open of a database
  // that another process has open for writing undefined).
  bool follow = false;
  // The log lives in this process's memory, not in RocksDB: nothing is written to disk and
  // everything is gone when the journal closes, so durability has nothing to do. Reads verify
  // every frame as they do from disk. For scratch campaigns whose events are consumed as they
  // happen (arc-replay ablate); `path` only names the log. Default off.
  bool in_memory = false;
};

// One stored event with the verified frame it came from.
struct StoredEvent {
  uint64_t seq = 0;
  std::string frame;  // CRC + envelope bytes as stored
};

class Journal {
 public:
  static Result<std::unique_ptr<Journal>> open(const std::string& path,
                                               const JournalOptions& options);
  // Whether the log at `path` holds no event and never acknowledged one, so that removing it
  // loses nothing: no such folder; a database whose creation was cut short (no CURRENT file,
  // or no "events" column family yet); or a whole one without events and with no
  // acknowledged-seq mark above 0. Damage that could hide events is returned as an error,
  // never taken for emptiness. Opens nothing for writing (storage/empty_log.cc).
  static Result<bool> holds_no_events(const std::string& path);

  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Campaign this journal writes; set once, before the first append (a journal holds one
  // campaign; the campaign id is recorded in meta).
  Status set_campaign(const std::string& campaign_id);
  const std::string& campaign() const { return campaign_; }

  // Assigns the next seq, stamps e.seq and e.campaign (and wall_time_ns if 0), writes it and
  // returns the seq once the durability policy is met.
  Result<uint64_t> append(events::Event& e);
  // Appends several events in one write (one fsync under kSync). With `frames`, it receives
  // the frame written for each event, in order (replacing what it held).
  Result<uint64_t> append_all(std::vector<events::Event>& batch,
                              std::vector<std::string>* frames = nullptr);
  // Forces everything appended so far to stable storage.
  Status sync();

  // The first write to the disk that failed (an append, sync, artifact, meta or the
  // acknowledged-seq mark), naming the path and the OS error; ok while none has. From then on
  // every write returns it without touching the disk: nothing after a failed write is
  // acknowledged, and RocksDB's writers are not used again after an I/O error (they abort the
  // process when they are). What was acknowledged before stays readable: open the log again.
  Status write_failure() const;

  uint64_t last_seq() const { return last_seq_; }

  // Reads events with from <= seq <= to (to = 0: up to the end), verifying each. Stops with a
  // Corruption status naming the seq of the first bad record.
  Status read(uint64_t from, uint64_t to,
              const std::function<bool(uint64_t seq, const events::Event&)>& visit) const;
  // As read(), but hands out the verified envelope without unpacking it.
  Status read_raw(uint64_t from, uint64_t to,
                  const std::function<bool(uint64_t seq, const fb::Envelope&)>& visit) const;
  Result<std::vector<events::Event>> read_all() const;

  // Blocks until an event with seq > after exists or the timeout passes; returns last_seq().
  // Appends from this process wake waiters at once; other processes are polled (read_only
  // with follow). Safe to call from any thread of a writable journal; a read-only journal
  // with follow refreshes its view here, so use it from one thread.
  uint64_t wait_for(uint64_t after, int timeout_ms);

  // Artifacts (content-addressed): returns the SHA-256 hex of the blob.
  Result<std::string> put_artifact(std::string_view blob);
  // Verifies that the blob still hashes to its key.
  Result<std::string> get_artifact(const std::string& hash) const;
  bool has_artifact(const std::string& hash) const;

  // Meta: small key/value facts about the campaign (e.g. "summary").
  Status put_meta(const std::string& key, const std::string& value);
  Result<std::string> get_meta(const std::string& key) const;

  // For tests of damage detection: the raw RocksDB handle and the events column family.
  rocksdb::DB* raw_db_for_testing() { return db_; }
  rocksdb::ColumnFamilyHandle* events_cf_for_testing() { return events_cf_; }
  rocksdb::ColumnFamilyHandle* artifacts_cf_for_testing() { return artifacts_cf_; }
  std::string event_key_for_testing(uint64_t seq) const;

 private:
  Journal() = default;
  struct State;
  Status open_db(const std::string& path);
  Status restore_campaign();
  Status recover_last_seq();
  Status append_locked(events::Event* events, size_t n, std::vector<std::string>* frames);
  // Records `s` as the write failure when it is the first; returns the recorded failure.
  Status fail_writes(Status s);
  // in_memory: artifacts and meta, kept in State.
  enum class MemoryTable { kArtifacts, kMeta };
  bool memory_find(MemoryTable table, const std::string& key, std::string* value) const;
  void memory_put(MemoryTable table, const std::string& key, std::string value);
  // Verifies events from <= seq <= to in order; visit returns false to stop early.
  Status scan(uint64_t from, uint64_t to,
              const std::function<bool(uint64_t seq, const fb::Envelope& env)>& visit) const;

  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* events_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* artifacts_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  JournalOptions options_;
  std::string campaign_;
  std::string campaign_key_;           // 8 bytes
  std::atomic<uint64_t> last_seq_{0};  // read by waiters on other threads
  std::unique_ptr<State> state_;
};

}  // namespace arc::storage
