#include "eval/replay_evaluator.h"

#include <algorithm>

#include "storage/journal.h"

namespace arc::eval {

Result<std::unique_ptr<ReplayEvaluator>> ReplayEvaluator::open(
    const std::vector<std::filesystem::path>& logs) {
  std::unique_ptr<ReplayEvaluator> r(new ReplayEvaluator());
  for (const auto& path : logs) {
    auto dir = std::filesystem::exists(path / "log") ? path / "log" : path;
    storage::JournalOptions jo;
    jo.read_only = true;
    jo.create_if_missing = false;
    auto j = storage::Journal::open(dir.string(), jo);
    if (!j) return Status(j.status());
    Status s = j.value()->read(1, 0, [&r](uint64_t, const events::Event& e) {
      switch (e.payload.type) {
        case fb::Payload::CampaignStarted:
          if (r->device_.empty()) r->device_ = e.payload.AsCampaignStarted()->device;
          break;
        case fb::Payload::PeaksMeasured:
          if (!r->peaks_) r->peaks_ = *e.payload.AsPeaksMeasured();
          break;
        case fb::Payload::CompileFinished: {
          const auto* p = e.payload.AsCompileFinished();
          r->compiles_.emplace(p->candidate_hash, *p);
          break;
        }
        case fb::Payload::CandidateEvaluated: {
          const auto* p = e.payload.AsCandidateEvaluated();
          r->evaluations_.emplace(p->candidate_hash, *p);
          break;
        }
        default:
          break;
      }
      return true;
    });
    if (!s) return Status::corruption(dir.string() + ": " + s.message());
  }
  return r;
}

Result<fb::PeaksMeasuredT> ReplayEvaluator::peaks() {
  if (!peaks_) return Status::not_found("replay: no PeaksMeasured in the recorded logs");
  return *peaks_;
}

fb::CompileFinishedT ReplayEvaluator::compile(const Candidate&, const std::string& hash) {
  if (auto it = compiles_.find(hash); it != compiles_.end()) return it->second;
  fb::CompileFinishedT c;
  c.candidate_hash = hash;
  c.ok = true;  // nothing to compile: evaluate() says what is missing
  c.toolchain = "replay";
  return c;
}

fb::CandidateEvaluatedT ReplayEvaluator::evaluate(const EvalRequest& request,
                                                  const fb::CompileFinishedT&) {
  if (auto it = evaluations_.find(request.candidate_hash); it != evaluations_.end()) {
    return it->second;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    unanswered_.push_back(request.candidate_hash);
  }
  fb::CandidateEvaluatedT e;
  e.candidate_hash = request.candidate_hash;
  e.device = device_;
  e.evaluator = "replay";
  // One UNANSWERED entry stands for every workload: the guard REJECTs the candidate with it.
  auto w = std::make_unique<fb::WorkloadEvaluationT>();
  w->workload = "*";
  w->status = fb::WorkloadStatus::UNANSWERED;
  w->error = "replay: no recorded measurement of candidate " + request.candidate_hash.substr(0, 12);
  e.workloads.push_back(std::move(w));
  return e;
}

std::vector<std::string> ReplayEvaluator::unanswered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unanswered_;
}

}  // namespace arc::eval
