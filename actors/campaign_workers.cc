#include "actors/campaign_workers.h"

#include <memory>

#include "actors/worker_admission.h"
#include "eval/evaluators.h"
#include "eval/quarantine.h"

namespace arc::actors {
namespace {

using Made = Result<std::unique_ptr<eval::Evaluator>>;

// `made` in the run's quarantine (null: none) when its backend measures.
Made quarantined(Made made, const std::shared_ptr<eval::QuarantineLedger>& ledger,
                 const problem::Problem& problem) {
  if (!made || ledger == nullptr) return made;
  const eval::EvaluatorBackend* backend = eval::find_evaluator_backend(made.value()->name());
  if (backend == nullptr || !backend->measures) return made;
  return eval::with_quarantine(std::move(made.value()), ledger, problem);
}

}  // namespace

Result<OpenedWorkers> open_workers(const problem::Problem& problem, const RunOptions& options,
                                   const std::filesystem::path& quarantine_dir) {
  std::vector<WorkerSpec> specs = options.workers;
  if (specs.empty()) specs = auto_workers(1);
  OpenedWorkers out;
  // One for all the workers: they may measure one candidate at once.
  const std::shared_ptr<eval::QuarantineLedger> ledger =
      quarantine_dir.empty() ? nullptr : eval::open_quarantine(quarantine_dir);
  std::string unreachable, refused;
  for (const auto& spec : specs) {
    CampaignWorker w;
    w.name = spec.name;
    w.local = spec.local;
    if (spec.local) {
      Made made = options.make_local_worker ? options.make_local_worker(problem, spec.device)
                  : spec.device == 0
                      ? options.make_evaluator(problem)
                      : Made(Status::invalid_argument(
                            "worker " + spec.name + ": this evaluator has no device " +
                            std::to_string(spec.device) + "; expected local or local:0"));
      made = quarantined(std::move(made), ledger, problem);
      if (!made) return made.status();
      w.owned = std::move(made.value());
      w.evaluator = w.owned.get();
    } else {
      if (!options.connect_worker) {
        return Status::invalid_argument("worker " + spec.name +
                                        ": remote workers are not available to this run");
      }
      auto copy = std::make_shared<const problem::Problem>(problem);
      auto connect = options.connect_worker;
      w.connect = [copy, connect, spec, ledger]() {
        return quarantined(connect(*copy, spec), ledger, *copy);
      };
      Made made = w.connect();
      if (made) {
        w.owned = std::move(made.value());
        w.evaluator = w.owned.get();
      } else if (made.status().code() == Status::Code::kInvalidArgument) {
        refused += "\n  " + spec.name + ": " + made.status().message();
      } else {
        w.unreachable = made.status().message();
        unreachable += "\n  " + spec.name + ": " + w.unreachable;
        if (options.worker_notice) {
          options.worker_notice("worker " + spec.name + " cannot be reached (" + w.unreachable +
                                "); the campaign takes it in when it answers");
        }
      }
    }
    out.workers.push_back(std::move(w));
  }
  // Wrong credentials, or a worker that cannot take the problem: waiting will not mend it.
  if (!refused.empty()) {
    return Status::invalid_argument("workers refused the run (check --worker-secret):" + refused);
  }
  const CampaignWorker* first = nullptr;
  std::vector<LiveWorker> live;
  for (const auto& w : out.workers) {
    if (w.evaluator == nullptr) continue;
    if (first == nullptr) {
      first = &w;
      if (out.device_model.empty()) out.device_model = w.evaluator->device_model();
    }
    const std::string refusal = admission_refusal(out.device_model, w.evaluator->device_model(),
                                                  w.evaluator->device_key(), live);
    if (!refusal.empty()) return Status::invalid_argument("worker " + w.name + ": " + refusal);
    live.push_back({w.name, w.evaluator->device_key()});
  }
  if (first == nullptr) {
    return Status::unavailable("no worker could be reached:" + unreachable);
  }
  out.first = first->evaluator;
  return out;
}

}  // namespace arc::actors
