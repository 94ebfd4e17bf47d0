#include "eval/evaluators.h"

#include <cstdlib>

#include "eval/cuda_evaluator.h"
#include "eval/host_evaluator.h"
#include "eval/replay_evaluator.h"
#include "eval/synthetic_evaluator.h"

namespace arc::eval {

using problem::Problem;

std::filesystem::path default_cache_dir() {
  if (const char* c = std::getenv("ARC_CACHE"); c != nullptr && *c != '\0') return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return std::filesystem::path(x) / "kernelarc";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::filesystem::path(h) / ".cache" / "kernelarc";
  }
  return "/tmp/kernelarc-cache";
}

namespace {

// A measuring backend runs the problems written for it: `problem.backend` is its name.
Status runs_its_own(const char* backend, const Problem& problem) {
  if (problem.backend == backend) return Status::ok();
  return Status::invalid_argument(problem.file.string() + ": field 'backend': the " + backend +
                                  " evaluator runs \"" + backend + "\" problems, got \"" +
                                  problem.backend + "\"");
}

Result<std::unique_ptr<Evaluator>> make_host(const EvaluatorChoice& choice,
                                             const Problem& problem) {
  if (Status s = runs_its_own("host", problem); !s) return s;
  HostEvaluatorOptions o;
  o.cache_dir = choice.cache_dir;
  o.sandbox = choice.sandbox;
  return std::unique_ptr<Evaluator>(new HostEvaluator(problem, o));
}

Result<std::unique_ptr<Evaluator>> make_cuda(const EvaluatorChoice& choice,
                                             const Problem& problem) {
  if (Status s = runs_its_own("cuda", problem); !s) return s;
  CudaEvaluatorOptions o;
  o.cache_dir = choice.cache_dir;
  o.device = choice.device;
  o.sandbox = choice.sandbox;
  return std::unique_ptr<Evaluator>(new CudaEvaluator(problem, o));
}

Result<std::unique_ptr<Evaluator>> make_replay(const EvaluatorChoice& choice,
                                               const Problem& problem) {
  if (choice.replay_logs.empty() && !choice.replay_records) {
    return Status::invalid_argument(
        "--replay-from: the replay evaluator needs at least one "
        "recorded run directory");
  }
  auto r = choice.replay_records
               ? Result<std::unique_ptr<ReplayEvaluator>>(ReplayEvaluator::over(
                     choice.replay_records, problem.workloads, choice.resample_seed))
               : ReplayEvaluator::open(choice.replay_logs, problem.workloads, choice.resample_seed);
  if (!r) return r.status();
  // Measurements of another version of the problem answer nothing about this one.
  for (const auto& [log, hash] : r.value()->problem_hashes()) {
    if (hash != problem.hash) {
      return Status::invalid_argument(
          "--replay-from " + log + ": expected measurements of problem " + problem.name +
          " with hash " + problem.hash.substr(0, 12) + ", got hash " + hash.substr(0, 12) +
          " (its files changed since, or it is another problem)");
    }
  }
  return std::unique_ptr<Evaluator>(std::move(r.value()));
}

Result<std::unique_ptr<Evaluator>> make_synthetic(const EvaluatorChoice& choice,
                                                  const Problem& problem) {
  return make_synthetic_evaluator(problem, choice.synthetic_seconds);
}

const EvaluatorBackend kBackends[] = {
    {"host", true, make_host},
    {"cuda", true, make_cuda},
    {"replay", false, make_replay},
    {"synthetic", false, make_synthetic},
};

}  // namespace

const EvaluatorBackend* find_evaluator_backend(const std::string& name) {
  for (const auto& b : kBackends) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

std::vector<std::string> evaluator_choices(bool measuring_only) {
  std::vector<std::string> out{"auto"};
  for (const auto& b : kBackends) {
    if (b.measures || !measuring_only) out.emplace_back(b.name);
  }
  return out;
}

Result<std::unique_ptr<Evaluator>> make_evaluator(const EvaluatorChoice& choice,
                                                  const Problem& problem) {
  const std::string& kind = choice.kind == "auto" ? problem.backend : choice.kind;
  if (const EvaluatorBackend* b = find_evaluator_backend(kind); b != nullptr) {
    return b->make(choice, problem);
  }
  std::string expected;
  const auto names = evaluator_choices();
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += "\"" + names[i] + "\"";
  }
  return Status::invalid_argument("--evaluator: expected " + expected + ", got \"" + kind + "\"");
}

}  // namespace arc::eval
