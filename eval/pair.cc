#include "eval/pair.h"

#include <memory>
#include <utility>

namespace arc::eval {
namespace {

std::unique_ptr<fb::PairSideT> side_of(const fb::WorkloadEvaluationT& w) {
  auto s = std::make_unique<fb::PairSideT>();
  s->status = w.status;
  s->error = w.error;
  s->samples_ns = w.samples_ns;
  s->median_ns = w.median_ns;
  s->spread = w.spread;
  s->method = w.method;
  for (const auto& d : w.details) s->details.push_back(std::make_unique<fb::KeyValueT>(*d));
  return s;
}

std::unique_ptr<fb::PairSideT> missing_side() {
  auto s = std::make_unique<fb::PairSideT>();
  s->status = fb::WorkloadStatus::NOT_RUN;
  s->error = "no result for this workload";
  return s;
}

}  // namespace

fb::PairMeasuredT measure_pair(Evaluator& evaluator, const PairSubject& candidate,
                               const PairSubject& incumbent, bool candidate_first,
                               uint64_t input_seed, const EvalSettings& settings) {
  fb::CandidateEvaluatedT results[2];  // [0] candidate, [1] incumbent
  const PairSubject* subjects[2] = {&candidate, &incumbent};
  for (int k = 0; k < 2; ++k) {
    const int side = candidate_first ? k : 1 - k;
    EvalRequest req{*subjects[side]->candidate, subjects[side]->hash, input_seed, settings};
    results[side] = evaluator.evaluate(req, *subjects[side]->compiled);
  }
  fb::PairMeasuredT pair;
  pair.candidate_hash = candidate.hash;
  pair.incumbent_hash = incumbent.hash;
  pair.candidate_first = candidate_first;
  pair.input_seed = input_seed;
  pair.worker_restarts = results[0].worker_restarts + results[1].worker_restarts;
  for (const auto& kv : results[candidate_first ? 1 : 0].clocks) {
    pair.clocks.push_back(std::make_unique<fb::KeyValueT>(*kv));
  }
  for (const auto& w : results[0].workloads) {
    auto pw = std::make_unique<fb::PairWorkloadT>();
    pw->workload = w->workload;
    pw->candidate = side_of(*w);
    for (const auto& o : results[1].workloads) {
      if (o->workload == w->workload) pw->incumbent = side_of(*o);
    }
    if (!pw->incumbent) pw->incumbent = missing_side();
    pair.workloads.push_back(std::move(pw));
  }
  return pair;
}

}  // namespace arc::eval
