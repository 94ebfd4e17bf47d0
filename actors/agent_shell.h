#pragma once
// What the builtin and the external (llm, exec) agent shells share: their state besides the
// core, and the handlers that do not depend on how a proposal is made. `Propose` is the shell's
// propose_now(self, ctx, then): a proposal from the view as it is now, handed to `then`;
// `Step` is its async loop, async_step(self, ctx).
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "caf/all.hpp"

#include "actors/agent_core.h"
#include "actors/follower.h"
#include "actors/messages.h"
#include "actors/shells.h"
#include "actors/view.h"

namespace arc::actors {

struct AgentShellState {
  std::unique_ptr<CampaignView> view;
  Follower follower;
  caf::actor journal, memory, guard, campaign;
  bool running = false;    // async loop active
  bool in_flight = false;  // a proposal is on its way to a verdict
  bool stopping = false;
  caf::response_promise stop_promise;
  bool stop_pending = false;

  // The view over the problem's workloads, the actors it talks to, and its subscription.
  template <class Self>
  void start(Self self, CampaignContext* ctx, caf::actor j, caf::actor m, caf::actor g) {
    view = ctx->cores->view();
    journal = std::move(j);
    memory = std::move(m);
    guard = std::move(g);
    self->send(journal, subscribe_atom_v, caf::actor{self});
  }
};

// Nothing of this agent is in flight any more: a pending stop is answered.
template <class Self>
void settle(Self self) {
  self->state.in_flight = false;
  if (self->state.stop_pending) {
    self->state.stop_pending = false;
    self->state.stop_promise.deliver(true);
  }
}

// Async: appends `list` (the agent's events of one proposal). With a proposal among them, submits
// it to the guard at its seq and calls step(self, ctx) once the verdict is in the view; without
// one (a recorded failure), calls step once the appended events are in the view.
template <class Self, class Step>
void append_and_submit(Self self, CampaignContext* ctx, event_list list,
                       std::optional<fb::CandidateProposedT> proposed, Step step) {
  self->request(self->state.journal, caf::infinite, append_atom_v, std::move(list))
      .then(
          [self, ctx, proposed = std::move(proposed), step](const seq_list& seqs) mutable {
            if (!proposed) {
              self->state.follower.when(seqs.seqs.back(), [self, ctx, step] { step(self, ctx); });
              return;
            }
            submission s{std::move(*proposed), seqs.seqs.back()};
            self->request(self->state.guard, caf::infinite, submit_atom_v, std::move(s))
                .then(
                    [self, ctx, step](const verdict_msg& v) {
                      self->state.follower.when(v.last_seq, [self, ctx, step] { step(self, ctx); });
                    },
                    [self](caf::error& err) { self->quit(err); });
          },
          [self](caf::error& err) { self->quit(err); });
}

// Lockstep: propose from the view at exactly seq v.
template <class Self, class Propose>
auto lockstep_handler(Self self, CampaignContext* ctx, uint32_t index, Propose propose) {
  return [self, ctx, index, propose](propose_atom, uint64_t v) {
    auto rp = self->template make_response_promise<proposal_msg>();
    self->state.follower.when(v, [self, ctx, rp, index, v, propose]() mutable {
      if (self->state.view->last_seq() != v) {
        rp.deliver(caf::make_error(caf::sec::runtime_error, "lockstep view moved past the round's seq"));
        return;
      }
      propose(self, ctx, [rp, index](Proposal p) mutable { rp.deliver(proposal_msg{std::move(p), index}); });
    });
    return rp;
  };
}

// Async: start proposing once the log reaches `from`.
template <class Self, class Step>
auto run_handler(Self self, CampaignContext* ctx, Step step) {
  return [self, ctx, step](run_atom, const caf::actor& campaign, uint64_t from) {
    self->state.campaign = campaign;
    self->state.running = true;
    self->state.follower.when(from, [self, ctx, step] { step(self, ctx); });
  };
}

// Replies once nothing of this agent is in flight.
template <class Self>
auto stop_handler(Self self) {
  return [self](stop_atom) {
    auto rp = self->template make_response_promise<bool>();
    self->state.stopping = true;
    if (self->state.in_flight) {
      self->state.stop_promise = rp;
      self->state.stop_pending = true;
    } else {
      rp.deliver(true);
    }
    return rp;
  };
}

}  // namespace arc::actors
