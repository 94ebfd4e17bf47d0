// Compositional replay on the shipped host sweep of softmax (every point of the space, measured
// on the development machine kind): a gated candidate no log holds is answered workload by
// workload from the measurements of its variants, exactly; what no record covers is UNANSWERED
// per workload with the reason; a replayed campaign with a shape-gate agent leaves no gated
// candidate unanswered.
#include "eval/replay_composition.h"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "actors/campaign_runner.h"
#include "actors/sweep.h"
#include "eval/evaluators.h"
#include "eval/replay_evaluator.h"
#include "replay/summary.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using problem::Candidate;
using problem::Variant;

const fs::path kSweep = fs::path(ARC_SOURCE_DIR) / "tests/data/sweeps/host-softmax";

std::string detail(const fb::WorkloadEvaluationT& w, const std::string& key) {
  for (const auto& d : w.details) {
    if (d->key == key) return d->value;
  }
  return "";
}

class Composition : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = problem::load_problem(fs::path(ARC_SOURCE_DIR) / "problems/host/softmax");
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    problem_ = std::move(p.value());
    auto r = eval::ReplayRecords::load({kSweep});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    records_ = r.value();
    for (const auto& [log, hash] : records_->problem_hashes) ASSERT_EQ(hash, problem_.hash) << log;
    space_ = actors::search_space(problem_, actors::search_space_size(problem_));
  }

  const fb::CandidateEvaluatedT& recorded(const Candidate& c) const {
    return records_->evaluations.at(c.hash());
  }
  // The first point of the space, of `family` and other than `not_this`, whose recorded
  // workloads all satisfy `pred`.
  Candidate point(const std::string& family,
                  const std::function<bool(size_t, fb::WorkloadStatus)>& pred,
                  const std::string& not_this = "") const {
    for (const auto& c : space_) {
      if (c.base.family != family || c.hash() == not_this) continue;
      auto it = records_->evaluations.find(c.hash());
      if (it == records_->evaluations.end()) continue;
      bool all = it->second.workloads.size() == problem_.workloads.size();
      for (size_t i = 0; all && i < it->second.workloads.size(); ++i) {
        all = pred(i, it->second.workloads[i]->status);
      }
      if (all) return c;
    }
    ADD_FAILURE() << "no recorded point of " << family << " satisfies the predicate";
    return {};
  }
  Candidate correct(const std::string& family, const std::string& not_this = "") const {
    return point(
        family, [](size_t, fb::WorkloadStatus s) { return s == fb::WorkloadStatus::OK; }, not_this);
  }
  std::unique_ptr<eval::ReplayEvaluator> evaluator(uint64_t resample = 0) const {
    return eval::ReplayEvaluator::over(records_, problem_.workloads, resample);
  }

  problem::Problem problem_;
  std::shared_ptr<const eval::ReplayRecords> records_;
  std::vector<Candidate> space_;
};

TEST_F(Composition, AGatedCandidateIsAnsweredExactlyFromItsVariantsMeasurements) {
  ASSERT_EQ(problem_.workloads.size(), 4u);
  const Candidate a = correct("online");
  const Candidate b = correct("fused");
  Candidate gated;
  gated.base = a.base;
  gated.gates[problem_.workloads[1].name] = b.base;
  gated.gates[problem_.workloads[3].name] = b.base;
  ASSERT_EQ(records_->evaluations.count(gated.hash()), 0u);  // no log holds it by hash

  auto replay = evaluator();
  const fb::CompileFinishedT compiled = replay->compile(gated, gated.hash());
  EXPECT_TRUE(compiled.ok);
  EXPECT_EQ(compiled.candidate_hash, gated.hash());
  ASSERT_EQ(compiled.variants.size(), 2u);  // the variants' own compiles, base first
  EXPECT_EQ(compiled.variants[0]->variant, a.base.key());
  EXPECT_EQ(compiled.variants[0]->object_ref,
            records_->compiles.at(a.hash()).variants[0]->object_ref);
  EXPECT_EQ(compiled.variants[1]->variant, b.base.key());
  EXPECT_EQ(compiled.variants[1]->object_ref,
            records_->compiles.at(b.hash()).variants[0]->object_ref);

  const fb::CandidateEvaluatedT e = replay->evaluate({gated, gated.hash(), 0, {}}, compiled);
  EXPECT_EQ(e.candidate_hash, gated.hash());
  EXPECT_EQ(e.evaluator, "replay");
  ASSERT_EQ(e.workloads.size(), problem_.workloads.size());
  for (size_t i = 0; i < e.workloads.size(); ++i) {
    const Candidate& serving = (i == 1 || i == 3) ? b : a;
    const auto& want = *recorded(serving).workloads[i];
    const auto& got = *e.workloads[i];
    SCOPED_TRACE(problem_.workloads[i].name);
    EXPECT_EQ(got.workload, problem_.workloads[i].name);
    EXPECT_EQ(got.status, fb::WorkloadStatus::OK);
    EXPECT_EQ(got.samples_ns, want.samples_ns);  // the serving variant's timing, unchanged
    EXPECT_EQ(got.median_ns, want.median_ns);
    EXPECT_EQ(got.spread, want.spread);
    EXPECT_EQ(got.sol_ns, want.sol_ns);
    EXPECT_EQ(got.method, want.method);
    EXPECT_EQ(detail(got, eval::kComposedFromKey), serving.hash());
    EXPECT_EQ(got.details.size(), want.details.size() + 1);
  }
  EXPECT_TRUE(replay->unanswered().empty());

  // A candidate recorded by hash is answered from its own record, untouched.
  const fb::CandidateEvaluatedT exact = replay->evaluate({a, a.hash(), 0, {}}, {});
  for (const auto& w : exact.workloads) EXPECT_EQ(detail(*w, eval::kComposedFromKey), "");
}

TEST_F(Composition, AnUnmeasuredVariantLeavesItsWorkloadUnansweredWithTheReason) {
  const Candidate a = correct("online");
  Candidate gated;
  gated.base = a.base;
  Variant outside{"online", {{"VEC", "3"}, {"UNROLL", "1"}}, ""};  // VEC=3: not in the space
  gated.gates[problem_.workloads[2].name] = outside;

  auto replay = evaluator();
  const fb::CompileFinishedT compiled = replay->compile(gated, gated.hash());
  ASSERT_EQ(compiled.variants.size(), 2u);
  EXPECT_EQ(compiled.variants[1]->variant, outside.key());
  EXPECT_EQ(compiled.variants[1]->error, "replay: no recorded compile of this variant");
  const fb::CandidateEvaluatedT e = replay->evaluate({gated, gated.hash(), 0, {}}, compiled);
  ASSERT_EQ(e.workloads.size(), problem_.workloads.size());
  for (size_t i = 0; i < e.workloads.size(); ++i) {
    const auto& w = *e.workloads[i];
    if (i == 2) {
      EXPECT_EQ(w.status, fb::WorkloadStatus::UNANSWERED);
      EXPECT_EQ(w.error,
                "replay: no recorded measurement of variant online{UNROLL=1,VEC=3} "
                "on workload " +
                    problem_.workloads[2].name);
    } else {
      EXPECT_EQ(w.status, fb::WorkloadStatus::OK) << w.workload;  // still answered
      EXPECT_EQ(w.median_ns, recorded(a).workloads[i]->median_ns);
    }
  }
  EXPECT_EQ(replay->unanswered(), std::vector<std::string>{gated.hash()});

  // A variant that serves no workload is still built live: without its compile the candidate
  // is unanswered as a whole, first.
  Candidate hidden_base = gated;
  hidden_base.base = outside;
  for (const auto& w : problem_.workloads) hidden_base.gates[w.name] = a.base;
  const fb::CandidateEvaluatedT h = replay->evaluate({hidden_base, hidden_base.hash(), 0, {}}, {});
  ASSERT_EQ(h.workloads.size(), problem_.workloads.size() + 1);
  EXPECT_EQ(h.workloads[0]->workload, "*");
  EXPECT_EQ(h.workloads[0]->status, fb::WorkloadStatus::UNANSWERED);
  EXPECT_NE(h.workloads[0]->error.find(outside.key()), std::string::npos);
  EXPECT_EQ(replay->unanswered().size(), 2u);
}

TEST_F(Composition, ARecordedFailureOfTheServingVariantFailsItsWorkloadAndStopsTheRest) {
  const Candidate a = correct("online");
  // A point that passes the first workload and fails the second (EXP=fast misses the
  // tolerance on some shapes).
  const Candidate wrong = point("fused", [](size_t i, fb::WorkloadStatus s) {
    return i == 0   ? s == fb::WorkloadStatus::OK
           : i == 1 ? s == fb::WorkloadStatus::WRONG_RESULT
                    : s == fb::WorkloadStatus::NOT_RUN;
  });
  Candidate gated;
  gated.base = a.base;
  gated.gates[problem_.workloads[1].name] = wrong.base;
  const fb::CandidateEvaluatedT e = evaluator()->evaluate({gated, gated.hash(), 0, {}}, {});
  ASSERT_EQ(e.workloads.size(), 4u);
  EXPECT_EQ(e.workloads[0]->status, fb::WorkloadStatus::OK);
  EXPECT_EQ(e.workloads[1]->status, fb::WorkloadStatus::WRONG_RESULT);
  EXPECT_EQ(e.workloads[1]->error, recorded(wrong).workloads[1]->error);
  EXPECT_EQ(detail(*e.workloads[1], eval::kComposedFromKey), wrong.hash());
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(e.workloads[i]->status, fb::WorkloadStatus::NOT_RUN);
    EXPECT_EQ(e.workloads[i]->error, "not run: workload " + problem_.workloads[1].name + " failed");
  }
  // The failing variant's later workloads were never measured: serving those, it is unanswered.
  Candidate late;
  late.base = a.base;
  late.gates[problem_.workloads[3].name] = wrong.base;
  auto replay = evaluator();
  const fb::CandidateEvaluatedT l = replay->evaluate({late, late.hash(), 0, {}}, {});
  EXPECT_EQ(l.workloads[3]->status, fb::WorkloadStatus::UNANSWERED);
  EXPECT_EQ(replay->unanswered(), std::vector<std::string>{late.hash()});
}

TEST_F(Composition, ResampledComposedAnswersAreDeterministicAndDrawnFromTheRecord) {
  const Candidate a = correct("online");
  const Candidate b = correct("fused");
  Candidate gated;
  gated.base = a.base;
  gated.gates[problem_.workloads[0].name] = b.base;
  const eval::EvalRequest req{gated, gated.hash(), 0, {}};
  const auto e1 = evaluator(9)->evaluate(req, {});
  const auto e2 = evaluator(9)->evaluate(req, {});
  const auto e3 = evaluator(10)->evaluate(req, {});
  bool differs = false;
  for (size_t i = 0; i < e1.workloads.size(); ++i) {
    EXPECT_EQ(e1.workloads[i]->samples_ns, e2.workloads[i]->samples_ns);
    EXPECT_EQ(e1.workloads[i]->median_ns, e2.workloads[i]->median_ns);
    differs |= e1.workloads[i]->samples_ns != e3.workloads[i]->samples_ns;
    const auto& source = recorded(i == 0 ? b : a).workloads[i]->samples_ns;
    const std::set<double> measured(source.begin(), source.end());
    for (double x : e1.workloads[i]->samples_ns) EXPECT_EQ(measured.count(x), 1u);
  }
  EXPECT_TRUE(differs);
}

TEST_F(Composition, TheCountsOfUnansweredCandidatesTellGatedOnesApart) {
  const Candidate a = correct("online");
  Variant outside{"online", {{"VEC", "3"}, {"UNROLL", "1"}}, ""};  // not in the space
  Candidate gated;
  gated.base = a.base;
  gated.gates[problem_.workloads[0].name] = outside;
  Candidate plain;
  plain.base = outside;
  auto replay = evaluator();
  std::vector<events::Event> log;
  for (const Candidate* c : std::vector<const Candidate*>{&a, &gated, &plain}) {
    fb::CandidateProposedT p;
    p.candidate_hash = c->hash();
    p.canonical = c->canonical();
    log.push_back(events::make_event("agent", std::move(p)));
    log.push_back(events::make_event("guard", replay->evaluate({*c, c->hash(), 0, {}}, {})));
  }
  EXPECT_EQ(replay::count_unanswered(log), 2u);
  EXPECT_EQ(replay::count_unanswered_gated(log), 1u);
  EXPECT_EQ(replay->unanswered(), (std::vector<std::string>{gated.hash(), plain.hash()}));
}

// The full pipeline: a replayed campaign whose shape-gate agent composes per-workload bests.
std::vector<events::Event> replayed_campaign(const std::string& name, uint64_t seed) {
  const fs::path file = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";
  auto config = actors::load_campaign(file);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  actors::RunOptions o;
  o.run_dir = testing::scratch_path("composition", name);
  o.budget = 120;
  o.seed = seed;
  o.in_memory_log = true;
  std::vector<events::Event> log;
  o.observer = [&log](const events::Event& e) { log.push_back(e); };
  eval::EvaluatorChoice choice;
  choice.kind = "replay";
  choice.replay_logs = {kSweep};
  choice.resample_seed = seed;
  o.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  auto prepared = actors::prepare_campaign(std::move(config.value()), o);
  EXPECT_TRUE(prepared.ok()) << prepared.status().to_string();
  auto r = actors::run_campaign(std::move(prepared.value()), o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return log;
}

TEST(CompositionCampaign, EveryGatedCandidateOfAReplayedCampaignIsAnswered) {
  const auto log = replayed_campaign("a", 3);
  std::set<std::string> gated;
  uint32_t composed = 0;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      auto c = Candidate::from_canonical(e.payload.AsCandidateProposed()->canonical);
      ASSERT_TRUE(c.ok());
      if (!c->gates.empty()) gated.insert(c->hash());
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      const auto* ev = e.payload.AsCandidateEvaluated();
      if (!gated.count(ev->candidate_hash)) continue;
      for (const auto& w : ev->workloads) {
        EXPECT_NE(w->status, fb::WorkloadStatus::UNANSWERED) << w->error;
        composed += detail(*w, eval::kComposedFromKey).empty() ? 0 : 1;
      }
    }
  }
  EXPECT_GT(gated.size(), 0u) << "the shape-gate agent proposed no gated candidate";
  EXPECT_GT(composed, 0u);
  EXPECT_EQ(replay::count_unanswered_gated(log), 0u);
  // The same seed replays the same campaign, event for event (wall times aside).
  const auto again = replayed_campaign("b", 3);
  ASSERT_EQ(again.size(), log.size());
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].payload.type, again[i].payload.type) << i;
    if (log[i].payload.type == fb::Payload::CandidateEvaluated) {
      const auto* x = log[i].payload.AsCandidateEvaluated();
      const auto* y = again[i].payload.AsCandidateEvaluated();
      ASSERT_EQ(x->workloads.size(), y->workloads.size());
      EXPECT_EQ(x->candidate_hash, y->candidate_hash);
      for (size_t k = 0; k < x->workloads.size(); ++k) {
        EXPECT_EQ(x->workloads[k]->samples_ns, y->workloads[k]->samples_ns);
      }
    }
  }
}

}  // namespace
}  // namespace arc
