// The plateau actor: after each Decision, records the plateaus the core says are due.
#include "actors/follower.h"
#include "actors/messages.h"
#include "actors/plateau_core.h"
#include "actors/shells.h"
#include "actors/view.h"

namespace arc::actors {
namespace {

struct plateau_state {
  std::unique_ptr<PlateauCore> core;
  Follower follower;
  caf::actor journal;
  static inline const char* name = "arc.plateau";
};

}  // namespace

caf::actor spawn_plateau(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal) {
  auto impl = [](caf::stateful_actor<plateau_state>* self, CampaignContext* ctx,
                 caf::actor journal) -> caf::behavior {
    self->state.core = ctx->cores->plateau();
    self->state.journal = journal;
    self->send(journal, subscribe_atom_v, caf::actor{self});
    return {
        [self](const published_events& p) {
          follow(self, self->state.follower, p,
                 [self](const events::Event& e) { self->state.core->apply(e); });
        },
        // Replies with the last seq it appended (or `upto` when nothing was due).
        [self](check_atom, uint64_t upto) {
          auto rp = self->make_response_promise<uint64_t>();
          self->state.follower.when(upto, [self, rp, upto]() mutable {
            auto due = self->state.core->due();
            if (due.empty()) {
              rp.deliver(upto);
              return;
            }
            event_list list;
            for (auto& p : due) {
              list.events.push_back(events::make_event("plateau", std::move(p)));
            }
            self->request(self->state.journal, caf::infinite, append_atom_v, std::move(list))
                .then([self, rp](const seq_list& seqs) mutable {
                  // Wait until our own events are applied so the next check cannot repeat them.
                  const uint64_t last = seqs.seqs.back();
                  self->state.follower.when(last, [rp, last]() mutable { rp.deliver(last); });
                },
                      [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
          });
          return rp;
        },
    };
  };
  return sys.spawn(impl, ctx, std::move(journal));
}

}  // namespace arc::actors
