#pragma once
// Follower: the part of an actor shell that follows the journal. It takes published events in
// seq order (decoded by the journal, or decoding the frames itself when they come alone),
// hands each event to the actor's cores, and runs continuations that wait for the log to reach
// a given seq.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "actors/messages.h"
#include "events/codec.h"

namespace arc::actors {

class Follower {
 public:
  // Applies every published event with `apply`, then runs the continuations now due.
  // Returns false when a frame fails verification (the caller stops the actor).
  template <class Apply>
  bool on_published(const published_events& p, Apply&& apply) {
    uint64_t seq = p.first_seq;
    if (p.events) {
      // Decoded once by the journal from these frames.
      for (const auto& e : *p.events) {
        if (seq++ <= applied_) continue;  // already seen
        apply(e);
        applied_ = e.seq;
      }
    } else {
      for (const auto& frame : *p.frames) {
        if (seq++ <= applied_) continue;
        auto e = events::decode_frame(frame);
        if (!e) return false;
        apply(static_cast<const events::Event&>(e.value()));
        applied_ = e->seq;
      }
    }
    run_due();
    return true;
  }

  // Runs k once every event with seq <= `seq` has been applied.
  void when(uint64_t seq, std::function<void()> k) {
    if (applied_ >= seq) {
      k();
      return;
    }
    waiting_.emplace_back(seq, std::move(k));
  }

  uint64_t applied() const { return applied_; }

 private:
  void run_due() {
    while (true) {
      auto it = waiting_.begin();
      for (; it != waiting_.end(); ++it) {
        if (it->first <= applied_) break;
      }
      if (it == waiting_.end()) return;
      auto k = std::move(it->second);
      waiting_.erase(it);
      k();  // may add new continuations
    }
  }

  uint64_t applied_ = 0;
  std::vector<std::pair<uint64_t, std::function<void()>>> waiting_;
};

// The published-events handler of a shell: applies every event with `apply`; a frame that
// fails verification stops the actor, since its cores can no longer follow the log.
template <class Self, class Apply>
void follow(Self* self, Follower& follower, const published_events& p, Apply&& apply) {
  if (!follower.on_published(p, std::forward<Apply>(apply))) {
    self->quit(caf::make_error(caf::sec::runtime_error, "a published event failed verification"));
  }
}

}  // namespace arc::actors
