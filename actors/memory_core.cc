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
    for (const auto& c : it->second) {
      if (c.seq > as_of) break;
      r.wins.push_back(c);
    }
    std::stable_sort(r.wins.begin(), r.wins.end(), [](const Conclusion& a, const Conclusion& b) {
      return a.speedup > b.speedup;
    });
    if (bounds_.wins != 0 && r.wins.size() > bounds_.wins) r.wins.resize(bounds_.wins);
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
