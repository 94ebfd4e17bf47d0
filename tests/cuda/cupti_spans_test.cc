// The pure core of CUPTI timing (cuda/cupti_spans.h): per-repetition spans from hand-made
// activity records, attributed by external correlation only. Needs no GPU.
#include "cuda/cupti_spans.h"

#include <algorithm>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace arc::cuda {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Builds records the way CUPTI would deliver them: every driver call in repetition i's region
// gets an external-correlation record (call id -> first + i), and the GPU work it started
// carries the call's id.
class Records {
 public:
  explicit Records(uint64_t first_external_id) : first_(first_external_id) {}
  // A launch inside repetition `rep`'s region.
  Records& timed(uint32_t rep, const std::string& name, uint64_t start, uint64_t end) {
    const uint32_t id = next_id_++;
    r_.correlations.push_back({id, first_ + rep});
    r_.activities.push_back({id, name, start, end});
    return *this;
  }
  // A driver call inside the region that starts no GPU work (cuFuncSetAttribute, ...).
  Records& timed_call_without_work(uint32_t rep) {
    r_.correlations.push_back({next_id_++, first_ + rep});
    return *this;
  }
  // Work outside every timed region: fills, poisons, flushes, correctness rounds, warm-ups.
  Records& untimed(const std::string& name, uint64_t start, uint64_t end) {
    r_.activities.push_back({next_id_++, name, start, end});
    return *this;
  }
  // Work of an earlier timing (its external ids are below first_).
  Records& earlier(uint64_t external_id, const std::string& name, uint64_t start, uint64_t end) {
    const uint32_t id = next_id_++;
    r_.correlations.push_back({id, external_id});
    r_.activities.push_back({id, name, start, end});
    return *this;
  }
  ActivityRecords& get() { return r_; }

 private:
  uint64_t first_;
  uint32_t next_id_ = 1000;
  ActivityRecords r_;
};

TEST(CuptiSpans, OneKernelPerRepetition) {
  Records rec(41);
  rec.timed(0, "candidate", 1000, 1600)
      .timed(1, "candidate", 5000, 5550)
      .timed(2, "candidate", 9000, 9700);
  auto s = repetition_spans(rec.get(), 41, 3);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_TRUE(s.reason.empty());
  EXPECT_THAT(s.spans_ns, ElementsAre(600, 550, 700));
  EXPECT_THAT(s.names, ElementsAre("candidate"));
}

TEST(CuptiSpans, MultiKernelRepetitionSpansFirstStartToLastEnd) {
  // cuBLASLt split-K: a memset of the workspace, the main kernel, then the reduction; the gaps
  // between them are part of the repetition.
  Records rec(1);
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t t = 100000 * (i + 1);
    rec.timed(i, "memset", t, t + 50)
        .timed(i, "sm90_xmma_gemm_splitk", t + 80, t + 900)
        .timed(i, "splitKreduce_kernel", t + 920, t + 1000 + i);
  }
  auto s = repetition_spans(rec.get(), 1, 4);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_THAT(s.spans_ns, ElementsAre(1000, 1001, 1002, 1003));
  EXPECT_THAT(s.names, ElementsAre("memset", "sm90_xmma_gemm_splitk", "splitKreduce_kernel"));
}

TEST(CuptiSpans, RecordsDeliveredOutOfOrder) {
  Records rec(7);
  for (uint32_t i = 0; i < 5; ++i) {
    const uint64_t t = 10000 * (i + 1);
    rec.timed(i, "first", t, t + 100).timed(i, "second", t + 200, t + 300 + 10 * i);
  }
  ActivityRecords& r = rec.get();
  std::mt19937 rng(5);
  std::shuffle(r.activities.begin(), r.activities.end(), rng);
  std::shuffle(r.correlations.begin(), r.correlations.end(), rng);
  auto s = repetition_spans(r, 7, 5);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_THAT(s.spans_ns, ElementsAre(300, 310, 320, 330, 340));
  EXPECT_THAT(s.names, ElementsAre("first", "second"));
}

TEST(CuptiSpans, UntimedWorkAndEarlierTimingsAreIgnoredWhateverTheirNames) {
  Records rec(11);
  // Correctness rounds, warm-ups and the worker's own kernels, some named like the candidate.
  rec.untimed("candidate", 10, 20).untimed("arc_fill", 30, 40).untimed("arc_flush", 50, 60);
  // An earlier workload's timing used external ids 1..10.
  rec.earlier(3, "candidate", 70, 80).earlier(10, "other", 90, 100);
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t t = 1000 * (i + 1);
    rec.untimed("arc_fill", t - 300, t - 200)
        .untimed("arc_flush", t - 150, t - 10)
        .timed_call_without_work(i)
        .timed(i, "candidate", t, t + 400)
        .untimed("arc_fill", t + 500, t + 600);  // the next repetition's inputs
  }
  // After the timed repetitions: the re-check's reference and comparisons.
  rec.untimed("reference", 9000, 9100).earlier(14, "candidate", 9200, 9300);
  auto s = repetition_spans(rec.get(), 11, 3);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_THAT(s.spans_ns, ElementsAre(400, 400, 400));
  EXPECT_THAT(s.names, ElementsAre("candidate"));
}

TEST(CuptiSpans, DuplicateCorrelationRecordsOfOneRepetitionAreHarmless) {
  Records rec(1);
  rec.timed(0, "k", 100, 200).timed(1, "k", 300, 450);
  ActivityRecords r = rec.get();
  r.correlations.push_back(r.correlations[0]);
  auto s = repetition_spans(r, 1, 2);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_THAT(s.spans_ns, ElementsAre(100, 150));
}

TEST(CuptiSpans, AMissingRepetitionIsNamed) {
  Records rec(1);
  rec.timed(0, "k", 100, 200).timed(2, "k", 500, 600).timed(4, "k", 900, 1000);
  auto s = repetition_spans(rec.get(), 1, 5);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("2 of 5 timed repetitions have no GPU activity"));
  EXPECT_THAT(s.reason, HasSubstr("first: repetition 1"));
  EXPECT_TRUE(s.spans_ns.empty());
}

TEST(CuptiSpans, NoRecordsAtAll) {
  ActivityRecords r;
  auto s = repetition_spans(r, 1, 3);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("3 of 3 timed repetitions have no GPU activity"));
}

TEST(CuptiSpans, AnExtraKernelInOneRepetitionIsACountMismatch) {
  Records rec(1);
  rec.timed(0, "k", 100, 200).timed(1, "k", 300, 400).timed(2, "k", 500, 600);
  rec.timed(2, "k", 610, 700);
  auto s = repetition_spans(rec.get(), 1, 3);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("repetition 2 ran [k x2] but repetition 0 ran [k]"));
}

TEST(CuptiSpans, ADifferentKernelSequenceIsRecorded) {
  Records rec(1);
  rec.timed(0, "a", 100, 200).timed(0, "b", 210, 300);
  rec.timed(1, "b", 400, 500).timed(1, "a", 510, 600);
  auto s = repetition_spans(rec.get(), 1, 2);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("repetition 1 ran [b; a] but repetition 0 ran [a; b]"));
}

TEST(CuptiSpans, DroppedRecordsMakeSpansUnusable) {
  Records rec(1);
  rec.timed(0, "k", 100, 200);
  rec.get().dropped = 12;
  auto s = repetition_spans(rec.get(), 1, 1);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("CUPTI dropped 12 activity records"));
}

TEST(CuptiSpans, MissingOrBackwardTimestampsAreRefused) {
  Records no_time(1);
  no_time.timed(0, "k", 100, 200).timed(1, "k", 0, 0);
  auto s = repetition_spans(no_time.get(), 1, 2);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("could not time an activity (k, repetition 1)"));

  Records backward(1);
  backward.timed(0, "k", 300, 200);
  s = repetition_spans(backward.get(), 1, 1);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("ending before it starts"));

  Records instant(1);
  instant.timed(0, "k", 300, 300);
  s = repetition_spans(instant.get(), 1, 1);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("spans 0 ns"));
}

TEST(CuptiSpans, ACorrelationIdClaimedByTwoRepetitionsIsRefused) {
  Records rec(1);
  rec.timed(0, "k", 100, 200).timed(1, "k", 300, 400);
  ActivityRecords r = rec.get();
  r.correlations.push_back({r.correlations[0].correlation_id, 2});
  auto s = repetition_spans(r, 1, 2);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("attributed to repetitions 0 and 1"));
}

TEST(CuptiSpans, ZeroRepetitions) {
  ActivityRecords r;
  auto s = repetition_spans(r, 1, 0);
  EXPECT_FALSE(s.usable);
  EXPECT_THAT(s.reason, HasSubstr("no timed repetitions"));
}

TEST(CuptiSpans, DescribeCountsRunsAndStaysShort) {
  EXPECT_EQ(describe_activities({}), "(none)");
  EXPECT_EQ(describe_activities({"a", "a", "b", "a"}), "a x2; b; a");
  EXPECT_EQ(describe_activities({""}), "(unnamed)");
  std::vector<std::string> many;
  for (int i = 0; i < 100; ++i) many.push_back("kernel_" + std::to_string(i));
  const std::string d = describe_activities(many, 60);
  EXPECT_LE(d.size(), 80u);
  EXPECT_THAT(d, HasSubstr("more)"));
}

}  // namespace
}  // namespace arc::cuda
