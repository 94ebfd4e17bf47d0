// Ad-hoc throughput measurement, disabled by default (tests assert behaviour, not timings):
//   storage_test --gtest_also_run_disabled_tests --gtest_filter='JournalBench.*'
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/journal.h"
#include "tests/storage/test_dir.h"

namespace arc::storage {
namespace {

events::Event small_event(uint64_t i) {
  fb::CandidateProposedT p;
  p.candidate_hash = "3fa2c1e9b0d4a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607182930";
  p.agent = "agent-1";
  p.skill = "tiling";
  p.move = "knob:TILE=" + std::to_string(i % 128);
  p.view_seq = i;
  return events::make_event("agent-1", std::move(p));
}

double rate(Durability d, uint64_t n, size_t batch) {
  testing::TempDir dir;
  auto j = Journal::open(dir.path(), JournalOptions{d});
  EXPECT_TRUE(j.ok());
  EXPECT_TRUE(j.value()->set_campaign("bench").is_ok());
  std::vector<events::Event> pending;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    if (batch <= 1) {
      events::Event e = small_event(i);
      EXPECT_TRUE(j.value()->append(e).ok());
    } else {
      pending.push_back(small_event(i));
      if (pending.size() == batch) {
        EXPECT_TRUE(j.value()->append_all(pending).ok());
        pending.clear();
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(j.value()->last_seq(), batch <= 1 ? n : n - n % batch);
  return static_cast<double>(n) / secs;
}

TEST(JournalBench, DISABLED_AppendRate) {
  std::printf("%-8s %-14s %10s %14s\n", "mode", "call", "events", "events/s");
  const struct {
    Durability d;
    const char* mode;
    uint64_t n;
    size_t batch;
  } rows[] = {{Durability::kBatch, "batch", 500000, 1},
              {Durability::kBatch, "batch", 500000, 64},
              {Durability::kSync, "sync", 2000, 1},
              {Durability::kSync, "sync", 64000, 64}};
  for (const auto& r : rows) {
    const double per_s = rate(r.d, r.n, r.batch);
    std::printf("%-8s %-14s %10llu %14.0f\n", r.mode,
                r.batch <= 1 ? "append" : ("append_all/" + std::to_string(r.batch)).c_str(),
                static_cast<unsigned long long>(r.n), per_s);
  }
}

}  // namespace
}  // namespace arc::storage
