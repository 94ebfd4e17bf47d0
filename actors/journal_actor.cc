// The journal actor: the single writer of the campaign log.
#include <memory>

#include "actors/campaign_core.h"
#include "actors/messages.h"
#include "actors/shells.h"

namespace arc::actors {
namespace {

// Every frame verified and unpacked, once for all subscribers.
Result<std::shared_ptr<const std::vector<events::Event>>> decode_all(
    const std::vector<std::string>& frames) {
  auto out = std::make_shared<std::vector<events::Event>>();
  out->reserve(frames.size());
  for (const auto& f : frames) {
    auto e = events::decode_frame(f);
    if (!e) return e.status();
    out->push_back(std::move(e.value()));
  }
  return std::shared_ptr<const std::vector<events::Event>>(std::move(out));
}

struct journal_state {
  JournalCore core;
  std::vector<caf::actor> subscribers;
  static inline const char* name = "arc.journal";
};

}  // namespace

void add_arc_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::arc>();
}

caf::actor spawn_journal(caf::actor_system& sys, CampaignContext* ctx) {
  auto impl = [](caf::stateful_actor<journal_state>* self, CampaignContext* ctx) -> caf::behavior {
    // A journal that already holds events (a resumed campaign) starts from them.
    Status s = ctx->journal->read(1, 0, [self](uint64_t, const events::Event& e) {
      self->state.core.apply(e);
      return true;
    });
    if (!s) {
      self->quit(caf::make_error(caf::sec::runtime_error, s.to_string()));
      return {};
    }
    return {
        [self, ctx](append_atom, event_list& list) -> caf::result<seq_list> {
          if (list.events.empty()) return seq_list{};
          if (auto why = self->state.core.refuse(list.events); !why.empty()) {
            return caf::make_error(caf::sec::runtime_error, "journal refuses the append: " + why);
          }
          auto frames = std::make_shared<std::vector<std::string>>();
          auto last = ctx->journal->append_all(list.events, frames.get());
          if (!last) {
            // The log is the truth: nothing unlogged may go on. Tell the requester why; after
            // a failed write to the disk the journal takes no more (Journal::write_failure),
            // so the journal actor stops too and the campaign, which monitors it, stops.
            auto err = caf::make_error(caf::sec::runtime_error,
                                       "journal append failed: " + last.status().to_string());
            if (!ctx->journal->write_failure()) self->quit(err);
            return err;
          }
          seq_list out;
          for (const auto& e : list.events) {
            out.seqs.push_back(e.seq);
            self->state.core.apply(e);
            if (ctx->observer) ctx->observer(e);
          }
          auto decoded = decode_all(*frames);
          if (!decoded) {
            return caf::make_error(caf::sec::runtime_error,
                                   "journal: " + decoded.status().to_string());
          }
          published_events pub{std::move(frames), out.seqs.front(), std::move(decoded.value())};
          for (const auto& s : self->state.subscribers) self->send(s, pub);
          return out;
        },
        // A subscriber first receives everything already in the log, then every new event.
        [self, ctx](subscribe_atom, const caf::actor& who) {
          self->state.subscribers.push_back(who);
          if (ctx->journal->last_seq() == 0) return;
          auto frames = std::make_shared<std::vector<std::string>>();
          Status s = ctx->journal->read(1, 0, [&frames](uint64_t, const events::Event& e) {
            frames->push_back(events::encode_frame(e));
            return true;
          });
          if (!s) {
            self->quit(caf::make_error(caf::sec::runtime_error, s.to_string()));
            return;
          }
          auto decoded = decode_all(*frames);
          if (!decoded) {
            self->quit(caf::make_error(caf::sec::runtime_error, decoded.status().to_string()));
            return;
          }
          self->send(who, published_events{std::move(frames), 1, std::move(decoded.value())});
        },
        [ctx](sync_atom) -> bool { return ctx->journal->sync().is_ok(); },
    };
  };
  return sys.spawn(impl, ctx);
}

}  // namespace arc::actors
