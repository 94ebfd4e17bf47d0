#include "eval/replay_evaluator.h"

#include <algorithm>

#include "base/rng.h"
#include "base/stats.h"
#include "eval/replay_composition.h"
#include "storage/journal.h"

namespace arc::eval {

using problem::Candidate;
namespace {

// Bootstrap redraw of each workload's samples.
void resample(fb::CandidateEvaluatedT& e, uint64_t seed) {
  for (auto& w : e.workloads) {
    if (w->status != fb::WorkloadStatus::OK || w->samples_ns.empty()) continue;
    uint64_t s = seed;
    for (char c : e.candidate_hash + "|" + w->workload)
      s = splitmix64(&s) ^ static_cast<uint8_t>(c);
    std::vector<double> drawn(w->samples_ns.size());
    for (auto& x : drawn) x = w->samples_ns[splitmix64(&s) % w->samples_ns.size()];
    w->samples_ns = drawn;
    std::sort(drawn.begin(), drawn.end());
    w->median_ns = quantile_sorted(drawn, 0.5);
    w->p25_ns = quantile_sorted(drawn, 0.25);
    w->p75_ns = quantile_sorted(drawn, 0.75);
    w->min_ns = drawn.front();
    w->spread = w->median_ns > 0 ? (w->p75_ns - w->p25_ns) / w->median_ns : 0;
  }
}

}  // namespace

Result<std::shared_ptr<const ReplayRecords>> ReplayRecords::load(
    const std::vector<std::filesystem::path>& logs) {
  auto r = std::make_shared<ReplayRecords>();
  std::map<std::string, Candidate> candidates;  // what each recorded hash ran
  for (const auto& path : logs) {
    auto dir = std::filesystem::exists(path / "log") ? path / "log" : path;
    storage::JournalOptions jo;
    jo.read_only = true;
    jo.create_if_missing = false;
    auto j = storage::Journal::open(dir.string(), jo);
    if (!j) return Status(j.status());
    const std::string name = path.string();
    Status s = j.value()->read(1, 0, [&r, &name, &candidates](uint64_t, const events::Event& e) {
      switch (e.payload.type) {
        case fb::Payload::CampaignStarted:
          if (r->device.empty()) r->device = e.payload.AsCampaignStarted()->device;
          r->problem_hashes[name] = e.payload.AsCampaignStarted()->problem_hash;
          break;
        case fb::Payload::PeaksMeasured:
          if (!r->peaks) r->peaks = *e.payload.AsPeaksMeasured();
          break;
        case fb::Payload::CandidateProposed: {
          const auto* p = e.payload.AsCandidateProposed();
          if (auto c = Candidate::from_canonical(p->canonical); c) {
            candidates.emplace(p->candidate_hash, std::move(c.value()));
          }
          break;
        }
        case fb::Payload::CompileFinished: {
          const auto* p = e.payload.AsCompileFinished();
          r->compiles.emplace(p->candidate_hash, *p);
          break;
        }
        case fb::Payload::CandidateEvaluated: {
          const auto* p = e.payload.AsCandidateEvaluated();
          r->evaluations.emplace(p->candidate_hash, *p);
          break;
        }
        case fb::Payload::PairMeasured: {
          const auto* p = e.payload.AsPairMeasured();
          for (const bool candidate_side : {true, false}) {
            fb::CandidateEvaluatedT side;
            side.candidate_hash = candidate_side ? p->candidate_hash : p->incumbent_hash;
            side.input_seed = p->input_seed;
            side.evaluator = "replay";
            for (const auto& w : p->workloads) {
              const auto& s = candidate_side ? w->candidate : w->incumbent;
              if (!s) continue;
              auto we = std::make_unique<fb::WorkloadEvaluationT>();
              we->workload = w->workload;
              we->status = s->status;
              we->error = s->error;
              we->samples_ns = s->samples_ns;
              we->median_ns = s->median_ns;
              we->spread = s->spread;
              we->method = s->method;
              for (const auto& d : s->details) {
                we->details.push_back(std::make_unique<fb::KeyValueT>(*d));
              }
              side.workloads.push_back(std::move(we));
            }
            r->pair_sides.emplace(std::make_pair(side.candidate_hash, p->input_seed),
                                  std::move(side));
          }
          break;
        }
        default:
          break;
      }
      return true;
    });
    if (!s) return Status::corruption(dir.string() + ": " + s.message());
  }
  r->variants = VariantIndex::build(candidates, r->compiles, r->evaluations);
  return std::shared_ptr<const ReplayRecords>(std::move(r));
}

Result<std::unique_ptr<ReplayEvaluator>> ReplayEvaluator::open(
    const std::vector<std::filesystem::path>& logs, std::vector<problem::Workload> workloads,
    uint64_t resample_seed) {
  auto records = ReplayRecords::load(logs);
  if (!records) return records.status();
  return over(std::move(records.value()), std::move(workloads), resample_seed);
}

std::unique_ptr<ReplayEvaluator> ReplayEvaluator::over(std::shared_ptr<const ReplayRecords> records,
                                                       std::vector<problem::Workload> workloads,
                                                       uint64_t resample_seed) {
  std::unique_ptr<ReplayEvaluator> r(new ReplayEvaluator());
  r->resample_seed_ = resample_seed;
  r->records_ = std::move(records);
  r->workloads_ = std::move(workloads);
  return r;
}

Result<fb::PeaksMeasuredT> ReplayEvaluator::peaks() {
  if (!records_->peaks) return Status::not_found("replay: no PeaksMeasured in the recorded logs");
  return *records_->peaks;
}

fb::CompileFinishedT ReplayEvaluator::compile(const Candidate& c, const std::string& hash) {
  if (auto it = records_->compiles.find(hash); it != records_->compiles.end()) return it->second;
  return compose_compile(*records_, c, hash, workloads_);
}

fb::CandidateEvaluatedT ReplayEvaluator::evaluate(const EvalRequest& request,
                                                  const fb::CompileFinishedT&) {
  const auto& evaluations = records_->evaluations;
  fb::CandidateEvaluatedT e;
  if (auto side = records_->pair_sides.find({request.candidate_hash, request.input_seed});
      side != records_->pair_sides.end()) {
    e = side->second;  // a side of a logged pair, asked for again with the pair's inputs
  } else if (auto it = evaluations.find(request.candidate_hash); it != evaluations.end()) {
    e = it->second;
  } else {
    e = compose_evaluation(*records_, request.candidate, request.candidate_hash, workloads_);
  }
  if (resample_seed_ != 0) resample(e, resample_seed_);
  for (const auto& w : e.workloads) {
    if (w->status == fb::WorkloadStatus::UNANSWERED) {
      std::lock_guard<std::mutex> lock(mu_);
      unanswered_.push_back(request.candidate_hash);
      break;
    }
  }
  return e;
}

std::vector<std::string> ReplayEvaluator::unanswered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unanswered_;
}

}  // namespace arc::eval
