// The memory actor: answers recall queries from the memory core, as of a given seq.
#include "actors/follower.h"
#include "actors/memory_core.h"
#include "actors/messages.h"
#include "actors/shells.h"

namespace arc::actors {
namespace {

struct memory_state {
  std::unique_ptr<MemoryCore> core;
  Follower follower;
  static inline const char* name = "arc.memory";
};

}  // namespace

caf::actor spawn_memory(caf::actor_system& sys, CampaignContext* ctx, caf::actor journal) {
  auto impl = [](caf::stateful_actor<memory_state>* self, CampaignContext* ctx,
                 caf::actor journal) -> caf::behavior {
    self->state.core = ctx->cores->memory();
    self->send(journal, subscribe_atom_v, caf::actor{self});
    return {
        [self](const published_events& p) {
          follow(self, self->state.follower, p,
                 [self](const events::Event& e) { self->state.core->apply(e); });
        },
        [self](recall_atom, const std::string& kernel_type, uint64_t as_of) {
          auto rp = self->make_response_promise<recall_msg>();
          self->state.follower.when(as_of, [self, rp, kernel_type, as_of]() mutable {
            rp.deliver(recall_msg{self->state.core->recall(kernel_type, as_of)});
          });
          return rp;
        },
    };
  };
  return sys.spawn(impl, ctx, std::move(journal));
}

}  // namespace arc::actors
