// The campaign log on RocksDB. See journal.h for the layout. Decisions worth knowing:
// - The event key is 8 bytes of SHA-256(campaign id) + big-endian seq, so one campaign's
//   events are contiguous and in seq order, and the last seq is one SeekForPrev away.
// - append() reuses one FlatBufferBuilder, frame string and WriteBatch under a mutex, so a
//   steady stream of appends allocates nothing in this file; kBatch acknowledges after
//   RocksDB's WAL write() (survives a killed process), kSync after its fdatasync.
// - Every read copies the stored frame so the envelope sits 8-byte aligned (FlatBuffers reads
//   scalars in place), verifies CRC + FlatBuffers, and checks the envelope's own seq and
//   campaign against the key and that seqs are dense.
#include "storage/journal.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "base/sha256.h"
#include "storage/acked_mark.h"
#include "storage/rocksdb_hooks.h"

namespace arc::storage {
namespace {

constexpr char kEventsCf[] = "events";
constexpr char kArtifactsCf[] = "artifacts";
constexpr char kMetaCf[] = "meta";
constexpr char kCampaignMetaKey[] = "campaign";
// Set in every log whose journal keeps an acknowledged-seq mark (after the mark file exists):
// such a log without its mark lost it.
constexpr char kAckedMarkMetaKey[] = "acked_mark";
constexpr size_t kCampaignKeyBytes = 8;
constexpr size_t kEventKeyBytes = kCampaignKeyBytes + 8;
constexpr size_t kCrcBytes = 4;
// How often a follower asks RocksDB whether the writer has appended.
constexpr auto kFollowPoll = std::chrono::milliseconds(10);

void put_be64(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xFFu);
    v >>= 8;
  }
}

uint64_t get_be64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string campaign_key_of(const std::string& campaign_id) {
  const std::string hex = sha256_hex(campaign_id);
  std::string key(kCampaignKeyBytes, '\0');
  for (size_t i = 0; i < kCampaignKeyBytes; ++i) {
    key[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return key;
}

std::string event_key(const std::string& campaign_key, uint64_t seq) {
  std::string key(kEventKeyBytes, '\0');
  std::memcpy(key.data(), campaign_key.data(), kCampaignKeyBytes);
  put_be64(key.data() + kCampaignKeyBytes, seq);
  return key;
}

Status from_rocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::ok();
  if (s.IsNotFound()) return Status::not_found(what + ": " + s.ToString());
  if (s.IsCorruption()) return Status::corruption(what + ": " + s.ToString());
  if (s.IsInvalidArgument()) return Status::invalid_argument(what + ": " + s.ToString());
  return Status::io_error(what + ": " + s.ToString());
}

rocksdb::ColumnFamilyOptions cf_options(const std::string& name) {
  rocksdb::ColumnFamilyOptions o;
  if (name == kEventsCf) {
    // Frames are small FlatBuffers already checksummed by us; compressing them costs CPU on
    // the append path for little space.
    o.compression = rocksdb::kNoCompression;
    o.write_buffer_size = 64u << 20;
  } else if (name == kArtifactsCf) {
    // Sources, PTX and compiler logs are text and compress well.
    o.compression = rocksdb::kLZ4Compression;
    o.write_buffer_size = 32u << 20;
  } else {
    o.compression = rocksdb::kNoCompression;
    o.write_buffer_size = 4u << 20;
  }
  return o;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

struct Journal::State {
  std::string path;
  std::string secondary_dir;  // follow mode: RocksDB secondary's scratch folder
  rocksdb::WriteOptions write_options;
  // Serializes appends: seq assignment and the reused encoding buffers below.
  std::mutex append_mu;
  flatbuffers::FlatBufferBuilder fbb{1024};
  std::string frame;
  rocksdb::WriteBatch batch;
  // Guards the last_seq_ update against the waiters' predicate check (no lost wake-ups).
  std::mutex wait_mu;
  std::condition_variable wait_cv;
  // in_memory: the log itself (frame of seq i at i - 1), its artifacts and meta. Readers may
  // run on other threads than the appender, so every access holds memory_mu.
  mutable std::mutex memory_mu;
  std::deque<std::string> memory_frames;
  std::map<std::string, std::string> memory_artifacts;
  std::map<std::string, std::string> memory_meta;
  // On disk and writable: the last acknowledged seq, beside the log (storage/acked_mark.h).
  AckedMark mark;
  // The first failed write (Journal::write_failure()); read from any thread.
  mutable std::mutex failure_mu;
  Status failure;

  std::string where() const { return "journal " + path; }
};

Result<std::unique_ptr<Journal>> Journal::open(const std::string& path,
                                               const JournalOptions& options) {
  if (options.follow && !options.read_only) {
    return Status::invalid_argument("journal " + path + ": follow requires read_only");
  }
  if (options.in_memory && (options.read_only || !options.create_if_missing)) {
    return Status::invalid_argument("journal " + path +
                                    ": an in-memory journal starts empty; expected "
                                    "create_if_missing and not read_only");
  }
  std::unique_ptr<Journal> j(new Journal());
  j->options_ = options;
  j->state_ = std::make_unique<State>();
  j->state_->path = path;
  j->state_->write_options.sync = options.durability == Durability::kSync;
  if (options.in_memory) return j;  // no database: the log starts empty and lives in State
  try {
    auto mark = AckedMark::read(path);
    if (!mark) return Status::corruption("journal " + path + ": " + mark.status().message());
    // A writable open recovers the write-ahead log into the database for good: check first,
    // read-only, that recovery would keep every acknowledged event.
    if (!options.read_only && mark.value()) {
      JournalOptions check;
      check.read_only = true;
      check.create_if_missing = false;
      if (auto probe = Journal::open(path, check); !probe) return probe.status();
    }
    if (auto s = j->open_db(path); !s) return s;
    if (auto s = j->restore_campaign(); !s) return s;
    if (mark.value() && j->last_seq_.load() < *mark.value()) {
      return Status::corruption("journal " + path + ": damaged: it acknowledged events up to seq " +
                                std::to_string(*mark.value()) + " but holds them only up to seq " +
                                std::to_string(j->last_seq_.load()) + "; seq " +
                                std::to_string(j->last_seq_.load() + 1) +
                                " is the first missing (a damaged or truncated write-ahead log)");
    }
    if (!mark.value()) {
      if (auto flag = j->get_meta(kAckedMarkMetaKey); flag.ok()) {
        return Status::corruption("journal " + path + ": damaged: its acknowledged-seq mark " +
                                  path + "/ACKED is missing (the log was written with one), so " +
                                  "a lost tail of the log could not be told");
      }
    }
    if (!options.read_only) {
      if (auto s = j->state_->mark.open(path); !s) return s;
      if (!mark.value()) {
        // The mark exists (synced) before the log says it has one.
        if (auto s = j->state_->mark.store(j->last_seq_.load()); !s) return s;
        if (auto s = j->state_->mark.sync(); !s) return s;
        if (auto s = j->put_meta(kAckedMarkMetaKey, "1"); !s) return s;
      }
    }
  } catch (const std::exception& e) {
    return Status::internal("journal " + path + ": open: " + e.what());
  }
  return j;
}

Status Journal::open_db(const std::string& path) {
  const std::string where = state_->where();
  rocksdb::DBOptions dbo;
  dbo.create_if_missing = options_.create_if_missing && !options_.read_only;
  dbo.create_missing_column_families = !options_.read_only;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  dbo.keep_log_file_num = 4;
  // A torn last record (a write that was never acknowledged) is dropped; damage anywhere else
  // fails the open. Damage to the last records is caught by the acknowledged-seq mark.
  dbo.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  dbo.max_background_jobs = 2;
  // A storage error stops the journal at the first failed write; RocksDB must neither retry
  // nor write its own info log with the writer that failed (storage/rocksdb_hooks.h).
  dbo.info_log = make_info_log(options_.read_only ? std::string()
                                                  : (std::filesystem::path(path) / "LOG").string());
  dbo.listeners.push_back(make_no_auto_recovery_listener());
  dbo.max_bgerror_resume_count = 0;
  if (options_.follow) dbo.max_open_files = -1;  // required by secondary instances

  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  std::vector<std::string> existing;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(dbo, path, &existing);
  if (!ls.ok()) {
    if (options_.read_only || !dbo.create_if_missing) {
      if (!exists) return Status::not_found(where + ": no such directory");
      return from_rocks(ls, where + ": not a readable RocksDB database");
    }
    existing.clear();  // a new database
  }

  const std::vector<std::string> required = {kEventsCf, kArtifactsCf, kMetaCf};
  std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName};
  if (options_.read_only) {
    std::vector<std::string> missing;
    for (const auto& r : required) {
      if (std::find(existing.begin(), existing.end(), r) == existing.end()) missing.push_back(r);
    }
    if (!missing.empty()) {
      return Status::corruption(where + ": missing column famil" +
                                (missing.size() == 1 ? "y \"" : "ies \"") + join(missing) +
                                "\" (found: " + join(existing) +
                                "); not a KernelArc log, or a damaged one");
    }
    names.insert(names.end(), required.begin(), required.end());
  } else {
    // A writable open must name every column family the database has.
    for (const auto& e : existing) {
      if (std::find(names.begin(), names.end(), e) == names.end()) names.push_back(e);
    }
    for (const auto& r : required) {
      if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r);
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : names) descs.emplace_back(n, cf_options(n));

  rocksdb::Status s;
  if (!options_.read_only) {
    s = rocksdb::DB::Open(dbo, path, descs, &handles_, &db_);
  } else if (!options_.follow) {
    s = rocksdb::DB::OpenForReadOnly(dbo, path, descs, &handles_, &db_);
  } else {
    std::string tmpl = (std::filesystem::temp_directory_path() / "arc-follow-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Status::io_error(
          where + ": cannot create a scratch folder for following: " + std::strerror(errno));
    }
    state_->secondary_dir = tmpl;
    s = rocksdb::DB::OpenAsSecondary(dbo, path, tmpl, descs, &handles_, &db_);
  }
  if (!s.ok()) {
    db_ = nullptr;
    handles_.clear();
    return from_rocks(s, where + ": open failed");
  }
  for (auto* h : handles_) {
    if (h->GetName() == kEventsCf) events_cf_ = h;
    if (h->GetName() == kArtifactsCf) artifacts_cf_ = h;
    if (h->GetName() == kMetaCf) meta_cf_ = h;
  }
  if (events_cf_ == nullptr || artifacts_cf_ == nullptr || meta_cf_ == nullptr) {
    return Status::internal(where + ": column families not opened");
  }
  return Status::ok();
}

Status Journal::restore_campaign() {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, kCampaignMetaKey, &value);
  if (s.IsNotFound()) return Status::ok();  // set_campaign() has not run yet
  if (!s.ok()) return from_rocks(s, state_->where() + ": reading meta \"campaign\"");
  campaign_ = value;
  campaign_key_ = campaign_key_of(campaign_);
  return recover_last_seq();
}

Status Journal::recover_last_seq() {
  if (campaign_key_.empty()) return Status::ok();
  if (options_.in_memory) {
    uint64_t last = 0;
    {
      std::lock_guard<std::mutex> lk(state_->memory_mu);
      last = state_->memory_frames.size();
    }
    std::lock_guard<std::mutex> lk(state_->wait_mu);
    last_seq_.store(last);
    return Status::ok();
  }
  std::string probe = campaign_key_ + std::string(8, '\xff');
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), events_cf_));
  it->SeekForPrev(probe);
  uint64_t last = 0;
  if (it->Valid()) {
    rocksdb::Slice k = it->key();
    if (k.size() == kEventKeyBytes &&
        std::memcmp(k.data(), campaign_key_.data(), kCampaignKeyBytes) == 0) {
      last = get_be64(k.data() + kCampaignKeyBytes);
    }
  }
  if (!it->status().ok()) return from_rocks(it->status(), state_->where() + ": finding last seq");
  {
    std::lock_guard<std::mutex> lk(state_->wait_mu);
    last_seq_.store(last);
  }
  state_->wait_cv.notify_all();
  return Status::ok();
}

Journal::~Journal() {
  if (db_ != nullptr) {
    // A destructor cannot report; callers that need the verdict call sync() before. After a
    // failed write nothing more is written (write_failure()).
    if (!options_.read_only && write_failure().is_ok() && db_->FlushWAL(true).ok()) {
      (void)state_->mark.store(last_seq_.load());  // made durable as the mark closes
    }
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    handles_.clear();
    db_->Close().PermitUncheckedError();
    delete db_;
    db_ = nullptr;
  }
  if (state_ && !state_->secondary_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(state_->secondary_dir, ec);
  }
}

Status Journal::write_failure() const {
  std::lock_guard<std::mutex> lk(state_->failure_mu);
  return state_->failure;
}

Status Journal::fail_writes(Status s) {
  std::lock_guard<std::mutex> lk(state_->failure_mu);
  if (state_->failure.is_ok()) state_->failure = std::move(s);
  return state_->failure;
}

Status Journal::set_campaign(const std::string& campaign_id) {
  if (campaign_id.empty()) {
    return Status::invalid_argument(state_->where() + ": campaign id is empty");
  }
  std::lock_guard<std::mutex> lk(state_->append_mu);
  if (campaign_ == campaign_id) return Status::ok();
  if (!campaign_.empty()) {
    return Status::invalid_argument(state_->where() + " holds campaign \"" + campaign_ +
                                    "\"; cannot switch it to \"" + campaign_id + "\"");
  }
  if (options_.read_only) {
    return Status::invalid_argument(state_->where() + " is read-only and records no campaign yet");
  }
  if (options_.in_memory) {
    std::lock_guard<std::mutex> mk(state_->memory_mu);
    state_->memory_meta[kCampaignMetaKey] = campaign_id;
  } else {
    if (auto f = write_failure(); !f) return f;
    rocksdb::WriteOptions wo;
    wo.sync = true;  // the campaign id is what makes the events findable again
    rocksdb::Status s = db_->Put(wo, meta_cf_, kCampaignMetaKey, campaign_id);
    if (!s.ok()) return fail_writes(from_rocks(s, state_->where() + ": writing meta \"campaign\""));
  }
  campaign_ = campaign_id;
  campaign_key_ = campaign_key_of(campaign_id);
  return recover_last_seq();
}

Status Journal::append_locked(events::Event* events, size_t n, std::vector<std::string>* frames) {
  State& st = *state_;
  if (options_.read_only) {
    return Status::invalid_argument(st.where() + " is open read-only; append refused");
  }
  if (campaign_.empty()) {
    return Status::invalid_argument(st.where() + ": set_campaign() must come before append");
  }
  if (auto f = write_failure(); !f) return f;
  if (frames != nullptr) frames->clear();
  if (n == 0) return Status::ok();
  st.batch.Clear();
  std::vector<std::string> memory_batch;  // in_memory: the frames, kept once all are valid
  char key[kEventKeyBytes];
  std::memcpy(key, campaign_key_.data(), kCampaignKeyBytes);
  const uint64_t first = last_seq_.load(std::memory_order_relaxed) + 1;
  for (size_t i = 0; i < n; ++i) {
    events::Event& e = events[i];
    if (e.payload.type == fb::Payload::NONE || e.payload.value == nullptr) {
      return Status::invalid_argument(st.where() + ": event from actor \"" + e.actor +
                                      "\" has no payload");
    }
    e.seq = first + i;
    if (e.campaign != campaign_) e.campaign = campaign_;
    if (e.wall_time_ns == 0) {
      e.wall_time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    }
    events::encode_frame_into(e, st.fbb, st.frame);
    if (st.frame.size() - kCrcBytes > events::kMaxEnvelopeBytes) {
      return Status::invalid_argument(st.where() + ": " + events::payload_name(e.payload.type) +
                                      " of " + std::to_string(st.frame.size()) +
                                      " bytes exceeds the envelope limit; store large data "
                                      "as an artifact");
    }
    if (frames != nullptr) frames->push_back(st.frame);
    if (options_.in_memory) {
      memory_batch.push_back(st.frame);
      continue;
    }
    put_be64(key + kCampaignKeyBytes, e.seq);
    rocksdb::Status s = st.batch.Put(events_cf_, rocksdb::Slice(key, kEventKeyBytes), st.frame);
    if (!s.ok()) return from_rocks(s, st.where() + ": batching seq " + std::to_string(e.seq));
  }
  if (options_.in_memory) {
    std::lock_guard<std::mutex> mk(st.memory_mu);
    for (auto& f : memory_batch) st.memory_frames.push_back(std::move(f));
  } else if (rocksdb::Status s = db_->Write(st.write_options, &st.batch); !s.ok()) {
    return fail_writes(from_rocks(s, st.where() + ": append of seq " + std::to_string(first) +
                                         (n > 1 ? ".." + std::to_string(first + n - 1) : "")));
  }
  {
    std::lock_guard<std::mutex> lk(st.wait_mu);
    last_seq_.store(first + n - 1);
  }
  st.wait_cv.notify_all();
  // kSync: the mark follows every append (a write beside an fsync). kBatch: at sync() and
  // close only, so the append path stays one WAL write; the mark then lags, which is safe.
  // The events are in the log then, but a failed mark fails the append: it is not
  // acknowledged, and nothing after it is written.
  if (!st.write_options.sync) return Status::ok();
  if (auto s = st.mark.store(first + n - 1); !s) return fail_writes(s);
  return Status::ok();
}

bool Journal::memory_find(MemoryTable table, const std::string& key, std::string* value) const {
  std::lock_guard<std::mutex> lk(state_->memory_mu);
  const auto& m = table == MemoryTable::kArtifacts ? state_->memory_artifacts : state_->memory_meta;
  auto it = m.find(key);
  if (it == m.end()) return false;
  if (value != nullptr) *value = it->second;
  return true;
}

void Journal::memory_put(MemoryTable table, const std::string& key, std::string value) {
  std::lock_guard<std::mutex> lk(state_->memory_mu);
  auto& m = table == MemoryTable::kArtifacts ? state_->memory_artifacts : state_->memory_meta;
  m[key] = std::move(value);
}

Result<uint64_t> Journal::append(events::Event& e) {
  try {
    std::lock_guard<std::mutex> lk(state_->append_mu);
    if (auto s = append_locked(&e, 1, nullptr); !s) return s;
    return last_seq_.load();
  } catch (const std::exception& ex) {
    return Status::internal(state_->where() + ": append: " + ex.what());
  }
}

Result<uint64_t> Journal::append_all(std::vector<events::Event>& batch,
                                     std::vector<std::string>* frames) {
  try {
    std::lock_guard<std::mutex> lk(state_->append_mu);
    if (auto s = append_locked(batch.data(), batch.size(), frames); !s) {
      if (frames != nullptr) frames->clear();
      return s;
    }
    return last_seq_.load();
  } catch (const std::exception& ex) {
    return Status::internal(state_->where() + ": append_all: " + ex.what());
  }
}

Status Journal::sync() {
  if (options_.read_only || options_.in_memory) return Status::ok();
  std::lock_guard<std::mutex> lk(state_->append_mu);
  if (auto f = write_failure(); !f) return f;
  if (auto s = from_rocks(db_->FlushWAL(true), state_->where() + ": sync"); !s) {
    return fail_writes(s);
  }
  if (auto s = state_->mark.store(last_seq_.load()); !s) return fail_writes(s);
  if (auto s = state_->mark.sync(); !s) return fail_writes(s);
  return Status::ok();
}

Status Journal::scan(uint64_t from, uint64_t to,
                     const std::function<bool(uint64_t, const fb::Envelope&)>& visit) const {
  const std::string where = state_->where();
  if (campaign_key_.empty()) return Status::ok();  // no campaign, no events
  from = std::max<uint64_t>(from, 1);
  if (to != 0 && to < from) return Status::ok();
  // Everything up to here was acknowledged before the iterator below takes its snapshot.
  const uint64_t known_last = last_seq_.load();

  std::vector<uint64_t> aligned;  // frame copy with the envelope at an 8-aligned address
  uint64_t expected = from;
  // Built only on failure: the read path stays allocation-light.
  auto at = [&expected] { return "seq " + std::to_string(expected) + ": "; };
  // Copies the stored frame of `seq` to `aligned`, verifies it and hands it to visit; sets
  // *more to what visit returned.
  auto verify_and_visit = [&](uint64_t seq, std::string_view v, bool* more) -> Status {
    aligned.resize((kCrcBytes + v.size() + 7) / 8 + 1);
    char* base = reinterpret_cast<char*>(aligned.data()) + (8 - kCrcBytes);
    std::memcpy(base, v.data(), v.size());
    auto env = events::verify_frame(std::string_view(base, v.size()));
    if (!env.ok()) return Status::corruption(at() + env.status().message() + " (" + where + ")");
    const fb::Envelope& e = **env;
    if (e.seq() != seq) {
      return Status::corruption(at() + "envelope says seq " + std::to_string(e.seq()) + " (" +
                                where + ")");
    }
    if (e.campaign() == nullptr || e.campaign()->string_view() != campaign_) {
      return Status::corruption(at() + "envelope belongs to campaign \"" +
                                (e.campaign() ? e.campaign()->str() : std::string()) +
                                "\", not \"" + campaign_ + "\" (" + where + ")");
    }
    *more = visit(seq, e);
    return Status::ok();
  };

  if (options_.in_memory) {
    const uint64_t end = to == 0 ? known_last : std::min(to, known_last);
    std::string frame;
    for (; expected <= end; ++expected) {
      {
        std::lock_guard<std::mutex> mk(state_->memory_mu);
        frame = state_->memory_frames[expected - 1];
      }
      bool more = true;
      if (auto s = verify_and_visit(expected, frame, &more); !s) return s;
      if (!more) return Status::ok();
    }
    return Status::ok();
  }

  const std::string lower = event_key(campaign_key_, from);
  std::string upper;
  if (to != 0 && to != UINT64_MAX) {
    upper = event_key(campaign_key_, to + 1);
  } else {
    // The first key after this campaign's prefix; all-0xff prefixes have none (checked below).
    upper = campaign_key_;
    int i = static_cast<int>(kCampaignKeyBytes) - 1;
    for (; i >= 0; --i) {
      if (static_cast<uint8_t>(upper[i]) != 0xFF) {
        upper[i] = static_cast<char>(static_cast<uint8_t>(upper[i]) + 1);
        break;
      }
      upper[i] = '\0';
    }
    if (i < 0) upper.clear();
  }
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  if (!upper.empty()) ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf_));

  for (it->Seek(lower); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (k.size() < kCampaignKeyBytes ||
        std::memcmp(k.data(), campaign_key_.data(), kCampaignKeyBytes) != 0) {
      break;  // past this campaign
    }
    if (k.size() != kEventKeyBytes) {
      return Status::corruption(at() + "malformed event key of " + std::to_string(k.size()) +
                                " bytes (" + where + ")");
    }
    const uint64_t seq = get_be64(k.data() + kCampaignKeyBytes);
    if (seq != expected) {
      return Status::corruption(at() + "missing; the next stored event is seq " +
                                std::to_string(seq) + " (" + where + ")");
    }
    const rocksdb::Slice v = it->value();
    bool more = true;
    if (auto s = verify_and_visit(seq, std::string_view(v.data(), v.size()), &more); !s) {
      return s;
    }
    if (!more) return Status::ok();
    ++expected;
    if (to != 0 && seq >= to) break;
  }
  if (!it->status().ok()) {
    return from_rocks(it->status(), "seq " + std::to_string(expected) + ": " + where);
  }
  const uint64_t end = to == 0 ? known_last : std::min(to, known_last);
  if (expected <= end) {
    return Status::corruption("seq " + std::to_string(expected) +
                              ": missing; the log ends before the last acknowledged seq " +
                              std::to_string(known_last) + " (" + where + ")");
  }
  return Status::ok();
}

Status Journal::read(uint64_t from, uint64_t to,
                     const std::function<bool(uint64_t, const events::Event&)>& visit) const {
  try {
    return scan(from, to, [&visit](uint64_t seq, const fb::Envelope& env) {
      events::Event e;
      env.UnPackTo(&e);
      return visit(seq, e);
    });
  } catch (const std::exception& ex) {
    return Status::internal(state_->where() + ": read: " + ex.what());
  }
}

Status Journal::read_raw(uint64_t from, uint64_t to,
                         const std::function<bool(uint64_t, const fb::Envelope&)>& visit) const {
  try {
    return scan(from, to, visit);
  } catch (const std::exception& ex) {
    return Status::internal(state_->where() + ": read: " + ex.what());
  }
}

Result<std::vector<events::Event>> Journal::read_all() const {
  std::vector<events::Event> out;
  try {
    out.reserve(last_seq_.load());
    Status s = scan(1, 0, [&out](uint64_t, const fb::Envelope& env) {
      env.UnPackTo(&out.emplace_back());
      return true;
    });
    if (!s) return s;
  } catch (const std::exception& ex) {
    return Status::internal(state_->where() + ": read_all: " + ex.what());
  }
  return out;
}

uint64_t Journal::wait_for(uint64_t after, int timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  if (last_seq_.load() > after) return last_seq_.load();
  if (!options_.read_only) {
    std::unique_lock<std::mutex> lk(state_->wait_mu);
    state_->wait_cv.wait_until(lk, deadline, [this, after] { return last_seq_.load() > after; });
    return last_seq_.load();
  }
  if (!options_.follow) {
    // A snapshot never changes; waiting out the timeout is what the caller asked for.
    std::this_thread::sleep_until(deadline);
    return last_seq_.load();
  }
  for (;;) {
    // Errors here (e.g. the writer is mid-compaction) are transient; the next poll retries.
    if (db_->TryCatchUpWithPrimary().ok()) {
      Status s = campaign_.empty() ? restore_campaign() : recover_last_seq();
      (void)s;
    }
    if (last_seq_.load() > after) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(kFollowPoll, deadline - now));
  }
  return last_seq_.load();
}

std::string Journal::event_key_for_testing(uint64_t seq) const {
  return event_key(campaign_key_, seq);
}

}  // namespace arc::storage
