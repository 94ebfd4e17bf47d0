#pragma once
// A strategy skill loaded from skills/<name>/skill.toml (+ SKILL.md guidance text).
//
// skill.toml:
//   name         = "tiling"                      # must equal the folder name
//   description  = "one line"
//   kernel_types = ["gemm", "softmax"]           # eligible kernel types; ["*"] for all
//   knobs        = ["TILE*", "BLOCK_*"]          # glob patterns over knob names it may touch
//   families     = ["*"]                         # glob patterns over family names it may use
//   opt_in       = false                         # optional; see Skill::opt_in
//   [moves]                                      # move kind -> weight (> 0); kinds below
//   neighbour = 4
//   jump = 1
//
// Move kinds understood by builtin agents:
//   neighbour      one knob in scope moves to an adjacent value
//   jump           one knob in scope takes a random other value
//   pair           two knobs in scope change at once (neighbour steps)
//   family_switch  the base variant moves to another family in scope (its default knobs)
//   recall_win     re-applies a recalled win's move to the incumbent
//   shape_gate     composes, per workload, the fastest correct variant seen so far into one
//                  dispatching candidate
//   model          the unvisited configuration (family + knobs in scope) with the best expected
//                  improvement under a surrogate fitted to the campaign's evaluations
//                  (actors/model_move.h); a random one until enough are evaluated
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace arc::skills {

inline const std::vector<std::string>& move_kinds() {
  static const std::vector<std::string> k = {"neighbour",  "jump",       "pair", "family_switch",
                                             "recall_win", "shape_gate", "model"};
  return k;
}

struct Skill {
  std::string name;
  std::string description;
  std::vector<std::string> kernel_types;
  std::vector<std::string> knobs;
  std::vector<std::string> families;
  std::map<std::string, double> moves;  // kind -> weight
  // An opt-in skill is used only by agents that a campaign starts in it: drafts never switch
  // into it, and its agents keep it through plateaus (they still leave it when it has nothing
  // new to propose). So a campaign that names no opt-in skill runs as if it did not exist.
  // Default false.
  bool opt_in = false;
  std::string guidance;    // SKILL.md text
  std::string definition;  // skill.toml text as read (kept in a run's log)

  bool eligible_for(const std::string& kernel_type) const;
  bool may_touch_knob(const std::string& knob) const;
  bool may_use_family(const std::string& family) const;
};

// Glob match with '*' and '?'.
bool glob_match(std::string_view pattern, std::string_view text);

Result<Skill> load_skill(const std::filesystem::path& folder);
// Every skill under `root` (one folder each), sorted by name.
Result<std::vector<Skill>> load_skills(const std::filesystem::path& root);

}  // namespace arc::skills
