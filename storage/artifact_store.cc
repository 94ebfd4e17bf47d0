// Content-addressed artifacts and small meta facts, in the journal's "artifacts" and "meta"
// column families. An artifact's key is the SHA-256 hex of its bytes, so a put of known bytes
// is a no-op and a get proves the bytes are the ones that were put.
#include <algorithm>

#include <rocksdb/db.h>

#include "base/sha256.h"
#include "storage/journal.h"

namespace arc::storage {
namespace {

bool is_sha256_hex(const std::string& h) {
  return h.size() == 64 && std::all_of(h.begin(), h.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Result<std::string> Journal::put_artifact(std::string_view blob) {
  if (options_.read_only) {
    return Status::invalid_argument("journal is open read-only; put_artifact refused");
  }
  std::string hash = sha256_hex(blob);
  if (options_.in_memory) {
    if (!memory_find(MemoryTable::kArtifacts, hash, nullptr)) {
      memory_put(MemoryTable::kArtifacts, hash, std::string(blob));
    }
    return hash;
  }
  rocksdb::PinnableSlice existing;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), artifacts_cf_, hash, &existing);
  if (s.ok()) return hash;  // same key, same bytes: written once
  if (!s.IsNotFound()) {
    return Status::io_error("artifact " + hash + ": lookup failed: " + s.ToString());
  }
  if (auto f = write_failure(); !f) return f;
  rocksdb::WriteOptions wo;
  wo.sync = options_.durability == Durability::kSync;
  s = db_->Put(wo, artifacts_cf_, hash, rocksdb::Slice(blob.data(), blob.size()));
  if (!s.ok()) {
    return fail_writes(Status::io_error("artifact " + hash + ": write failed: " + s.ToString()));
  }
  return hash;
}

Result<std::string> Journal::get_artifact(const std::string& hash) const {
  if (!is_sha256_hex(hash)) {
    return Status::invalid_argument("artifact \"" + hash +
                                    "\": expected 64 lowercase hex digits (SHA-256)");
  }
  std::string blob;
  if (options_.in_memory) {
    if (!memory_find(MemoryTable::kArtifacts, hash, &blob)) {
      return Status::not_found("artifact " + hash + ": not stored");
    }
  } else {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), artifacts_cf_, hash, &blob);
    if (s.IsNotFound()) return Status::not_found("artifact " + hash + ": not stored");
    if (s.IsCorruption()) return Status::corruption("artifact " + hash + ": " + s.ToString());
    if (!s.ok()) return Status::io_error("artifact " + hash + ": " + s.ToString());
  }
  if (std::string actual = sha256_hex(blob); actual != hash) {
    return Status::corruption("artifact " + hash + ": stored bytes (" +
                              std::to_string(blob.size()) + ") hash to " + actual);
  }
  return blob;
}

bool Journal::has_artifact(const std::string& hash) const {
  if (options_.in_memory) return memory_find(MemoryTable::kArtifacts, hash, nullptr);
  rocksdb::PinnableSlice v;
  return db_->Get(rocksdb::ReadOptions(), artifacts_cf_, hash, &v).ok();
}

Status Journal::put_meta(const std::string& key, const std::string& value) {
  if (options_.read_only) {
    return Status::invalid_argument("journal is open read-only; put_meta refused");
  }
  if (options_.in_memory) {
    memory_put(MemoryTable::kMeta, key, value);
    return Status::ok();
  }
  if (auto f = write_failure(); !f) return f;
  rocksdb::WriteOptions wo;
  wo.sync = options_.durability == Durability::kSync;
  rocksdb::Status s = db_->Put(wo, meta_cf_, key, value);
  if (!s.ok()) {
    return fail_writes(Status::io_error("meta \"" + key + "\": write failed: " + s.ToString()));
  }
  return Status::ok();
}

Result<std::string> Journal::get_meta(const std::string& key) const {
  std::string value;
  if (options_.in_memory) {
    if (!memory_find(MemoryTable::kMeta, key, &value)) {
      return Status::not_found("meta \"" + key + "\": not set");
    }
    return value;
  }
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, key, &value);
  if (s.IsNotFound()) return Status::not_found("meta \"" + key + "\": not set");
  if (!s.ok()) return Status::io_error("meta \"" + key + "\": " + s.ToString());
  return value;
}

}  // namespace arc::storage
