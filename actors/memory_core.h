#pragma once
// MemoryCore: the campaign's shared memory of validated conclusions, per kernel type.
// Wins are kept as the top K by speedup; traps as the last K (FIFO). K = 0 means unbounded.
// Recall can be asked "as of" any seq already applied, so a proposal made from view v recalls
// exactly what was known at v, whatever arrived since. Every conclusion is retained for that;
// the bounds apply to what is recalled.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::actors {

struct Conclusion {
  uint64_t seq = 0;
  fb::ConclusionKind kind = fb::ConclusionKind::WIN;
  std::string kernel_type;
  std::string move;
  double speedup = 0;
  std::string why;
  std::string candidate_hash;
  std::string agent;
};

struct Recall {
  std::vector<Conclusion> wins;   // best first
  std::vector<Conclusion> traps;  // newest first
};

struct MemoryBounds {
  uint32_t wins = 16;   // 0 = unbounded
  uint32_t traps = 16;  // 0 = unbounded
};

class MemoryCore {
 public:
  explicit MemoryCore(MemoryBounds bounds = {}) : bounds_(bounds) {}

  void apply(const events::Event& e);
  uint64_t last_seq() const { return last_seq_; }

  // What memory held for `kernel_type` after applying every event with seq <= as_of.
  Recall recall(const std::string& kernel_type, uint64_t as_of) const;
  Recall recall(const std::string& kernel_type) const { return recall(kernel_type, last_seq_); }

 private:
  MemoryBounds bounds_;
  std::map<std::string, std::vector<Conclusion>> wins_;   // kernel type -> in seq order
  std::map<std::string, std::vector<Conclusion>> traps_;  // kernel type -> in seq order
  uint64_t last_seq_ = 0;
};

}  // namespace arc::actors
