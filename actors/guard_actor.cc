// The guard actor: dedups, compiles (a parallel pool for a lockstep round), dispatches
// evaluations to its workers (one worker slot each, actors/worker_slot.h) as they fall idle,
// and logs and decides in the order candidates reached it, asking the guard core for every
// verdict (DESIGN.md §6, §9).
//
// Scheduling. Queued candidates are evaluated ahead of their turn on idle workers, as many at
// once as there are workers, but only while they fit in the budget (decided + place in the queue
// < budget) and only once per candidate hash; an evaluation is logged, paired and decided when
// its candidate reaches the front, so the log's order, and every decision, is the one a single
// worker gives (lockstep with equal measurements: identical). The pairs of a paired decision
// that may still be needed (GuardCore::remaining_pairs) run at once on idle workers, before the
// evaluations of later candidates, also for candidates behind the front (PairBatch below), and
// are logged in index order as the core asks for each at the front; those it no longer asks for
// are dropped unlogged. Both sides of a pair run on one worker, and timings are never
// compared across device models, because a worker whose model is not the campaign's is
// refused when it joins.
//
// Faults. An outcome marked lost (the worker disconnected, crashed or stopped answering) is
// not the candidate's: the worker is marked lost (WorkerChanged), its job goes back to the
// queue for the next idle worker, and the guard tries to reach the worker again every
// kRetrySeconds. With no worker left the campaign waits (WorkerChanged live = 0 says so) until
// one comes back or joins. Nothing is logged for work that did not finish, so nothing is lost
// or evaluated twice in the log.
#include <algorithm>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <set>

#include "actors/agent_core.h"
#include "actors/follower.h"
#include "actors/guard_core.h"
#include "actors/guard_state.h"
#include "actors/messages.h"
#include "actors/shells.h"
#include "actors/view.h"

namespace arc::actors {
namespace guard_detail {

uint64_t hash_prefix(const std::string& hex) {
  uint64_t v = 0;
  for (size_t i = 0; i < 16 && i < hex.size(); ++i) {
    const char c = hex[i];
    v = (v << 4) | static_cast<uint64_t>(c >= 'a' ? c - 'a' + 10 : c - '0');
  }
  return v;
}

// The input stream of pair `index` of a candidate's paired decision.
constexpr uint64_t kPairSeedStream = 0x9a1e0000;

void pump(GuardActor self, CampaignContext* ctx);
void settle(GuardActor self, CampaignContext* ctx, const fb::CandidateEvaluatedT& evaluation,
            uint64_t eval_seq);

void fail(GuardActor self, CampaignContext* ctx, caf::error err) {
  // A journal failure: every waiting requester learns it; nothing more is evaluated.
  while (!self->state.queue.empty()) {
    self->state.queue.front().promise.deliver(err);
    self->state.queue.pop_front();
  }
  for (auto& rp : self->state.peaks_waiting) rp.deliver(err);
  self->state.peaks_waiting.clear();
  self->quit(err);
}

void finish(GuardActor self, CampaignContext* ctx, verdict_msg v) {
  GuardItem item = std::move(self->state.queue.front());
  self->state.queue.pop_front();
  self->state.last_own_seq = std::max(self->state.last_own_seq, v.last_seq);
  if (item.list) {
    item.list->items[item.index] = std::move(v);
    if (--*item.remaining == 0) item.promise.deliver(*item.list);
  } else {
    item.promise.deliver(std::move(v));
  }
  self->state.busy = false;
  self->state.front_waiting = false;
  pump(self, ctx);
  dispatch(self, ctx);
}

// Logs the decision (and its conclusion), asks the plateau detector, then finishes the item.
void record_decision(GuardActor self, CampaignContext* ctx, GuardOutcome outcome) {
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

void log_pair(GuardActor self, CampaignContext* ctx, uint32_t index);

// A batch of the pairs `proposal` may still need, paired with the agent's incumbent as the core
// sees it now; empty when it needs none.
PairBatch make_batch(GuardActor self, CampaignContext* ctx, const fb::CandidateProposedT& proposal,
                     const fb::CandidateEvaluatedT& evaluation, uint64_t eval_seq, size_t prefer) {
  auto& st = self->state;
  PairBatch b;
  b.id = ++st.batch_ids;
  b.candidate_hash = proposal.candidate_hash;
  b.prefer = prefer;
  b.eval_seq = eval_seq;
  auto canonical = [&st](const std::string& h) {
    auto it = st.canonicals.find(h);
    return it == st.canonicals.end() ? std::string() : it->second;
  };
  for (const PairRequest& r : st.core->remaining_pairs(proposal, evaluation, eval_seq)) {
    b.incumbent_hash = r.incumbent_hash;
    PairWork w;
    w.job.candidate_hash = proposal.candidate_hash;
    w.job.incumbent_hash = r.incumbent_hash;
    w.job.candidate_canonical = canonical(proposal.candidate_hash);
    w.job.incumbent_canonical = canonical(r.incumbent_hash);
    w.job.candidate_first = r.candidate_first;
    w.job.input_seed =
        seed_for(ctx->config.seed, hash_prefix(proposal.candidate_hash), kPairSeedStream + r.index);
    w.job.settings = ctx->config.evaluation;
    w.job.settings.rounds = 1;  // a check on the pair's own fresh inputs; the evaluation ran R
    w.job.settings.repetitions = ctx->config.pair_repetitions.value_or(w.job.settings.repetitions);
    b.pairs.emplace(r.index, std::move(w));
  }
  if (!b.pairs.empty()) b.evaluation = evaluation;
  return b;
}

// Batches for the evaluated candidates behind the front whose agent has no earlier candidate
// in the queue.
void speculate_pairs(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  std::set<std::string> agents;
  bool front = true;
  for (const auto& item : st.queue) {
    const auto& proposal = item.sub.proposal;
    const bool first_of_agent = agents.insert(proposal.agent).second;
    if (front) {  // settle() makes the front's
      front = false;
      continue;
    }
    if (!first_of_agent || item.work->at != WorkState::Phase::kDone ||
        st.batches.count(proposal.candidate_hash) != 0 || st.core->stopping()) {
      continue;
    }
    PairBatch b = make_batch(self, ctx, proposal, item.work->result.evaluation, 0, item.work->slot);
    if (!b.pairs.empty()) st.batches.emplace(proposal.candidate_hash, std::move(b));
  }
}

// Starts pairs that wait for a worker on idle workers: the queue's candidates in order, each
// batch lowest index first (to the worker that evaluated the candidate when it is idle).
void run_pairs(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  for (const auto& item : st.queue) {
    auto batch = st.batches.find(item.sub.proposal.candidate_hash);
    if (batch == st.batches.end()) continue;
    for (auto& [index, work] : batch->second.pairs) {
      if (work.at != PairWork::Phase::kIdle) continue;
      const size_t i = idle_worker(st, batch->second.prefer);
      if (i == st.slots.size()) return;
      work.at = PairWork::Phase::kRunning;
      work.slot = i;
      st.slots[i].busy = true;
      const std::string hash = batch->first;
      const uint64_t id = batch->second.id;
      const uint32_t at = index;
      auto done = [self, ctx, hash, id, at, i](PairOutcome& o) {
        auto& st = self->state;
        auto b = st.batches.find(hash);
        const bool current = b != st.batches.end() && b->second.id == id;
        if (!o.lost.empty()) {
          worker_lost(self, ctx, i, o.lost, hash);
          if (current) b->second.pairs.at(at).at = PairWork::Phase::kIdle;  // to the next worker
        } else {
          st.slots[i].busy = false;
          if (current) {
            PairWork& w = b->second.pairs.at(at);
            w.at = PairWork::Phase::kDone;
            w.result = std::move(o);
            if (b->second.waiting == at) log_pair(self, ctx, at);
          }
        }
        dispatch(self, ctx);
      };
      self->request(st.slots[i].actor, caf::infinite, pair_atom_v, work.job)
          .then([done](PairOutcome& o) mutable { done(o); },
                [self, done](caf::error& err) mutable {
                  PairOutcome o;
                  o.lost = self->system().render(err);
                  done(o);
                });
    }
  }
}

// Logs the front candidate's pair `index` (measured), then settles again.
void log_pair(GuardActor self, CampaignContext* ctx, uint32_t index) {
  auto& st = self->state;
  const auto& proposal = st.queue.front().sub.proposal;
  PairBatch& b = st.batches.at(proposal.candidate_hash);
  b.waiting.reset();
  PairWork& w = b.pairs.at(index);
  fb::PairMeasuredT pair = std::move(w.result.pair);
  pair.agent = proposal.agent;
  pair.index = index;
  pair.evaluation_seq = b.eval_seq;
  pair.worker = st.slots[w.slot].name;
  pair.device = st.slots[w.slot].device;
  event_list list;
  list.events.push_back(events::make_event(kGuardActor, std::move(pair)));
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx](const seq_list& seqs) {
            // The core must have applied the pair before it says what is next.
            self->state.follower.when(seqs.seqs.back(), [self, ctx] {
              const auto& st = self->state;
              const PairBatch& b = st.batches.at(st.queue.front().sub.proposal.candidate_hash);
              settle(self, ctx, b.evaluation, b.eval_seq);
            });
          },
          [self, ctx](caf::error& err) { fail(self, ctx, err); });
}

// Measures the pairs the decision still needs, one logged event each (a resumed campaign goes
// on from the last logged pair), then decides.
void settle(GuardActor self, CampaignContext* ctx, const fb::CandidateEvaluatedT& evaluation,
            uint64_t eval_seq) {
  auto& st = self->state;
  const GuardItem& front = st.queue.front();
  const auto& proposal = front.sub.proposal;
  auto next = st.core->next_pair(proposal, evaluation, eval_seq);
  if (!next) {
    GuardOutcome outcome = st.core->decide(proposal, evaluation, eval_seq);
    // Pairs still running are not needed (`evaluation` may be the batch's: erased after).
    st.batches.erase(proposal.candidate_hash);
    record_decision(self, ctx, std::move(outcome));
    return;
  }
  auto b = st.batches.find(proposal.candidate_hash);
  if (b == st.batches.end() || b->second.incumbent_hash != next->incumbent_hash ||
      b->second.pairs.count(next->index) == 0) {
    PairBatch made = make_batch(self, ctx, proposal, evaluation, eval_seq, front.work->slot);
    b = st.batches.insert_or_assign(proposal.candidate_hash, std::move(made)).first;
  }
  if (&evaluation != &b->second.evaluation) b->second.evaluation = evaluation;  // as logged
  b->second.eval_seq = eval_seq;
  b->second.waiting = next->index;
  if (b->second.pairs.at(next->index).at == PairWork::Phase::kDone) {
    log_pair(self, ctx, next->index);
    return;
  }
  dispatch(self, ctx);
}

// Logs the front candidate's compile and evaluation, then settles its decision.
void log_evaluation(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  GuardItem& front = st.queue.front();
  const auto& proposal = front.sub.proposal;
  EvalOutcome& r = front.work->result;
  const WorkerSlot& slot = st.slots[front.work->slot];
  fb::CompileFinishedT compiled = std::move(r.compiled);
  fb::CandidateEvaluatedT evaluation = std::move(r.evaluation);
  compiled.candidate_hash = proposal.candidate_hash;
  evaluation.candidate_hash = proposal.candidate_hash;
  evaluation.worker = slot.name;
  if (evaluation.device.empty()) evaluation.device = slot.device;
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

void evaluated(GuardActor self, CampaignContext* ctx, const std::shared_ptr<WorkState>& work,
               size_t i, EvalOutcome& o, const std::string& hash) {
  auto& st = self->state;
  if (!o.lost.empty()) {
    work->at = WorkState::Phase::kIdle;  // back to the queue: the next idle worker takes it
    worker_lost(self, ctx, i, o.lost, hash);
  } else {
    st.slots[i].busy = false;
    work->at = WorkState::Phase::kDone;
    work->result = std::move(o);
    if (st.front_waiting && !st.queue.empty() && st.queue.front().work == work) {
      st.front_waiting = false;
      log_evaluation(self, ctx);
    }
  }
  dispatch(self, ctx);
}

void start_evaluation(GuardActor self, CampaignContext* ctx, GuardItem& item, size_t i) {
  auto& st = self->state;
  const auto& proposal = item.sub.proposal;
  EvalJob job;
  job.hash = proposal.candidate_hash;
  job.canonical = proposal.canonical;
  job.input_seed = seed_for(ctx->config.seed, hash_prefix(proposal.candidate_hash), 0x5eed);
  job.settings = ctx->config.evaluation;
  if (auto pre = st.precompiled.find(job.hash); pre != st.precompiled.end()) {
    job.precompiled = pre->second;
  }
  item.work->at = WorkState::Phase::kRunning;
  item.work->slot = i;
  st.slots[i].busy = true;
  auto work = item.work;
  const std::string hash = job.hash;
  self->request(st.slots[i].actor, caf::infinite, evaluate_atom_v, std::move(job))
      .then([self, ctx, work, i, hash](EvalOutcome& o) { evaluated(self, ctx, work, i, o, hash); },
            [self, ctx, work, i, hash](caf::error& err) {
              EvalOutcome o;
              o.lost = self->system().render(err);
              evaluated(self, ctx, work, i, o, hash);
            });
}

// Hands work to idle workers: the front's pairs first, then queued candidates in order.
void dispatch(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  speculate_pairs(self, ctx);
  run_pairs(self, ctx);
  serve_peaks(self, ctx);
  const uint32_t budget = st.core->config().budget;
  std::set<std::string> seen;
  uint32_t place = 0;
  for (auto& item : st.queue) {
    const auto& proposal = item.sub.proposal;
    const bool first = seen.insert(proposal.candidate_hash).second;
    const bool within_budget =
        proposal.agent == kCampaignActor || st.core->decided() + place < budget;
    ++place;
    if (item.work->at != WorkState::Phase::kIdle || !first) continue;
    if (st.core->stopping() || !within_budget) break;
    if (st.core->earlier_evaluation(proposal.candidate_hash)) continue;
    const size_t i = idle_worker(st, 0);
    if (i == st.slots.size()) break;
    start_evaluation(self, ctx, item, i);
  }
}

void process(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  const GuardItem& front = st.queue.front();
  const auto& proposal = front.sub.proposal;
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
  if (front.work->at == WorkState::Phase::kDone) {
    log_evaluation(self, ctx);
    return;
  }
  st.front_waiting = true;
  dispatch(self, ctx);
}

void pump(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (st.busy || st.queue.empty()) return;
  st.busy = true;
  const uint64_t need = std::max(st.queue.front().sub.seq, st.last_own_seq);
  st.follower.when(need, [self, ctx] { process(self, ctx); });
}

void precompile(GuardActor self, CampaignContext* ctx, const submission_list& subs) {
  // Compile the round's new candidates in parallel, for workers of this process (a remote
  // worker compiles on its own host). Nothing is evaluating between lockstep rounds.
  auto& st = self->state;
  eval::Evaluator* compiler = nullptr;
  for (const auto& s : st.slots) {
    if (!s.local) return;
  }
  if (!ctx->workers.empty()) {
    compiler = ctx->workers.front().evaluator;
  } else if (!st.fallback.empty()) {
    compiler = st.fallback.front().evaluator;
  }
  if (compiler == nullptr) return;
  std::vector<std::pair<std::string, problem::Candidate>> todo;
  for (const auto& s : subs.items) {
    const auto& h = s.proposal.candidate_hash;
    if (st.core->earlier_evaluation(h) || st.precompiled.count(h)) continue;
    auto c = problem::Candidate::from_canonical(s.proposal.canonical);
    if (c) todo.emplace_back(h, std::move(c.value()));
  }
  const size_t jobs = std::max<uint32_t>(1, ctx->compile_jobs);
  auto keep = [&st](const std::string& h, fb::CompileFinishedT c) {
    st.precompiled[h] = std::make_shared<const fb::CompileFinishedT>(std::move(c));
  };
  if (jobs == 1) {
    for (const auto& [h, c] : todo) keep(h, compiler->compile(c, h));
    return;
  }
  for (size_t start = 0; start < todo.size(); start += jobs) {
    std::vector<std::future<fb::CompileFinishedT>> futures;
    for (size_t i = start; i < std::min(todo.size(), start + jobs); ++i) {
      futures.push_back(std::async(std::launch::async, [compiler, &todo, i] {
        return compiler->compile(todo[i].second, todo[i].first);
      }));
    }
    for (size_t i = 0; i < futures.size(); ++i) keep(todo[start + i].first, futures[i].get());
  }
}

caf::actor spawn(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                 caf::actor plateau) {
  auto impl = [](GuardActor self, CampaignContext* ctx, caf::actor journal,
                 caf::actor plateau) -> caf::behavior {
    self->state.core = ctx->cores->guard();
    self->state.journal = journal;
    self->state.plateau = plateau;
    self->send(journal, subscribe_atom_v, caf::actor{self});
    spawn_slots(self, ctx);
    return {
        [self, ctx](const published_events& p) {
          follow(self, self->state.follower, p, [self](const events::Event& e) {
            self->state.core->apply(e);
            // Evaluations already in the log (a resumed campaign's) are never redone.
            if (e.payload.type == fb::Payload::CandidateEvaluated) {
              const auto* p = e.payload.AsCandidateEvaluated();
              self->state.evaluations.emplace(p->candidate_hash, *p);
            } else if (e.payload.type == fb::Payload::CandidateProposed) {
              const auto* p = e.payload.AsCandidateProposed();
              self->state.canonicals.emplace(p->candidate_hash, p->canonical);
            } else if (e.payload.type == fb::Payload::CampaignStarted) {
              self->state.started = true;
            }
          });
          log_changes(self, ctx);
        },
        [self, ctx](submit_atom, submission& s) {
          auto rp = self->make_response_promise<verdict_msg>();
          self->state.queue.push_back(GuardItem{std::move(s), rp, nullptr, nullptr, 0});
          pump(self, ctx);
          dispatch(self, ctx);
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
                GuardItem{std::move(subs.items[i]), rp, list, remaining, i});
          }
          pump(self, ctx);
          dispatch(self, ctx);
          return rp;
        },
        [self, ctx](peaks_atom) {
          auto rp = self->make_response_promise<peaks_msg>();
          self->state.peaks_waiting.push_back(rp);
          serve_peaks(self, ctx);
          return rp;
        },
        [self, ctx](retry_atom, uint64_t i) {
          auto& s = self->state.slots.at(i);
          s.retrying = false;
          if (s.at == WorkerSlot::Reach::kLost || s.at == WorkerSlot::Reach::kReaching) {
            reach(self, ctx, i);
          }
        },
    };
  };
  if (ctx->detached_guard) {
    return sys.spawn<caf::detached>(impl, ctx, std::move(journal), std::move(plateau));
  }
  return sys.spawn(impl, ctx, std::move(journal), std::move(plateau));
}

}  // namespace guard_detail

caf::actor spawn_guard(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                       caf::actor plateau) {
  return guard_detail::spawn(sys, ctx, std::move(journal), std::move(plateau));
}

}  // namespace arc::actors
