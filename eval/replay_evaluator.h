#pragma once
// The replay evaluator answers from recorded measurements instead of a device: every
// CompileFinished and CandidateEvaluated in the given logs, keyed by candidate hash (and the
// device they were measured on). What it cannot answer it says, per workload (UNANSWERED), and
// lists in unanswered().
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "events/status.h"

namespace arc::eval {

class ReplayEvaluator : public Evaluator {
 public:
  // Indexes the logs (each a run directory's log folder, or a run directory). With a
  // resample seed other than 0, every answer redraws the recorded timing samples with
  // replacement (seeded by resample seed, candidate and workload) and recomputes the statistics,
  // so that counterfactual campaigns over several seeds see the measured noise.
  static Result<std::unique_ptr<ReplayEvaluator>> open(
      const std::vector<std::filesystem::path>& logs, uint64_t resample_seed = 0);

  std::string name() const override { return "replay"; }
  std::string device() const override { return device_; }
  Result<fb::PeaksMeasuredT> peaks() override;
  fb::CompileFinishedT compile(const Candidate& c, const std::string& hash) override;
  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override;

  size_t recorded() const { return evaluations_.size(); }
  // Problem hash of every log given (from its CampaignStarted), by log path.
  const std::map<std::string, std::string>& problem_hashes() const { return problem_hashes_; }
  // Hashes of the candidates asked for and not found, in the order asked.
  std::vector<std::string> unanswered() const;

 private:
  ReplayEvaluator() = default;
  uint64_t resample_seed_ = 0;
  std::string device_;
  std::map<std::string, std::string> problem_hashes_;
  std::optional<fb::PeaksMeasuredT> peaks_;
  std::map<std::string, fb::CompileFinishedT> compiles_;
  std::map<std::string, fb::CandidateEvaluatedT> evaluations_;
  mutable std::mutex mu_;
  std::vector<std::string> unanswered_;
};

}  // namespace arc::eval
