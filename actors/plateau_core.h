#pragma once
// PlateauCore: detects agents (and the campaign) that stopped improving.
//   agent scope:    no KEEP in the agent's last `window` decided candidates -> PlateauDetected;
//                   it fires once, then re-arms when the agent drafts a new strategy or KEEPs.
//   campaign scope: no KEEP campaign-wide in the last `global_window` decided candidates
//                   (0 = never) -> PlateauDetected{scope=CAMPAIGN}; the campaign stops.
// The shell asks due() after each Decision and records what it returns; due() stays the same
// until those PlateauDetected events are applied.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::actors {

struct PlateauConfig {
  uint32_t window = 8;
  uint32_t global_window = 24;
};

class PlateauCore {
 public:
  explicit PlateauCore(PlateauConfig config = {}) : config_(config) {}

  void apply(const events::Event& e);
  // Plateaus due after the last applied Decision, agent scope first.
  std::vector<fb::PlateauDetectedT> due() const;
  bool campaign_plateaued() const { return campaign_fired_; }

 private:
  struct AgentState {
    uint32_t since_keep = 0;
    uint32_t decided = 0;
    bool fired = false;
  };
  PlateauConfig config_;
  std::map<std::string, AgentState> agents_;
  uint32_t global_since_keep_ = 0;
  uint32_t global_decided_ = 0;
  bool campaign_fired_ = false;
  std::string last_decided_agent_;
};

}  // namespace arc::actors
