#include "actors/memory_core.h"

#include <algorithm>

namespace arc::actors {

void MemoryCore::apply(const events::Event& e) {
  last_seq_ = e.seq;
  if (e.payload.type != fb::Payload::ConclusionRecorded) return;
  const auto* p = e.payload.AsConclusionRecorded();
  Conclusion c{e.seq, p->kind, p->kernel_type, p->move, p->speedup, p->why, p->candidate_hash,
               p->agent};
  auto& list = p->kind == fb::ConclusionKind::WIN ? wins_[p->kernel_type] : traps_[p->kernel_type];
  list.push_back(std::move(c));
}

Recall MemoryCore::recall(const std::string& kernel_type, uint64_t as_of) const {
  Recall r;
  if (auto it = wins_.find(kernel_type); it != wins_.end()) {
    // Ranked by pointer; only the recalled ones are copied.
    std::vector<const Conclusion*> known;
    for (const auto& c : it->second) {
      if (c.seq > as_of) break;
      known.push_back(&c);
    }
    std::stable_sort(known.begin(), known.end(), [](const Conclusion* a, const Conclusion* b) {
      return a->speedup > b->speedup;
    });
    if (bounds_.wins != 0 && known.size() > bounds_.wins) known.resize(bounds_.wins);
    r.wins.reserve(known.size());
    for (const Conclusion* c : known) r.wins.push_back(*c);
  }
  if (auto it = traps_.find(kernel_type); it != traps_.end()) {
    for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) {
      if (c->seq > as_of) continue;
      r.traps.push_back(*c);
      if (bounds_.traps != 0 && r.traps.size() >= bounds_.traps) break;
    }
  }
  return r;
}

}  // namespace arc::actors
