#include "storage/journal.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "base/sha256.h"
#include "events/codec.h"
#include "tests/events/sample_events.h"
#include "tests/storage/test_dir.h"

namespace arc::storage {
namespace {

using events::Event;
using events::testing::all_payload_types;
using events::testing::sample_event;
using testing::TempDir;

constexpr char kCampaign[] = "campaign-0001";

std::unique_ptr<Journal> open_journal(const std::string& path, JournalOptions o = {}) {
  auto j = Journal::open(path, o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return j.ok() ? std::move(j.value()) : nullptr;
}

std::unique_ptr<Journal> open_read_only(const std::string& path, bool follow = false) {
  JournalOptions o;
  o.read_only = true;
  o.create_if_missing = false;
  o.follow = follow;
  return open_journal(path, o);
}

// Event number i of a test stream: cycles through every payload type.
Event nth_event(uint64_t i) {
  const auto types = all_payload_types();
  return sample_event(types[i % types.size()], static_cast<int>(i));
}

// Appends n events one by one; returns them as stamped by the journal.
std::vector<Event> append_n(Journal& j, uint64_t n) {
  std::vector<Event> out;
  for (uint64_t i = 0; i < n; ++i) {
    Event e = nth_event(i);
    auto seq = j.append(e);
    EXPECT_TRUE(seq.ok()) << seq.status().to_string();
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<uint64_t> visited_seqs(const Journal& j, uint64_t from, uint64_t to, Status* s) {
  std::vector<uint64_t> seqs;
  *s = j.read(from, to, [&seqs](uint64_t seq, const Event& e) {
    EXPECT_EQ(e.seq, seq);
    seqs.push_back(seq);
    return true;
  });
  return seqs;
}

std::vector<uint64_t> range(uint64_t a, uint64_t b) {
  std::vector<uint64_t> v;
  for (uint64_t i = a; i <= b; ++i) v.push_back(i);
  return v;
}

TEST(JournalTest, AppendThenReopenKeepsEveryEventAndLastSeq) {
  TempDir dir;
  std::vector<Event> written;
  {
    auto j = open_journal(dir.path());
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    written = append_n(*j, 50);
    EXPECT_EQ(j->last_seq(), 50u);
  }
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j);
  EXPECT_EQ(j->campaign(), kCampaign);
  EXPECT_EQ(j->last_seq(), 50u);
  auto all = j->read_all();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  ASSERT_EQ(all->size(), 50u);
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_TRUE((*all)[i] == written[i]) << "seq " << i + 1;
  }
  // Appending after reopen continues the sequence.
  Event e = nth_event(50);
  auto seq = j->append(e);
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 51u);
}

TEST(JournalTest, InMemoryLogReadsBackAndLeavesNothingOnDisk) {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  JournalOptions o;
  o.in_memory = true;
  std::vector<Event> written;
  {
    auto j = open_journal(path, o);
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    written = append_n(*j, 30);
    std::vector<Event> batch = {nth_event(30), nth_event(31)};
    auto last = j->append_all(batch);
    ASSERT_TRUE(last.ok()) << last.status().to_string();
    EXPECT_EQ(*last, 32u);
    written.insert(written.end(), batch.begin(), batch.end());
    EXPECT_TRUE(j->sync().is_ok());
    auto all = j->read_all();
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    ASSERT_EQ(all->size(), 32u);
    for (size_t i = 0; i < all->size(); ++i) {
      EXPECT_TRUE((*all)[i] == written[i]) << "seq " << i + 1;
    }
    auto blob = j->put_artifact("source text");
    ASSERT_TRUE(blob.ok());
    EXPECT_EQ(j->get_artifact(blob.value()).value(), "source text");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // Nothing survives the close: a new in-memory journal at the same path starts empty.
  auto again = open_journal(path, o);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->campaign(), "");
  EXPECT_EQ(again->last_seq(), 0u);
}

TEST(JournalTest, InMemoryLogRefusesReadOnlyAndExistingLogs) {
  JournalOptions o;
  o.in_memory = true;
  o.read_only = true;
  auto j = Journal::open("/nonexistent/log", o);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("in-memory"), std::string::npos);
  o.read_only = false;
  o.create_if_missing = false;
  EXPECT_FALSE(Journal::open("/nonexistent/log", o).ok());
}

TEST(JournalTest, SeqsAreDenseFromOneAndEventsAreStamped) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  EXPECT_EQ(j->last_seq(), 0u);
  for (uint64_t want = 1; want <= 20; ++want) {
    Event e = nth_event(want);
    e.seq = 999;           // overwritten by the journal
    e.campaign = "bogus";  // overwritten by the journal
    e.wall_time_ns = want == 5 ? 77 : 0;
    auto seq = j->append(e);
    ASSERT_TRUE(seq.ok());
    EXPECT_EQ(*seq, want);
    EXPECT_EQ(e.seq, want);
    EXPECT_EQ(e.campaign, kCampaign);
    if (want == 5) {
      EXPECT_EQ(e.wall_time_ns, 77);  // a given wall time is kept (replayed events)
    } else {
      EXPECT_GT(e.wall_time_ns, 1'600'000'000'000'000'000);
    }
  }
  Status s;
  EXPECT_EQ(visited_seqs(*j, 1, 0, &s), range(1, 20));
  EXPECT_TRUE(s.is_ok()) << s.to_string();
}

TEST(JournalTest, ReadRanges) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  append_n(*j, 50);
  Status s;
  EXPECT_EQ(visited_seqs(*j, 10, 20, &s), range(10, 20));
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(visited_seqs(*j, 45, 0, &s), range(45, 50));
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(visited_seqs(*j, 0, 3, &s), range(1, 3));
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(visited_seqs(*j, 50, 50, &s), range(50, 50));
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(visited_seqs(*j, 40, 1000, &s), range(40, 50));
  EXPECT_TRUE(s.is_ok());
  EXPECT_TRUE(visited_seqs(*j, 51, 0, &s).empty());
  EXPECT_TRUE(s.is_ok());
  EXPECT_TRUE(visited_seqs(*j, 20, 10, &s).empty());
  EXPECT_TRUE(s.is_ok());

  // read_raw hands out verified envelopes.
  std::vector<uint64_t> raw;
  s = j->read_raw(5, 7, [&raw](uint64_t seq, const fb::Envelope& env) {
    EXPECT_EQ(env.seq(), seq);
    EXPECT_EQ(env.campaign()->str(), kCampaign);
    raw.push_back(seq);
    return true;
  });
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(raw, range(5, 7));
}

TEST(JournalTest, VisitorCanStopEarly) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  append_n(*j, 10);
  std::vector<uint64_t> seen;
  Status s = j->read(1, 0, [&seen](uint64_t seq, const Event&) {
    seen.push_back(seq);
    return seq < 4;
  });
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(seen, range(1, 4));
}

TEST(JournalTest, AppendAllWritesOneDenseBatch) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  Event first = nth_event(0);
  ASSERT_TRUE(j->append(first).ok());
  std::vector<Event> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(nth_event(i + 1));
  auto last = j->append_all(batch);
  ASSERT_TRUE(last.ok()) << last.status().to_string();
  EXPECT_EQ(*last, 11u);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(batch[i].seq, i + 2);
    EXPECT_EQ(batch[i].campaign, kCampaign);
  }
  std::vector<Event> empty;
  auto none = j->append_all(empty);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 11u);

  auto all = j->read_all();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 11u);
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_TRUE((*all)[i + 1] == batch[i]);
}

TEST(JournalTest, AppendAllHandsBackTheFramesItWrote) {
  for (bool in_memory : {false, true}) {
    TempDir dir;
    JournalOptions o;
    o.in_memory = in_memory;
    auto j = open_journal(dir.path(), o);
    ASSERT_TRUE(j);
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    std::vector<Event> batch = {nth_event(0), nth_event(1), nth_event(2)};
    std::vector<std::string> frames = {"stale"};
    ASSERT_TRUE(j->append_all(batch, &frames).ok());
    ASSERT_EQ(frames.size(), 3u);
    Status s = j->read_raw(1, 0, [&frames](uint64_t seq, const fb::Envelope&) {
      EXPECT_LE(seq, frames.size());
      return true;
    });
    EXPECT_TRUE(s.is_ok());
    for (size_t i = 0; i < frames.size(); ++i) {
      auto e = events::decode_frame(frames[i]);
      ASSERT_TRUE(e.ok()) << e.status().to_string();
      EXPECT_TRUE(e.value() == batch[i]) << "frame " << i << (in_memory ? " in memory" : "");
    }
  }
}

TEST(JournalTest, AppendAllWithABadEventWritesNothing) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  std::vector<Event> batch;
  batch.push_back(nth_event(0));
  batch.emplace_back();  // no payload
  batch.push_back(nth_event(2));
  auto r = j->append_all(batch);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(j->last_seq(), 0u);
  auto all = j->read_all();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  Event e = nth_event(3);
  ASSERT_TRUE(j->append(e).ok());
  EXPECT_EQ(e.seq, 1u);
}

TEST(JournalTest, CampaignRules) {
  TempDir dir;
  {
    auto j = open_journal(dir.path());
    EXPECT_TRUE(j->campaign().empty());
    Event e = nth_event(0);
    auto r = j->append(e);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("set_campaign"), std::string::npos);
    EXPECT_FALSE(j->set_campaign("").is_ok());
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    EXPECT_TRUE(j->set_campaign(kCampaign).is_ok());  // idempotent
    Status other = j->set_campaign("another");
    EXPECT_EQ(other.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(other.message().find(kCampaign), std::string::npos) << other.message();
    append_n(*j, 3);
  }
  auto j = open_journal(dir.path());
  EXPECT_EQ(j->campaign(), kCampaign);
  EXPECT_TRUE(j->set_campaign(kCampaign).is_ok());  // resume names the same campaign
  EXPECT_FALSE(j->set_campaign("another").is_ok());
  EXPECT_EQ(j->last_seq(), 3u);
  auto meta = j->get_meta("campaign");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(*meta, kCampaign);
}

TEST(JournalTest, EventWithoutPayloadIsRefused) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  Event e;
  e.actor = "nobody";
  auto r = j->append(e);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("nobody"), std::string::npos);
  EXPECT_EQ(j->last_seq(), 0u);
}

TEST(JournalTest, OversizedEventIsRefused) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  fb::CandidateProposedT p;
  p.canonical = std::string(events::kMaxEnvelopeBytes + 1, 'x');
  Event e = events::make_event("agent-0", std::move(p));
  auto r = j->append(e);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("artifact"), std::string::npos);
  EXPECT_EQ(j->last_seq(), 0u);
}

TEST(JournalTest, ConcurrentAppendsStayDense) {
  TempDir dir;
  auto j = open_journal(dir.path(), JournalOptions{Durability::kBatch});
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> got(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&j, &got, t] {
      for (int i = 0; i < kEach; ++i) {
        Event e = nth_event(static_cast<uint64_t>(i));
        auto seq = j->append(e);
        if (seq.ok()) got[t].push_back(*seq);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (const auto& g : got) all.insert(g.begin(), g.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(j->last_seq(), static_cast<uint64_t>(kThreads * kEach));
  Status s;
  EXPECT_EQ(visited_seqs(*j, 1, 0, &s).size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_TRUE(s.is_ok()) << s.to_string();
}

TEST(JournalTest, SyncSucceeds) {
  TempDir dir;
  auto j = open_journal(dir.path(), JournalOptions{Durability::kBatch});
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  append_n(*j, 5);
  EXPECT_TRUE(j->sync().is_ok());
}

TEST(JournalTest, SecondWriterIsRefusedWithAClearError) {
  TempDir dir;
  auto a = open_journal(dir.path());
  ASSERT_TRUE(a);
  auto b = Journal::open(dir.path(), JournalOptions{});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find(dir.path()), std::string::npos) << b.status().to_string();
}

// --- read-only opens ---------------------------------------------------------------------

TEST(JournalReadOnlyTest, ReadsAClosedLogAndRefusesWrites) {
  TempDir dir;
  std::vector<Event> written;
  {
    auto j = open_journal(dir.path());
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    written = append_n(*j, 30);
    auto h = j->put_artifact("source text");
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(j->put_meta("summary", "{}").is_ok());
  }
  auto j = open_read_only(dir.path());
  ASSERT_TRUE(j);
  EXPECT_EQ(j->campaign(), kCampaign);
  EXPECT_EQ(j->last_seq(), 30u);
  auto all = j->read_all();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 30u);
  EXPECT_TRUE(all->back() == written.back());
  auto blob = j->get_artifact(sha256_hex("source text"));
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(*blob, "source text");
  EXPECT_EQ(*j->get_meta("summary"), "{}");

  Event e = nth_event(0);
  auto r = j->append(e);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("read-only"), std::string::npos);
  EXPECT_FALSE(j->put_artifact("x").ok());
  EXPECT_FALSE(j->put_meta("k", "v").is_ok());
  EXPECT_TRUE(j->sync().is_ok());
  EXPECT_EQ(j->wait_for(30, 20), 30u);  // a snapshot: times out
}

TEST(JournalReadOnlyTest, MissingPathIsNotFound) {
  TempDir dir;
  JournalOptions o;
  o.read_only = true;
  o.create_if_missing = false;
  auto j = Journal::open(dir.sub("nope"), o);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Status::Code::kNotFound);
  EXPECT_NE(j.status().message().find(dir.sub("nope")), std::string::npos);

  JournalOptions w;
  w.create_if_missing = false;
  EXPECT_FALSE(Journal::open(dir.sub("nope"), w).ok());
}

TEST(JournalReadOnlyTest, FolderThatIsNotADatabaseIsAnError) {
  TempDir dir;
  auto j = Journal::open(dir.path(), JournalOptions{Durability::kSync, false, true});
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find(dir.path()), std::string::npos) << j.status().to_string();
}

TEST(JournalReadOnlyTest, MissingEventsColumnFamilyIsNamed) {
  TempDir dir;
  {
    rocksdb::DBOptions o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"artifacts", {}}, {"meta", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), cfs, &handles, &db).ok());
    for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(db->Close().ok());
    delete db;
  }
  JournalOptions ro;
  ro.read_only = true;
  ro.create_if_missing = false;
  auto j = Journal::open(dir.path(), ro);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Status::Code::kCorruption);
  EXPECT_NE(j.status().message().find("column family \"events\""), std::string::npos)
      << j.status().message();
  ro.follow = true;
  EXPECT_FALSE(Journal::open(dir.path(), ro).ok());

  // A writable open adds what is missing.
  auto w = open_journal(dir.path());
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->set_campaign(kCampaign).is_ok());
  append_n(*w, 2);
  EXPECT_EQ(w->last_seq(), 2u);
}

TEST(JournalReadOnlyTest, FollowRequiresReadOnly) {
  TempDir dir;
  JournalOptions o;
  o.follow = true;
  auto j = Journal::open(dir.path(), o);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Status::Code::kInvalidArgument);
}

// --- damage --------------------------------------------------------------------------------

class JournalDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto j = open_journal(dir_.path(), JournalOptions{Durability::kBatch});
    ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
    append_n(*j, 100);
  }

  // Applies f to the raw database of a writable journal, then closes it.
  template <class F>
  void tamper(F f) {
    auto j = open_journal(dir_.path());
    ASSERT_TRUE(j);
    f(*j, *j->raw_db_for_testing(), j->events_cf_for_testing());
  }

  std::string stored_frame(Journal& j, uint64_t seq) {
    std::string v;
    EXPECT_TRUE(j.raw_db_for_testing()
                    ->Get(rocksdb::ReadOptions(), j.events_cf_for_testing(),
                          j.event_key_for_testing(seq), &v)
                    .ok());
    return v;
  }

  // Reads everything; returns the status and the seqs visited before it.
  Status read_back(std::vector<uint64_t>* seen, bool raw = false) {
    auto j = open_read_only(dir_.path());
    if (!j) return Status::internal("open failed");
    if (raw) {
      return j->read_raw(1, 0, [seen](uint64_t seq, const fb::Envelope&) {
        seen->push_back(seq);
        return true;
      });
    }
    return j->read(1, 0, [seen](uint64_t seq, const Event&) {
      seen->push_back(seq);
      return true;
    });
  }

  TempDir dir_;
};

TEST_F(JournalDamageTest, FlippedByteIsCorruptionAtItsSeq) {
  size_t frame_size = 0;
  tamper([&](Journal& j, rocksdb::DB&, rocksdb::ColumnFamilyHandle*) {
    frame_size = stored_frame(j, 37).size();
  });
  ASSERT_GT(frame_size, 8u);
  // In the CRC, at the start of the envelope, in the middle, at the end.
  for (size_t pos : {size_t{1}, size_t{4}, frame_size / 2, frame_size - 1}) {
    std::string original;
    tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
      original = stored_frame(j, 37);
      std::string bad = original;
      bad[pos] = static_cast<char>(bad[pos] ^ 0x20);
      ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37), bad).ok());
    });
    for (bool raw : {false, true}) {
      std::vector<uint64_t> seen;
      Status s = read_back(&seen, raw);
      ASSERT_EQ(s.code(), Status::Code::kCorruption) << "pos " << pos << ": " << s.to_string();
      EXPECT_EQ(s.message().rfind("seq 37: ", 0), 0u) << s.message();
      EXPECT_NE(s.message().find("crc mismatch"), std::string::npos) << s.message();
      EXPECT_EQ(seen, range(1, 36)) << "pos " << pos;
    }
    // Records after the damage are still readable on their own.
    {
      auto j = open_read_only(dir_.path());
      Status s;
      EXPECT_EQ(visited_seqs(*j, 38, 0, &s), range(38, 100));
      EXPECT_TRUE(s.is_ok()) << s.to_string();
    }
    tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
      ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37), original).ok());
    });
    std::vector<uint64_t> seen;
    EXPECT_TRUE(read_back(&seen).is_ok());
    EXPECT_EQ(seen.size(), 100u);
  }
}

TEST_F(JournalDamageTest, ValidFrameUnderTheWrongKeyIsCorruption) {
  tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
    const std::string other = stored_frame(j, 38);
    ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37), other).ok());
  });
  std::vector<uint64_t> seen;
  Status s = read_back(&seen);
  ASSERT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message().rfind("seq 37: envelope says seq 38", 0), 0u) << s.message();
  EXPECT_EQ(seen, range(1, 36));
}

TEST_F(JournalDamageTest, FrameOfAnotherCampaignIsCorruption) {
  tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
    Event e = nth_event(1);
    e.seq = 37;
    e.campaign = "intruder";
    ASSERT_TRUE(
        db.Put(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37), events::encode_frame(e))
            .ok());
  });
  std::vector<uint64_t> seen;
  Status s = read_back(&seen);
  ASSERT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message().rfind("seq 37: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("intruder"), std::string::npos) << s.message();
}

TEST_F(JournalDamageTest, GarbageValueFailsTheVerifier) {
  tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
    ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37),
                       events::frame("not a flatbuffer, but its crc is right"))
                    .ok());
  });
  std::vector<uint64_t> seen;
  Status s = read_back(&seen);
  ASSERT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message().rfind("seq 37: flatbuffers verifier failed", 0), 0u) << s.message();
  EXPECT_EQ(seen, range(1, 36));
}

TEST_F(JournalDamageTest, MissingRecordIsCorruption) {
  tamper([&](Journal& j, rocksdb::DB& db, rocksdb::ColumnFamilyHandle* cf) {
    ASSERT_TRUE(db.Delete(rocksdb::WriteOptions(), cf, j.event_key_for_testing(37)).ok());
  });
  std::vector<uint64_t> seen;
  Status s = read_back(&seen);
  ASSERT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message().rfind("seq 37: missing", 0), 0u) << s.message();
  EXPECT_EQ(seen, range(1, 36));
}

TEST_F(JournalDamageTest, RecordMissingAtTheTailIsCorruptionWhileOpen) {
  auto j = open_journal(dir_.path());
  ASSERT_EQ(j->last_seq(), 100u);
  ASSERT_TRUE(j->raw_db_for_testing()
                  ->Delete(rocksdb::WriteOptions(), j->events_cf_for_testing(),
                           j->event_key_for_testing(100))
                  .ok());
  Status s;
  auto seen = visited_seqs(*j, 1, 0, &s);
  ASSERT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.message().rfind("seq 100: missing", 0), 0u) << s.message();
  EXPECT_EQ(seen, range(1, 99));
}

// --- artifacts and meta --------------------------------------------------------------------

TEST(ArtifactTest, RoundTripAcrossReopen) {
  TempDir dir;
  const std::string blob("__global__ void k() {}\n\0binary\xff", 32);
  std::string hash;
  {
    auto j = open_journal(dir.path());
    auto h = j->put_artifact(blob);
    ASSERT_TRUE(h.ok()) << h.status().to_string();
    hash = *h;
    EXPECT_EQ(hash, sha256_hex(blob));
    EXPECT_TRUE(j->has_artifact(hash));
    auto got = j->get_artifact(hash);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, blob);
    auto empty = j->put_artifact("");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(*j->get_artifact(*empty), "");
  }
  auto j = open_journal(dir.path());
  auto got = j->get_artifact(hash);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, blob);
}

TEST(ArtifactTest, PutIsIdempotentAndWritesOnce) {
  TempDir dir;
  auto j = open_journal(dir.path());
  auto a = j->put_artifact("same bytes");
  auto b = j->put_artifact("same bytes");
  auto c = j->put_artifact("other bytes");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  uint64_t entries = 0;
  ASSERT_TRUE(j->raw_db_for_testing()->GetIntProperty(
      j->artifacts_cf_for_testing(), "rocksdb.num-entries-active-mem-table", &entries));
  EXPECT_EQ(entries, 2u);  // the second put of the same bytes wrote nothing
}

TEST(ArtifactTest, TamperedBlobIsCorruption) {
  TempDir dir;
  auto j = open_journal(dir.path());
  auto h = j->put_artifact("original source");
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(
      j->raw_db_for_testing()
          ->Put(rocksdb::WriteOptions(), j->artifacts_cf_for_testing(), *h, "original sourcf")
          .ok());
  auto got = j->get_artifact(*h);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kCorruption);
  EXPECT_NE(got.status().message().find(*h), std::string::npos);
  EXPECT_NE(got.status().message().find(sha256_hex("original sourcf")), std::string::npos);
}

TEST(ArtifactTest, UnknownAndMalformedHashes) {
  TempDir dir;
  auto j = open_journal(dir.path());
  const std::string absent = sha256_hex("never stored");
  EXPECT_FALSE(j->has_artifact(absent));
  auto got = j->get_artifact(absent);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kNotFound);
  EXPECT_NE(got.status().message().find(absent), std::string::npos);
  auto bad = j->get_artifact("XYZ");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
}

TEST(MetaTest, PutGetAcrossReopen) {
  TempDir dir;
  {
    auto j = open_journal(dir.path());
    ASSERT_TRUE(j->put_meta("summary", R"({"best":1.5})").is_ok());
    ASSERT_TRUE(j->put_meta("summary", R"({"best":2.5})").is_ok());
    auto missing = j->get_meta("nothing");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  }
  auto j = open_journal(dir.path());
  auto v = j->get_meta("summary");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, R"({"best":2.5})");
}

// --- waiting -------------------------------------------------------------------------------

TEST(JournalWaitTest, WakesOnAppendFromAnotherThread) {
  TempDir dir;
  auto j = open_journal(dir.path(), JournalOptions{Durability::kBatch});
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  append_n(*j, 3);
  std::atomic<uint64_t> woke_with{0};
  std::atomic<bool> returned{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    woke_with = j->wait_for(3, 10'000);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(returned.load());
  Event e = nth_event(3);
  ASSERT_TRUE(j->append(e).ok());
  waiter.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(woke_with.load(), 4u);
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(JournalWaitTest, ReturnsAtOnceWhenNewerExistsAndTimesOutOtherwise) {
  TempDir dir;
  auto j = open_journal(dir.path());
  ASSERT_TRUE(j->set_campaign(kCampaign).is_ok());
  append_n(*j, 2);
  EXPECT_EQ(j->wait_for(0, 10'000), 2u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(j->wait_for(2, 60), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(60));
}

TEST(JournalWaitTest, FollowerSeesALiveWriter) {
  TempDir dir;
  auto writer = open_journal(dir.path(), JournalOptions{Durability::kBatch});
  ASSERT_TRUE(writer->set_campaign(kCampaign).is_ok());
  append_n(*writer, 5);
  auto follower = open_read_only(dir.path(), /*follow=*/true);
  ASSERT_TRUE(follower);
  EXPECT_EQ(follower->campaign(), kCampaign);
  EXPECT_EQ(follower->last_seq(), 5u);

  std::thread appender([&writer] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (uint64_t i = 5; i < 25; ++i) {
      Event e = nth_event(i);
      ASSERT_TRUE(writer->append(e).ok());
    }
  });
  uint64_t last = 5;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (last < 25 && std::chrono::steady_clock::now() < deadline) {
    last = follower->wait_for(last, 1000);
  }
  appender.join();
  EXPECT_EQ(last, 25u);
  Status s;
  EXPECT_EQ(visited_seqs(*follower, 1, 0, &s), range(1, 25));
  EXPECT_TRUE(s.is_ok()) << s.to_string();
}

TEST(JournalWaitTest, FollowerOpenedBeforeTheCampaignStarts) {
  TempDir dir;
  auto writer = open_journal(dir.path(), JournalOptions{Durability::kBatch});
  auto follower = open_read_only(dir.path(), /*follow=*/true);
  ASSERT_TRUE(follower);
  EXPECT_TRUE(follower->campaign().empty());
  ASSERT_TRUE(writer->set_campaign(kCampaign).is_ok());
  append_n(*writer, 3);
  EXPECT_EQ(follower->wait_for(0, 5000), 3u);
  EXPECT_EQ(follower->campaign(), kCampaign);
}

}  // namespace
}  // namespace arc::storage
