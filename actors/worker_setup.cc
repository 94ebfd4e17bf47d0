#include "actors/worker_setup.h"

#include "cuda/driver.h"
#include "eval/remote_evaluator.h"
#include "eval/worker_secret.h"

namespace arc::actors {

Status configure_workers(RunOptions& options, const CampaignConfig& config,
                         const problem::Problem& problem, const eval::EvaluatorChoice& choice,
                         const WorkerFlags& flags) {
  std::string text = flags.workers;
  std::string what = "--workers";
  if (text.empty() && !config.workers.empty()) {
    what = config.file.string() + ": [[workers]]";
    for (const auto& w : config.workers) text += (text.empty() ? "" : ",") + w;
  }
  if (text.empty()) text = "auto";
  auto specs = parse_worker_list(text, what);
  if (!specs) return specs.status();
  const std::string backend = choice.kind == "auto" ? problem.backend : choice.kind;
  if (specs->empty()) specs = auto_workers(backend == "cuda" ? cuda::device_count() : 1);
  bool remote = false;
  for (const auto& s : specs.value()) remote = remote || !s.local;
  options.workers = std::move(specs.value());
  options.make_local_worker = [choice](const problem::Problem& p, int device) {
    eval::EvaluatorChoice c = choice;
    c.device = device;
    return eval::make_evaluator(c, p);
  };
  if (!remote) return Status::ok();
  const std::filesystem::path secret_file = flags.secret_file.empty()
                                                ? eval::default_worker_secret_path()
                                                : std::filesystem::path(flags.secret_file);
  auto secret = eval::read_worker_secret(secret_file);
  if (!secret) {
    return Status::invalid_argument("--worker-secret: " + secret.status().message() +
                                    " (remote workers need the secret their `arc-eval --serve` "
                                    "holds; `arc-eval --new-secret FILE` writes one)");
  }
  options.connect_worker = [key = secret.value()](const problem::Problem& p,
                                                  const WorkerSpec& spec) {
    eval::RemoteEvaluatorOptions o;
    o.endpoint.host = spec.host;
    o.endpoint.port = spec.port;
    o.secret = key;
    return eval::make_remote_evaluator(p, o);
  };
  return Status::ok();
}

}  // namespace arc::actors
