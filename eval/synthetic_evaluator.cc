#include "eval/synthetic_evaluator.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "base/sha256.h"
#include "eval/worker_client.h"

namespace arc::eval {
namespace {

class SyntheticEvaluator final : public Evaluator {
 public:
  SyntheticEvaluator(const problem::Problem& problem, double seconds)
      : workloads_(problem.workloads), seconds_(seconds) {}

  std::string name() const override { return "synthetic"; }
  std::string device() const override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "synthetic: %.3f s per evaluation", seconds_);
    return buf;
  }
  Result<fb::PeaksMeasuredT> peaks() override {
    fb::PeaksMeasuredT p;
    p.device = device();
    p.bandwidth_bytes_per_s = 1e12;
    p.flops_per_s = 1e12;
    p.method = "synthetic";
    return p;
  }
  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override {
    fb::CompileFinishedT out;
    out.candidate_hash = hash;
    out.ok = true;
    for (const auto& v : distinct_variants(c, workloads_)) {
      auto cv = std::make_unique<fb::CompiledVariantT>();
      cv->variant = v.key();
      cv->ok = true;
      cv->options = "synthetic: nothing compiled";
      out.variants.push_back(std::move(cv));
    }
    return out;
  }
  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT&) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds_));
    fb::CandidateEvaluatedT e;
    e.candidate_hash = request.candidate_hash;
    e.device = device();
    e.evaluator = name();
    e.input_seed = request.input_seed;
    e.wall_seconds = seconds_;
    // 1 to 2 us per workload unit, from the hash: distinct candidates, equal repeats.
    const std::string digest = sha256_hex(request.candidate_hash);
    const double factor = 1.0 + static_cast<double>(std::stoul(digest.substr(0, 6), nullptr, 16)) /
                                    static_cast<double>(0xffffff);
    for (size_t i = 0; i < workloads_.size(); ++i) {
      auto w = make_workload(workloads_[i].name, fb::WorkloadStatus::OK, "", "synthetic");
      const double t = 1000.0 * factor * static_cast<double>(i + 1);
      w->samples_ns = {t, t, t};
      w->median_ns = w->p25_ns = w->p75_ns = w->min_ns = t;
      w->rounds = request.settings.rounds;
      w->matched_ratio = 1.0;
      e.workloads.push_back(std::move(w));
    }
    return e;
  }

 private:
  std::vector<problem::Workload> workloads_;
  double seconds_;
};

}  // namespace

std::unique_ptr<Evaluator> make_synthetic_evaluator(const problem::Problem& problem,
                                                    double seconds_per_evaluation) {
  return std::make_unique<SyntheticEvaluator>(problem, seconds_per_evaluation);
}

}  // namespace arc::eval
