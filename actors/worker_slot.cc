// The worker slot actor (actors/worker_slot.h).
#include "actors/worker_slot.h"

#include <map>

#include "actors/messages.h"
#include "eval/pair.h"

namespace arc::actors {
namespace {

struct SlotState {
  CampaignWorker* worker = nullptr;
  const problem::Problem* problem = nullptr;
  // This worker's compiles, by candidate hash: a paired candidate or incumbent is compiled once.
  std::map<std::string, fb::CompileFinishedT> compiled;
  static inline const char* name = "arc.worker_slot";
};

using SlotActor = caf::stateful_actor<SlotState>*;

// The candidate `hash` compiled on this worker: the guard's compile when it was made in this
// process and the worker is local, else this worker's own (kept for later pairs).
const fb::CompileFinishedT& compile_on(SlotState& st, const problem::Candidate& c,
                                       const std::string& hash,
                                       const std::shared_ptr<const fb::CompileFinishedT>& pre) {
  auto it = st.compiled.find(hash);
  if (it != st.compiled.end()) return it->second;
  fb::CompileFinishedT made =
      pre != nullptr && st.worker->local ? *pre : st.worker->evaluator->compile(c, hash);
  return st.compiled.emplace(hash, std::move(made)).first->second;
}

EvalOutcome evaluate(SlotState& st, const EvalJob& job) {
  EvalOutcome out;
  if (std::string why = lost_reason(*st.worker); !why.empty()) {
    out.lost = why;
    return out;
  }
  auto candidate = problem::Candidate::from_canonical(job.canonical);
  if (!candidate) {
    // The guard logs it as the candidate's compile error; nothing runs.
    out.compiled.ok = false;
    for (const auto& w : st.problem->workloads) {
      auto we = std::make_unique<fb::WorkloadEvaluationT>();
      we->workload = w.name;
      we->status = fb::WorkloadStatus::COMPILE_ERROR;
      we->error = "malformed candidate: " + candidate.status().message();
      out.evaluation.workloads.push_back(std::move(we));
    }
    return out;
  }
  out.compiled = compile_on(st, candidate.value(), job.hash, job.precompiled);
  if (std::string why = lost_reason(*st.worker); !why.empty()) {
    st.compiled.erase(job.hash);  // made up by a worker that went away
    out.lost = why;
    return out;
  }
  eval::EvalRequest req;
  req.candidate = std::move(candidate.value());
  req.candidate_hash = job.hash;
  req.input_seed = job.input_seed;
  req.settings = job.settings;
  out.evaluation = st.worker->evaluator->evaluate(req, out.compiled);
  out.evaluation.input_seed = job.input_seed;
  out.lost = lost_reason(*st.worker);
  return out;
}

// A pair of a paired decision on this worker. An incumbent that cannot be rebuilt any more is
// that pair's failure (the decision REVERTs naming it), never the candidate's.
PairOutcome measure(SlotState& st, const PairJob& job) {
  PairOutcome out;
  if (std::string why = lost_reason(*st.worker); !why.empty()) {
    out.lost = why;
    return out;
  }
  auto load = [&st](const std::string& hash, const std::string& canonical, problem::Candidate* c,
                    const fb::CompileFinishedT** compiled) -> std::string {
    if (canonical.empty()) return "its proposal is not in the log";
    auto parsed = problem::Candidate::from_canonical(canonical);
    if (!parsed) return "malformed candidate: " + parsed.status().message();
    *c = std::move(parsed.value());
    *compiled = &compile_on(st, *c, hash, nullptr);
    if (!(*compiled)->ok) return "it no longer compiles";
    return "";
  };
  problem::Candidate cand, inc;
  const fb::CompileFinishedT* cand_compiled = nullptr;
  const fb::CompileFinishedT* inc_compiled = nullptr;
  const std::string cand_error =
      load(job.candidate_hash, job.candidate_canonical, &cand, &cand_compiled);
  const std::string inc_error =
      load(job.incumbent_hash, job.incumbent_canonical, &inc, &inc_compiled);
  if (std::string why = lost_reason(*st.worker); !why.empty()) {
    st.compiled.erase(job.candidate_hash);
    st.compiled.erase(job.incumbent_hash);
    out.lost = why;
    return out;
  }
  fb::PairMeasuredT& pair = out.pair;
  if (cand_error.empty() && inc_error.empty()) {
    pair = eval::measure_pair(*st.worker->evaluator, {&cand, job.candidate_hash, cand_compiled},
                              {&inc, job.incumbent_hash, inc_compiled}, job.candidate_first,
                              job.input_seed, job.settings);
    out.lost = lost_reason(*st.worker);
    return out;
  }
  pair.candidate_hash = job.candidate_hash;
  pair.incumbent_hash = job.incumbent_hash;
  pair.candidate_first = job.candidate_first;
  pair.input_seed = job.input_seed;
  const bool inc_failed = !inc_error.empty();
  for (const auto& w : st.problem->workloads) {
    auto pw = std::make_unique<fb::PairWorkloadT>();
    pw->workload = w.name;
    pw->candidate = std::make_unique<fb::PairSideT>();
    pw->incumbent = std::make_unique<fb::PairSideT>();
    pw->incumbent->status =
        inc_failed ? fb::WorkloadStatus::COMPILE_ERROR : fb::WorkloadStatus::NOT_RUN;
    pw->incumbent->error =
        inc_failed ? "the incumbent " + job.incumbent_hash.substr(0, 12) + ": " + inc_error : "";
    pw->candidate->status =
        inc_failed ? fb::WorkloadStatus::NOT_RUN : fb::WorkloadStatus::COMPILE_ERROR;
    pw->candidate->error = inc_failed ? "" : cand_error;
    pair.workloads.push_back(std::move(pw));
  }
  return out;
}

ConnectOutcome reach(SlotState& st) {
  ConnectOutcome out;
  CampaignWorker& w = *st.worker;
  bool renewed = false;
  if (Status s = reach_worker(w, &renewed); !s) {
    out.error = s.message();
    out.refused = s.code() == Status::Code::kInvalidArgument;
    return out;
  }
  if (renewed) st.compiled.clear();  // a new connection may be a new worker with an empty cache
  out.device = w.evaluator->device();
  out.device_model = w.evaluator->device_model();
  out.device_key = w.evaluator->device_key();
  return out;
}

}  // namespace

caf::actor spawn_worker_slot(caf::actor_system& sys, CampaignWorker* worker,
                             const problem::Problem* problem, bool detached) {
  auto impl = [](SlotActor self, CampaignWorker* worker,
                 const problem::Problem* problem) -> caf::behavior {
    self->state.worker = worker;
    self->state.problem = problem;
    return {
        [self](evaluate_atom, const EvalJob& job) { return evaluate(self->state, job); },
        [self](pair_atom, const PairJob& job) { return measure(self->state, job); },
        [self](peaks_atom) {
          PeaksOutcome out;
          if (std::string why = lost_reason(*self->state.worker); !why.empty()) {
            out.lost = why;
            return out;
          }
          auto p = self->state.worker->evaluator->peaks();
          out.lost = lost_reason(*self->state.worker);
          if (p) {
            out.peaks = std::move(p.value());
          } else {
            out.error = p.status().to_string();
          }
          return out;
        },
        [self](reach_atom) { return reach(self->state); },
    };
  };
  if (detached) return sys.spawn<caf::detached>(impl, worker, problem);
  return sys.spawn(impl, worker, problem);
}

}  // namespace arc::actors
