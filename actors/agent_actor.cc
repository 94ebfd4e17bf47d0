// The agent actor: follows the log into its core and view, asks memory for recall as of its
// view, and proposes. In lockstep the campaign asks it to propose from a given view; in async
// it proposes, submits to the guard and proposes again once its verdict is in its view.
#include "actors/agent_core.h"
#include "actors/agent_shell.h"

namespace arc::actors {
namespace {

struct agent_state : AgentShellState {
  std::unique_ptr<AgentCore> core;
  uint64_t idle_at = 0;    // the view seq at which it last found nothing to propose
  static inline const char* name = "arc.agent";
};

using agent_actor = caf::stateful_actor<agent_state>*;

void apply(agent_actor self, const events::Event& e) {
  self->state.view->apply(e);
  self->state.core->apply(e);
}

// Computes a proposal from the view exactly as it is now, with recall as of the same seq.
// `await` keeps every other message (new events) out until the recall arrives.
template <class Then>
void propose_now(agent_actor self, CampaignContext* ctx, Then then) {
  const uint64_t v = self->state.view->last_seq();
  self->request(self->state.memory, caf::infinite, recall_atom_v, ctx->problem.kernel_type, v)
      .await(
          [self, then](const recall_msg& r) mutable {
            then(self->state.core->propose(*self->state.view, r.recall));
          },
          [self](caf::error& err) { self->quit(err); });
}

void async_step(agent_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (st.stopping || !st.running) return settle(self);
  st.in_flight = true;
  propose_now(self, ctx, [self, ctx](Proposal p) {
    auto& st = self->state;
    if (st.stopping) return settle(self);
    if (!p.proposed) {
      // Nothing new from this view: try again once the log has moved on.
      st.idle_at = st.view->last_seq();
      st.in_flight = false;
      self->send(st.campaign, done_atom_v, st.core->name(), st.idle_at);
      st.follower.when(st.idle_at + 1, [self, ctx] { async_step(self, ctx); });
      return;
    }
    event_list list;
    if (p.drafted) list.events.push_back(events::make_event(st.core->name(), *p.drafted));
    if (p.inspected) list.events.push_back(events::make_event(st.core->name(), *p.inspected));
    list.events.push_back(events::make_event(st.core->name(), *p.proposed));
    append_and_submit(self, ctx, std::move(list), p.proposed,
                      [](agent_actor s, CampaignContext* c) { async_step(s, c); });
  });
}

}  // namespace

caf::actor spawn_builtin_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                               caf::actor journal, caf::actor memory, caf::actor guard) {
  auto impl = [](agent_actor self, CampaignContext* ctx, uint32_t index, caf::actor journal,
                 caf::actor memory, caf::actor guard) -> caf::behavior {
    auto& st = self->state;
    st.core = ctx->cores->agent(index);
    st.start(self, ctx, std::move(journal), std::move(memory), std::move(guard));
    auto propose = [](agent_actor s, CampaignContext* c, auto then) { propose_now(s, c, std::move(then)); };
    auto step = [](agent_actor s, CampaignContext* c) { async_step(s, c); };
    return {
        [self](const published_events& p) {
          follow(self, self->state.follower, p,
                 [self](const events::Event& e) { apply(self, e); });
        },
        lockstep_handler(self, ctx, index, propose),
        run_handler(self, ctx, step),
        stop_handler(self),
    };
  };
  return sys.spawn(impl, ctx, index, std::move(journal), std::move(memory), std::move(guard));
}

}  // namespace arc::actors
