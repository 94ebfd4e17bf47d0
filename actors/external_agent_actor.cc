// The shell of an llm or exec agent: follows the log into its core and view, asks memory for
// recall as of its view, has the core build the prompt, sends it through the backend (the only
// I/O: HTTP or a command), stores prompt and reply as artifacts, and has the core derive the
// proposal from the stored reply. The exchange is logged with what it gave, in one append, before
// the guard sees the candidate: verification and resumption read the reply from the log and
// never call the model again.
//
// It runs detached: an exchange blocks its thread for as long as the model takes. While it
// blocks no message is handled, so the view stays the one the prompt was built from.
#include "actors/agent_backend_registry.h"
#include "actors/agent_shell.h"
#include "actors/external_agent_core.h"

namespace arc::actors {
namespace {

struct external_state : AgentShellState {
  std::unique_ptr<ExternalAgentCore> core;
  AgentBackend* backend = nullptr;
  static inline const char* name = "arc.external_agent";
};

using external_actor = caf::stateful_actor<external_state>*;

// Sends the request, stores both blobs, and has the core conclude. Blocks.
Proposal exchange(external_actor self, CampaignContext* ctx, const ExchangeRequest& req) {
  auto& st = self->state;
  ExchangeReply reply;
  auto prompt_ref = ctx->journal->put_artifact(req.prompt);
  if (!prompt_ref) {
    reply.error = "cannot store the prompt: " + prompt_ref.status().message();
    return st.core->conclude(req, reply);
  }
  reply = st.backend->exchange(req);
  reply.prompt_ref = prompt_ref.value();
  if (reply.delivered) {
    auto response_ref = ctx->journal->put_artifact(reply.body);
    if (!response_ref) {
      reply.delivered = false;
      reply.error = "cannot store the reply: " + response_ref.status().message();
    } else {
      reply.response_ref = response_ref.value();
    }
  }
  return st.core->conclude(req, reply);
}

// Builds the prompt from the view as it is now (recall as of the same seq), exchanges, and
// hands the concluded proposal (or the idle reason) to `then`.
template <class Then>
void propose_now(external_actor self, CampaignContext* ctx, Then then) {
  const uint64_t v = self->state.view->last_seq();
  self->request(self->state.memory, caf::infinite, recall_atom_v, ctx->problem.kernel_type, v)
      .await(
          [self, ctx, then](const recall_msg& r) mutable {
            auto& st = self->state;
            Prepared prepared = st.core->prepare(*st.view, r.recall);
            if (!prepared.request) {
              Proposal idle;
              idle.idle_reason = prepared.idle_reason;
              return then(std::move(idle));
            }
            then(exchange(self, ctx, *prepared.request));
          },
          [self](caf::error& err) { self->quit(err); });
}

void async_step(external_actor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (st.stopping || !st.running) return settle(self);
  st.in_flight = true;
  propose_now(self, ctx, [self, ctx](Proposal p) {
    auto& st = self->state;
    if (!p.exchange) {
      // Nothing to ask from this view: try again once the log has moved on.
      const uint64_t idle_at = st.view->last_seq();
      st.in_flight = false;
      self->send(st.campaign, done_atom_v, st.core->name(), idle_at);
      if (st.stop_pending) settle(self);
      st.follower.when(idle_at + 1, [self, ctx] { async_step(self, ctx); });
      return;
    }
    const std::string& name = st.core->name();
    event_list list;
    list.events.push_back(events::make_event(name, *p.exchange));
    if (p.proposed) {
      if (p.drafted) list.events.push_back(events::make_event(name, *p.drafted));
      if (p.inspected) list.events.push_back(events::make_event(name, *p.inspected));
      list.events.push_back(events::make_event(name, *p.proposed));
    }
    // Without a proposal (a recorded failure) it asks again from the view that includes it.
    append_and_submit(self, ctx, std::move(list), p.proposed,
                      [](external_actor s, CampaignContext* c) { async_step(s, c); });
  });
}

}  // namespace

caf::actor spawn_external_agent(caf::actor_system& sys, CampaignContext* ctx, uint32_t index,
                                caf::actor journal, caf::actor memory, caf::actor guard) {
  auto impl = [](external_actor self, CampaignContext* ctx, uint32_t index, caf::actor journal,
                 caf::actor memory, caf::actor guard) -> caf::behavior {
    const auto& cfg = ctx->config.agents.at(index);
    auto& st = self->state;
    st.core = ctx->cores->external_agent(index);
    st.backend = index < ctx->agent_backends.size() ? ctx->agent_backends[index].get() : nullptr;
    st.start(self, ctx, std::move(journal), std::move(memory), std::move(guard));
    if (st.backend == nullptr) {
      self->quit(caf::make_error(caf::sec::runtime_error,
                                 "agent " + cfg.name + ": no " + cfg.backend + " backend"));
      return {};
    }
    auto propose = [](external_actor s, CampaignContext* c, auto then) {
      propose_now(s, c, std::move(then));
    };
    auto step = [](external_actor s, CampaignContext* c) { async_step(s, c); };
    return {
        [self](const published_events& p) {
          follow(self, self->state.follower, p, [self](const events::Event& e) {
            self->state.view->apply(e);
            self->state.core->apply(e);
          });
        },
        // Lockstep: the campaign logs the exchange.
        lockstep_handler(self, ctx, index, propose),
        run_handler(self, ctx, step),
        stop_handler(self),
    };
  };
  return sys.spawn<caf::detached>(impl, ctx, index, std::move(journal), std::move(memory),
                                  std::move(guard));
}

}  // namespace arc::actors
