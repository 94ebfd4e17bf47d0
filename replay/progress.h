#pragma once
// Live progress of a campaign from its events: on a terminal a table redrawn in place (per
// agent: skill, candidates, keeps, best speedup); otherwise one plain line per decision.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::replay {

class ProgressPrinter {
 public:
  ProgressPrinter(FILE* out, bool terminal, uint32_t budget);
  void on_event(const events::Event& e);
  void finish();

 private:
  struct Row {
    std::string skill;
    uint32_t candidates = 0, keeps = 0, rejects = 0;
    double best = 1.0;
    std::string last;
  };
  void redraw();
  FILE* out_;
  bool terminal_;
  uint32_t budget_;
  uint32_t decided_ = 0;
  double best_ = 1.0;
  std::vector<std::string> order_;
  std::map<std::string, Row> rows_;
  std::map<std::string, std::string> moves_;  // candidate hash -> move
  int drawn_lines_ = 0;
  std::mutex mu_;
};

}  // namespace arc::replay
