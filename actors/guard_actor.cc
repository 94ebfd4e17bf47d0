// The guard actor: dedups, compiles (a parallel pool for a lockstep round), evaluates one
// candidate at a time on its device, asks the guard core for the verdict and logs every step.
#include <algorithm>
#include <deque>
#include <future>
#include <map>

#include "actors/agent_core.h"
#include "actors/follower.h"
#include "actors/guard_core.h"
#include "actors/messages.h"
#include "actors/shells.h"
#include "actors/view.h"
#include "eval/pair.h"

namespace arc::actors {
namespace {

struct guard_item {
  submission sub;
  caf::response_promise promise;       // a single submission's promise
  std::shared_ptr<verdict_list> list;  // set for lockstep rounds
  std::shared_ptr<size_t> remaining;
  size_t index = 0;
};

struct guard_state {
  std::unique_ptr<GuardCore> core;
  Follower follower;
  caf::actor journal;
  caf::actor plateau;
  std::deque<guard_item> queue;
  bool busy = false;
  uint64_t last_own_seq = 0;
  std::map<std::string, fb::CandidateEvaluatedT> evaluations;
  std::map<std::string, fb::CompileFinishedT> precompiled;
  // Every proposed candidate's canonical form, and the compiles kept for pairing: an incumbent
  // is measured again whenever a candidate of its agent is paired with it.
  std::map<std::string, std::string> canonicals;
  std::map<std::string, fb::CompileFinishedT> compiled;
  static inline const char* name = "arc.guard";
};

using guard_actor = caf::stateful_actor<guard_state>*;

uint64_t hash_prefix(const std::string& hex) {
  uint64_t v = 0;
  for (size_t i = 0; i < 16 && i < hex.size(); ++i) {
    const char c = hex[i];
    v = (v << 4) | static_cast<uint64_t>(c >= 'a' ? c - 'a' + 10 : c - '0');
  }
  return v;
}

void pump(guard_actor self, CampaignContext* ctx);

void finish(guard_actor self, CampaignContext* ctx, verdict_msg v) {
  guard_item item = std::move(self->state.queue.front());
  self->state.queue.pop_front();
  self->state.last_own_seq = std::max(self->state.last_own_seq, v.last_seq);
  if (item.list) {
    item.list->items[item.index] = std::move(v);
    if (--*item.remaining == 0) item.promise.deliver(*item.list);
  } else {
    item.promise.deliver(std::move(v));
  }
  self->state.busy = false;
  pump(self, ctx);
}

void fail(guard_actor self, CampaignContext* ctx, caf::error err) {
  // A journal failure: every waiting requester learns it; nothing more is evaluated.
  while (!self->state.queue.empty()) {
    self->state.queue.front().promise.deliver(err);
    self->state.queue.pop_front();
  }
  self->quit(err);
}

// Logs the decision (and its conclusion), asks the plateau detector, then finishes the item.
void record_decision(guard_actor self, CampaignContext* ctx, GuardOutcome outcome) {
  event_list list;
  verdict_msg v;
  v.candidate_hash = outcome.decision.candidate_hash;
  v.verdict = outcome.decision.verdict;
  v.reason = outcome.decision.reason;
  list.events.push_back(events::make_event(kGuardActor, std::move(outcome.decision)));
  if (outcome.conclusion) {
    list.events.push_back(events::make_event(kGuardActor, std::move(*outcome.conclusion)));
  }
  self->request(self->state.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx, v](const seq_list& seqs) mutable {
            self->request(self->state.plateau, caf::infinite, check_atom_v, seqs.seqs.back())
                .then(
                    [self, ctx, v](uint64_t last) mutable {
                      v.last_seq = last;
                      finish(self, ctx, std::move(v));
                    },
                    [self, ctx](caf::error& err) { fail(self, ctx, err); });
          },
          [self, ctx](caf::error& err) { fail(self, ctx, err); });
}

// The input stream of pair `index` of a candidate's paired decision.
constexpr uint64_t kPairSeedStream = 0x9a1e0000;

// A pair of a paired decision, measured on the guard's evaluator. An incumbent that cannot be
// rebuilt any more is that pair's failure (the decision REVERTs naming it), never the
// candidate's.
fb::PairMeasuredT measure_next_pair(guard_actor self, CampaignContext* ctx,
                                    const fb::CandidateProposedT& proposal,
                                    const PairRequest& request, uint64_t evaluation_seq) {
  auto load = [self, ctx](const std::string& hash, problem::Candidate* out,
                          const fb::CompileFinishedT** compiled) -> std::string {
    auto& st = self->state;
    auto text = st.canonicals.find(hash);
    if (text == st.canonicals.end()) return "its proposal is not in the log";
    auto c = problem::Candidate::from_canonical(text->second);
    if (!c) return "malformed candidate: " + c.status().message();
    *out = std::move(c.value());
    auto it = st.compiled.find(hash);
    if (it == st.compiled.end())
      it = st.compiled.emplace(hash, ctx->evaluator->compile(*out, hash)).first;
    *compiled = &it->second;
    if (!it->second.ok) return "it no longer compiles";
    return "";
  };
  problem::Candidate cand, inc;
  const fb::CompileFinishedT* cand_compiled = nullptr;
  const fb::CompileFinishedT* inc_compiled = nullptr;
  const std::string cand_error = load(proposal.candidate_hash, &cand, &cand_compiled);
  const std::string inc_error = load(request.incumbent_hash, &inc, &inc_compiled);
  const uint64_t input_seed = seed_for(ctx->config.seed, hash_prefix(proposal.candidate_hash),
                                       kPairSeedStream + request.index);
  fb::PairMeasuredT pair;
  if (cand_error.empty() && inc_error.empty()) {
    eval::EvalSettings settings = ctx->config.evaluation;
    settings.rounds = 1;  // a check on the pair's own fresh inputs; the evaluation ran R rounds
    settings.repetitions = ctx->config.pair_repetitions.value_or(settings.repetitions);
    pair = eval::measure_pair(*ctx->evaluator, {&cand, proposal.candidate_hash, cand_compiled},
                              {&inc, request.incumbent_hash, inc_compiled}, request.candidate_first,
                              input_seed, settings);
  } else {
    pair.candidate_hash = proposal.candidate_hash;
    pair.incumbent_hash = request.incumbent_hash;
    pair.candidate_first = request.candidate_first;
    pair.input_seed = input_seed;
    for (const auto& w : ctx->problem.workloads) {
      auto pw = std::make_unique<fb::PairWorkloadT>();
      pw->workload = w.name;
      pw->candidate = std::make_unique<fb::PairSideT>();
      pw->incumbent = std::make_unique<fb::PairSideT>();
      const bool inc_failed = !inc_error.empty();
      pw->incumbent->status =
          inc_failed ? fb::WorkloadStatus::COMPILE_ERROR : fb::WorkloadStatus::NOT_RUN;
      pw->incumbent->error =
          inc_failed ? "the incumbent " + request.incumbent_hash.substr(0, 12) + ": " + inc_error
                     : "";
      pw->candidate->status =
          inc_failed ? fb::WorkloadStatus::NOT_RUN : fb::WorkloadStatus::COMPILE_ERROR;
      pw->candidate->error = inc_failed ? "" : cand_error;
      pair.workloads.push_back(std::move(pw));
    }
  }
  pair.agent = proposal.agent;
  pair.index = request.index;
  pair.evaluation_seq = evaluation_seq;
  return pair;
}

// Measures the pairs the decision still needs, one logged event each (a resumed campaign goes
// on from the last logged pair), then decides.
void settle(guard_actor self, CampaignContext* ctx, const fb::CandidateEvaluatedT& evaluation,
            uint64_t eval_seq) {
  auto& st = self->state;
  const auto& proposal = st.queue.front().sub.proposal;
  auto next = st.core->next_pair(proposal, evaluation, eval_seq);
  if (!next) {
    record_decision(self, ctx, st.core->decide(proposal, evaluation, eval_seq));
    return;
  }
  event_list list;
  list.events.push_back(
      events::make_event(kGuardActor, measure_next_pair(self, ctx, proposal, *next, eval_seq)));
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx, evaluation, eval_seq](const seq_list& seqs) mutable {
            // The core must have applied the pair before it says what is next.
            self->state.follower.when(seqs.seqs.back(), [self, ctx, evaluation, eval_seq] {
              settle(self, ctx, evaluation, eval_seq);
            });
          },
          [self, ctx](caf::error& err) { fail(self, ctx, err); });
}

void process(guard_actor self, CampaignContext* ctx) {
  const submission& sub = self->state.queue.front().sub;
  const auto& proposal = sub.proposal;
  auto& st = self->state;
  if (auto stop = st.core->stop_decision(proposal)) {
    record_decision(self, ctx, GuardOutcome{std::move(*stop), std::nullopt});
    return;
  }
  if (auto earlier = st.core->earlier_evaluation(proposal.candidate_hash)) {
    auto it = st.evaluations.find(proposal.candidate_hash);
    if (it != st.evaluations.end()) {
      settle(self, ctx, it->second, *earlier);
      return;
    }
  }
  fb::CompileFinishedT compiled;
  auto pre = st.precompiled.find(proposal.candidate_hash);
  auto candidate = problem::Candidate::from_canonical(proposal.canonical);
  if (pre != st.precompiled.end()) {
    compiled = std::move(pre->second);
    st.precompiled.erase(pre);
  } else if (candidate) {
    compiled = ctx->evaluator->compile(candidate.value(), proposal.candidate_hash);
  }
  fb::CandidateEvaluatedT evaluation;
  if (!candidate) {
    compiled.candidate_hash = proposal.candidate_hash;
    compiled.ok = false;
    evaluation.candidate_hash = proposal.candidate_hash;
    for (const auto& w : ctx->problem.workloads) {
      auto we = std::make_unique<fb::WorkloadEvaluationT>();
      we->workload = w.name;
      we->status = fb::WorkloadStatus::COMPILE_ERROR;
      we->error = "malformed candidate: " + candidate.status().message();
      evaluation.workloads.push_back(std::move(we));
    }
  } else {
    eval::EvalRequest req;
    req.candidate = candidate.value();
    req.candidate_hash = proposal.candidate_hash;
    req.input_seed = seed_for(ctx->config.seed, hash_prefix(proposal.candidate_hash), 0x5eed);
    req.settings = ctx->config.evaluation;
    evaluation = ctx->evaluator->evaluate(req, compiled);
    evaluation.input_seed = req.input_seed;
  }
  evaluation.candidate_hash = proposal.candidate_hash;
  compiled.candidate_hash = proposal.candidate_hash;
  if (compiled.ok) st.compiled[proposal.candidate_hash] = compiled;
  event_list list;
  list.events.push_back(events::make_event(kGuardActor, std::move(compiled)));
  list.events.push_back(events::make_event(kGuardActor, evaluation));
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx, evaluation](const seq_list& seqs) mutable {
            const uint64_t eval_seq = seqs.seqs.back();
            self->state.follower.when(eval_seq, [self, ctx, evaluation, eval_seq] {
              settle(self, ctx, evaluation, eval_seq);
            });
          },
          [self, ctx](caf::error& err) { fail(self, ctx, err); });
}

void pump(guard_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (st.busy || st.queue.empty()) return;
  st.busy = true;
  const uint64_t need = std::max(st.queue.front().sub.seq, st.last_own_seq);
  st.follower.when(need, [self, ctx] { process(self, ctx); });
}

void precompile(guard_actor self, CampaignContext* ctx, const submission_list& subs) {
  // Compile the round's new candidates in parallel; evaluation stays one at a time.
  std::vector<std::pair<std::string, problem::Candidate>> todo;
  for (const auto& s : subs.items) {
    const auto& h = s.proposal.candidate_hash;
    if (self->state.core->earlier_evaluation(h) || self->state.precompiled.count(h)) continue;
    auto c = problem::Candidate::from_canonical(s.proposal.canonical);
    if (c) todo.emplace_back(h, std::move(c.value()));
  }
  const size_t jobs = std::max<uint32_t>(1, ctx->compile_jobs);
  if (jobs == 1) {
    for (const auto& [h, c] : todo) self->state.precompiled[h] = ctx->evaluator->compile(c, h);
    return;
  }
  for (size_t start = 0; start < todo.size(); start += jobs) {
    std::vector<std::future<fb::CompileFinishedT>> futures;
    for (size_t i = start; i < std::min(todo.size(), start + jobs); ++i) {
      futures.push_back(std::async(std::launch::async, [ctx, &todo, i] {
        return ctx->evaluator->compile(todo[i].second, todo[i].first);
      }));
    }
    for (size_t i = 0; i < futures.size(); ++i) {
      self->state.precompiled[todo[start + i].first] = futures[i].get();
    }
  }
}

}  // namespace

caf::actor spawn_guard(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                       caf::actor plateau) {
  auto impl = [](guard_actor self, CampaignContext* ctx, caf::actor journal,
                 caf::actor plateau) -> caf::behavior {
    self->state.core = ctx->cores->guard();
    self->state.journal = journal;
    self->state.plateau = plateau;
    self->send(journal, subscribe_atom_v, caf::actor{self});
    return {
        [self](const published_events& p) {
          follow(self, self->state.follower, p, [self](const events::Event& e) {
            self->state.core->apply(e);
            // Evaluations already in the log (a resumed campaign's) are never redone.
            if (e.payload.type == fb::Payload::CandidateEvaluated) {
              const auto* p = e.payload.AsCandidateEvaluated();
              self->state.evaluations.emplace(p->candidate_hash, *p);
            } else if (e.payload.type == fb::Payload::CandidateProposed) {
              const auto* p = e.payload.AsCandidateProposed();
              self->state.canonicals.emplace(p->candidate_hash, p->canonical);
            }
          });
        },
        [self, ctx](submit_atom, submission& s) {
          auto rp = self->make_response_promise<verdict_msg>();
          self->state.queue.push_back(guard_item{std::move(s), rp, nullptr, nullptr, 0});
          pump(self, ctx);
          return rp;
        },
        [self, ctx](submit_atom, submission_list& subs) {
          auto rp = self->make_response_promise<verdict_list>();
          if (subs.items.empty()) {
            rp.deliver(verdict_list{});
            return rp;
          }
          precompile(self, ctx, subs);
          auto list = std::make_shared<verdict_list>();
          list->items.resize(subs.items.size());
          auto remaining = std::make_shared<size_t>(subs.items.size());
          for (size_t i = 0; i < subs.items.size(); ++i) {
            self->state.queue.push_back(
                guard_item{std::move(subs.items[i]), rp, list, remaining, i});
          }
          pump(self, ctx);
          return rp;
        },
        [ctx](peaks_atom) -> caf::result<peaks_msg> {
          auto p = ctx->evaluator->peaks();
          if (!p) return caf::make_error(caf::sec::runtime_error, p.status().to_string());
          return peaks_msg{p.value()};
        },
    };
  };
  if (ctx->detached_guard) {
    return sys.spawn<caf::detached>(impl, ctx, std::move(journal), std::move(plateau));
  }
  return sys.spawn(impl, ctx, std::move(journal), std::move(plateau));
}

}  // namespace arc::actors
