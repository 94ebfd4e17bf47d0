#pragma once
// The replay evaluator answers from recorded measurements instead of a device: every
// CompileFinished and CandidateEvaluated in the given logs, keyed by candidate hash (and the
// device they were measured on). A candidate recorded by hash gets its record; any other is
// composed workload by workload from the records of the variant serving each workload
// (eval/replay_composition.h: a shape-gated candidate from a sweep's points). What it cannot
// answer it says, per workload (UNANSWERED, with the reason), and lists in unanswered().
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "eval/evaluator.h"
#include "eval/variant_index.h"
#include "problem/problem.h"

namespace arc::eval {

// The measurements of a set of logs, indexed once and shared read-only by any number of replay
// evaluators (an ablation runs hundreds of campaigns against the same sweep).
struct ReplayRecords {
  std::string device;                                 // of the first log that names one
  std::map<std::string, std::string> problem_hashes;  // log path -> problem hash
  std::optional<fb::PeaksMeasuredT> peaks;
  std::map<std::string, fb::CompileFinishedT> compiles;        // by candidate hash
  std::map<std::string, fb::CandidateEvaluatedT> evaluations;  // by candidate hash
  // Each side of every logged pair (PairMeasured) as an evaluation, by candidate hash and the
  // pair's input seed: a replayed campaign that asks for the same pair gets what was measured.
  std::map<std::pair<std::string, uint64_t>, fb::CandidateEvaluatedT> pair_sides;
  // Where each variant was measured and compiled (from the logs' CandidateProposed).
  VariantIndex variants;

  // Reads and indexes the logs (each a run directory's log folder, or a run directory).
  static Result<std::shared_ptr<const ReplayRecords>> load(
      const std::vector<std::filesystem::path>& logs);
};

class ReplayEvaluator : public Evaluator {
 public:
  // Indexes the logs (each a run directory's log folder, or a run directory) to answer for a
  // problem with these workloads (in problem order: composed answers walk them so). With a
  // resample seed other than 0, every answer redraws the recorded timing samples with
  // replacement (seeded by resample seed, the candidate asked for and workload) and recomputes
  // the statistics, so that counterfactual campaigns over several seeds see the measured noise.
  static Result<std::unique_ptr<ReplayEvaluator>> open(
      const std::vector<std::filesystem::path>& logs, std::vector<problem::Workload> workloads,
      uint64_t resample_seed = 0);
  // As open(), answering from records already loaded.
  static std::unique_ptr<ReplayEvaluator> over(std::shared_ptr<const ReplayRecords> records,
                                               std::vector<problem::Workload> workloads,
                                               uint64_t resample_seed = 0);

  std::string name() const override { return "replay"; }
  std::string device() const override { return records_->device; }
  Result<fb::PeaksMeasuredT> peaks() override;
  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override;
  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override;

  size_t recorded() const { return records_->evaluations.size(); }
  // Problem hash of every log given (from its CampaignStarted), by log path.
  const std::map<std::string, std::string>& problem_hashes() const {
    return records_->problem_hashes;
  }
  // Hashes of the candidates asked for with at least one UNANSWERED workload, in the order
  // asked.
  std::vector<std::string> unanswered() const;

 private:
  ReplayEvaluator() = default;
  uint64_t resample_seed_ = 0;
  std::shared_ptr<const ReplayRecords> records_;
  std::vector<problem::Workload> workloads_;
  mutable std::mutex mu_;
  std::vector<std::string> unanswered_;
};

}  // namespace arc::eval
