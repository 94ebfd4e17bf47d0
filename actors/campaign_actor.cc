// The campaign actor: starts the log, has the baseline evaluated, runs rounds (lockstep) or
// lets agents run (async), and stops the campaign on budget, plateau or exhaustion.
#include <algorithm>
#include <optional>
#include <set>

#include "actors/campaign_core.h"
#include "actors/follower.h"
#include "actors/messages.h"
#include "actors/shells.h"
#include "actors/view.h"
#include "base/sha256.h"

namespace arc::actors {
namespace {

struct campaign_state {
  std::unique_ptr<CampaignCore> core;
  Follower follower;
  caf::actor journal, guard, plateau;
  std::vector<caf::actor> agents;
  caf::response_promise done;
  // Why the journal actor stopped (a failed write to the log): the campaign cannot go on.
  std::optional<caf::error> journal_down;
  bool finishing = false;
  bool stopping = false;
  static inline const char* name = "arc.campaign";
};

using campaign_actor = caf::stateful_actor<campaign_state>*;

void finish(campaign_actor self, CampaignContext* ctx, const std::string& reason) {
  auto& st = self->state;
  if (st.finishing) return;
  st.finishing = true;
  fb::CampaignStoppedT s = st.core->stopped(reason);
  event_list list;
  list.events.push_back(events::make_event(kCampaignActor, std::move(s)));
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, reason](const seq_list&) {
            self->request(self->state.journal, caf::infinite, sync_atom_v)
                .then([self, reason](bool) { self->state.done.deliver(reason); },
                      [self](caf::error& err) { self->state.done.deliver(err); });
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

// Has the guard decide logged proposals in order; runs `next` once the log holds every
// decision and the plateau events after them.
void decide_all(campaign_actor self, submission_list subs, std::function<void()> next) {
  self->request(self->state.guard, caf::infinite, submit_atom_v, std::move(subs))
      .then(
          [self, next](const verdict_list& vl) {
            uint64_t last = 0;
            for (const auto& v : vl.items) last = std::max(last, v.last_seq);
            self->state.follower.when(last, next);
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

void round(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (auto why = st.core->stop_reason()) return finish(self, ctx, *why);
  const uint64_t v = st.core->view().last_seq();
  auto replies = std::make_shared<std::vector<std::optional<Proposal>>>(st.agents.size());
  auto pending = std::make_shared<size_t>(st.agents.size());
  for (size_t i = 0; i < st.agents.size(); ++i) {
    self->request(st.agents[i], caf::infinite, propose_atom_v, v)
        .then(
            [self, ctx, replies, pending](proposal_msg& m) {
              (*replies)[m.agent_index] = std::move(m.proposal);
              if (--*pending != 0) return;
              // Every agent has answered: log the round in agent order.
              event_list list;
              std::vector<size_t> proposal_pos;
              std::vector<fb::CandidateProposedT> proposals;
              const std::vector<size_t> selected = self->state.core->select_round(*replies);
              for (size_t i = 0; i < replies->size(); ++i) {
                auto& r = (*replies)[i];
                if (!r) continue;
                const bool chosen =
                    std::find(selected.begin(), selected.end(), i) != selected.end();
                // An llm/exec agent's failed exchange is logged too (a recorded failure); one
                // whose candidate sits this round out is not logged at all.
                if (r->exchange && (chosen || !r->proposed)) {
                  list.events.push_back(events::make_event(r->exchange->agent, *r->exchange));
                }
                if (!chosen) continue;
                const std::string& name = r->proposed->agent;
                if (r->drafted) list.events.push_back(events::make_event(name, *r->drafted));
                if (r->inspected) list.events.push_back(events::make_event(name, *r->inspected));
                proposal_pos.push_back(list.events.size());
                proposals.push_back(*r->proposed);
                list.events.push_back(events::make_event(name, *r->proposed));
              }
              if (list.events.empty()) {
                return finish(self, ctx, "every agent is out of new candidates");
              }
              self->request(self->state.journal, caf::infinite, append_atom_v, std::move(list))
                  .then(
                      [self, ctx, proposal_pos, proposals](const seq_list& seqs) mutable {
                        submission_list subs;
                        for (size_t i = 0; i < proposals.size(); ++i) {
                          subs.items.push_back(
                              {std::move(proposals[i]), seqs.seqs[proposal_pos[i]]});
                        }
                        if (subs.items.empty()) {
                          // Only failed exchanges this round: the next round starts from them.
                          return self->state.follower.when(seqs.seqs.back(),
                                                           [self, ctx] { round(self, ctx); });
                        }
                        decide_all(self, std::move(subs), [self, ctx] { round(self, ctx); });
                      },
                      [self](caf::error& err) { self->state.done.deliver(err); });
            },
            [self](caf::error& err) { self->state.done.deliver(err); });
  }
}

void begin_stop(campaign_actor self, CampaignContext* ctx, const std::string& reason) {
  auto& st = self->state;
  if (st.stopping) return;
  st.stopping = true;
  auto pending = std::make_shared<size_t>(st.agents.size());
  for (const auto& a : st.agents) {
    self->request(a, caf::infinite, stop_atom_v)
        .then(
            [self, ctx, pending, reason](bool) {
              if (--*pending == 0) finish(self, ctx, reason);
            },
            [self](caf::error& err) { self->state.done.deliver(err); });
  }
}

void check_async(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (ctx->config.mode != Mode::kAsync || st.stopping || st.agents.empty()) return;
  if (auto why = st.core->stop_reason()) return begin_stop(self, ctx, *why);
  if (st.core->all_idle()) begin_stop(self, ctx, "every agent is out of new candidates");
}

void start_search(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (ctx->config.mode == Mode::kLockstep) return round(self, ctx);
  for (const auto& a : st.agents) {
    self->send(a, run_atom_v, caf::actor{self}, st.core->view().last_seq());
  }
}

// Hands the logged baseline proposal to the guard; the search starts once it is kept.
void submit_baseline(campaign_actor self, CampaignContext* ctx, fb::CandidateProposedT p,
                     uint64_t seq) {
  submission s{std::move(p), seq};
  self->request(self->state.guard, caf::infinite, submit_atom_v, std::move(s))
      .then(
          [self, ctx](const verdict_msg& v) {
            if (v.verdict != fb::Verdict::KEEP) {
              return finish(self, ctx, "baseline failed: " + v.reason);
            }
            self->state.follower.when(v.last_seq, [self, ctx] { start_search(self, ctx); });
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

void run_baseline(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  fb::CandidateProposedT p;
  p.candidate_hash = ctx->problem.seed.hash();
  p.agent = kCampaignActor;
  p.move = kBaselineMove;
  p.view_seq = st.core->view().last_seq();
  p.canonical = ctx->problem.seed.canonical();
  event_list list;
  list.events.push_back(events::make_event(kCampaignActor, p));
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx, p](const seq_list& seqs) mutable {
            submit_baseline(self, ctx, std::move(p), seqs.seqs.back());
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

// Measures the device's peaks, logs them, then runs `next`.
void measure_peaks(campaign_actor self, CampaignContext* ctx, std::function<void()> next) {
  self->request(self->state.guard, caf::infinite, peaks_atom_v)
      .then(
          [self, next](peaks_msg& m) {
            event_list pl;
            pl.events.push_back(events::make_event(kGuardActor, std::move(m.peaks)));
            self->request(self->state.journal, caf::infinite, append_atom_v, std::move(pl))
                .then(
                    [self, next](const seq_list& seqs) {
                      self->state.follower.when(seqs.seqs.back(), next);
                    },
                    [self](caf::error& err) { self->state.done.deliver(err); });
          },
          [self, ctx](caf::error& err) {
            finish(self, ctx, "device peaks unavailable: " + self->system().render(err));
          });
}

void begin(campaign_actor self, CampaignContext* ctx);

// Continues a campaign from its log: whatever the interrupted run had logged is taken as
// done; what it had not is done now, in the order an uninterrupted run would have done it.
void resume(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  const CampaignCore& core = *st.core;
  if (!core.started()) return begin(self, ctx);
  if (!core.peaks_measured()) return measure_peaks(self, ctx, [self, ctx] { resume(self, ctx); });
  const fb::CandidateProposedT* base = core.baseline_proposal();
  if (base == nullptr) return run_baseline(self, ctx);
  if (!core.baseline_decided()) {
    for (const auto& [seq, p] : core.undecided()) {
      if (p.agent == kCampaignActor) return submit_baseline(self, ctx, p, seq);
    }
  }
  if (core.view().baseline() == nullptr) return finish(self, ctx, "baseline failed");
  // A decision whose plateau check was lost gets it now, then the undecided proposals go to
  // the guard in log order.
  self->request(st.plateau, caf::infinite, check_atom_v, core.view().last_seq())
      .then(
          [self, ctx](uint64_t last) {
            self->state.follower.when(last, [self, ctx] {
              submission_list subs;
              for (auto& [seq, p] : self->state.core->undecided()) {
                subs.items.push_back({std::move(p), seq});
              }
              if (subs.items.empty()) return start_search(self, ctx);
              decide_all(self, std::move(subs), [self, ctx] { start_search(self, ctx); });
            });
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

void begin(campaign_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  const auto& cfg = ctx->config;
  fb::CampaignStartedT s;
  s.config_text = cfg.text;
  s.config_hash = arc::sha256_hex(cfg.text);
  s.config_path = cfg.file.string();
  s.problem_name = ctx->problem.name;
  s.problem_hash = ctx->problem.hash;
  s.problem_dir = ctx->problem.dir.string();
  s.inputs_ref = ctx->inputs_ref;
  s.kernel_type = ctx->problem.kernel_type;
  s.seed = cfg.seed;
  s.mode = to_string(cfg.mode);
  s.budget = cfg.budget;
  s.device = ctx->device;
  for (const auto& [k, v] : ctx->software) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = k;
    kv->value = v;
    s.software.push_back(std::move(kv));
  }
  for (const auto& [k, v] : cfg.overrides) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = k;
    kv->value = v;
    s.overrides.push_back(std::move(kv));
  }
  event_list list;
  list.events.push_back(events::make_event(kCampaignActor, std::move(s)));
  for (uint32_t i = 0; i < cfg.agents.size(); ++i) {
    fb::AgentSpawnedT a;
    a.agent = cfg.agents[i].name;
    a.index = i;
    a.backend = cfg.agents[i].backend;
    a.skill = cfg.agents[i].skill;
    list.events.push_back(events::make_event(kCampaignActor, std::move(a)));
  }
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx](const seq_list&) {
            measure_peaks(self, ctx, [self, ctx] { run_baseline(self, ctx); });
          },
          [self](caf::error& err) { self->state.done.deliver(err); });
}

}  // namespace

caf::actor spawn_campaign(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal,
                          caf::actor guard, caf::actor plateau, std::vector<caf::actor> agents) {
  auto impl = [](campaign_actor self, CampaignContext* ctx, caf::actor journal, caf::actor guard,
                 caf::actor plateau, std::vector<caf::actor> agents) -> caf::behavior {
    auto& st = self->state;
    st.core = ctx->cores->campaign();
    st.journal = journal;
    st.guard = guard;
    st.plateau = plateau;
    st.agents = std::move(agents);
    self->send(journal, subscribe_atom_v, caf::actor{self});
    self->monitor(journal);
    self->set_down_handler([self](caf::down_msg& m) {
      if (m.source != self->state.journal.address()) return;
      caf::error why = m.reason ? std::move(m.reason)
                                : caf::make_error(caf::sec::runtime_error, "the journal stopped");
      self->state.journal_down = why;
      self->state.done.deliver(std::move(why));
    });
    return {
        [self, ctx](const published_events& p) {
          auto& st = self->state;
          bool decided = false;
          if (!st.follower.on_published(p, [self, &decided](const events::Event& e) {
                self->state.core->apply(e);
                decided |= e.payload.type == fb::Payload::Decision;
              })) {
            st.done.deliver(caf::make_error(caf::sec::runtime_error, "corrupt published event"));
            return;
          }
          if (decided) check_async(self, ctx);
        },
        [self, ctx](start_atom) {
          self->state.done = self->make_response_promise<std::string>();
          if (self->state.journal_down) {
            self->state.done.deliver(*self->state.journal_down);
            return self->state.done;
          }
          if (ctx->resuming) {
            // Fold the whole log first.
            self->state.follower.when(ctx->journal->last_seq(), [self, ctx] { resume(self, ctx); });
          } else {
            begin(self, ctx);
          }
          return self->state.done;
        },
        // Async: `agent` found nothing new to propose from its view at `seq`.
        [self, ctx](done_atom, const std::string& agent, uint64_t seq) {
          self->state.core->mark_idle(agent, seq);
          check_async(self, ctx);
        },
    };
  };
  return sys.spawn(impl, ctx, std::move(journal), std::move(guard), std::move(plateau),
                   std::move(agents));
}

}  // namespace arc::actors
