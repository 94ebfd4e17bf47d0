#pragma once
// SearchSpace: the configurations a skill can reach on a problem, and their features for the
// surrogate (actors/surrogate.h). A configuration is one family in the skill's scope with a
// value for each of its knobs; the knobs the skill may touch range over all their values, the
// others keep an anchor's (the incumbent's) values, or their defaults where the anchor has
// none for that family.
//
// Features, one row per configuration, the same layout for every family:
//   - one-hot of the family, when more than one family is in scope;
//   - per knob name (sorted) that some family in scope can vary: when every value of that
//     name in every family in scope is a number, the number (log2 when they are positive powers
//     of two spanning at least 4x, a 0 then sitting one step below the smallest), normalised
//     over those values to [0, 1]; otherwise the value's ordinal index in its family's list,
//     normalised to [0, 1]; -1 for a family without that knob.
// Pure: a function of the problem and the skill.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/rng.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::actors {

// A restriction of a campaign's search space to listed variants, e.g. those a sweep measured
// (arc-replay ablate --space measured: then compositional replay can answer every candidate the
// builtin agents propose), and/or away from whole families (arc-replay ablate --exclude-family).
// A candidate is in the restricted space when its base and every gate are admitted; the model
// move scores the listed configurations alone when the restriction lists them
// (actors/model_move.h). Pure data: a filter on proposals, never on what the guard or the
// evaluators do.
struct VariantRestriction {
  std::map<std::string, problem::Variant> variants;  // by problem::Variant::key()
  // False (default): only `variants` are admitted. True: every variant of the problem's space
  // is (`variants` is not read), but for the excluded families.
  bool whole_space = false;
  std::set<std::string> excluded_families;  // never admitted, listed or not

  bool admits(const problem::Variant& v) const {
    if (excluded_families.count(v.family) != 0) return false;
    return whole_space || variants.count(v.key()) != 0;
  }
  bool admits(const problem::Candidate& c) const {
    if (!admits(c.base)) return false;
    for (const auto& [workload, v] : c.gates) {
      if (!admits(v)) return false;
    }
    return true;
  }
};

// Element 0: the family's index in SearchSpace::families(); then, per knob of that family in
// the family's order, the index of its value in the knob's list.
using Config = std::vector<uint16_t>;

class SearchSpace {
 public:
  // `problem` must outlive the space; `skill` is read here only.
  SearchSpace(const problem::Problem& problem, const skills::Skill& skill);

  // Families in the skill's scope, in problem order.
  const std::vector<const problem::Family*>& families() const { return families_; }
  // Number of configurations: over the families in scope, the product of the value counts of
  // the knobs in scope (a double: a space can exceed 2^64).
  double size() const { return size_; }
  size_t features() const { return columns_; }

  // The configuration of a variant: nullopt for free source, a family out of scope or a knob
  // value the family does not list. Knobs the variant leaves out take their defaults.
  std::optional<Config> config_of(const problem::Variant& v) const;
  // The variant of a configuration, every knob of its family set.
  problem::Variant variant_of(const Config& c) const;
  // Writes the configuration's features() values to row.
  void encode(const Config& c, double* row) const;

  // Calls fn(config) for every configuration, family by family in scope order, knobs in scope
  // counting like an odometer (the family's last knob fastest), the others from `anchor`.
  template <class Fn>
  void for_each(const problem::Variant& anchor, Fn&& fn) const;
  // A configuration drawn uniformly from the space (out-of-scope knobs from `anchor`); the
  // space must not be empty.
  Config sample(const problem::Variant& anchor, Xoshiro256& rng) const;
  // Every configuration one step away: one knob in scope to an adjacent value (in list order,
  // lower first), in the family's knob order.
  std::vector<Config> neighbours(const Config& c) const;

 private:
  struct KnobSlot {
    bool in_scope = false;
    size_t column = 0;           // feature column (when has_column)
    bool has_column = false;     // some family in scope varies this knob name
    std::vector<double> values;  // feature value per value index
  };
  // The family's configuration with every knob from `anchor` where it has a listed value for
  // this family, else the default.
  Config anchored(uint16_t family, const problem::Variant& anchor) const;

  std::vector<const problem::Family*> families_;
  std::vector<std::vector<KnobSlot>> slots_;  // [family][knob]
  std::vector<double> family_size_;
  double size_ = 0;
  size_t family_columns_ = 0;  // 0 or families_.size()
  size_t columns_ = 0;
};

template <class Fn>
void SearchSpace::for_each(const problem::Variant& anchor, Fn&& fn) const {
  for (size_t f = 0; f < families_.size(); ++f) {
    Config c = anchored(static_cast<uint16_t>(f), anchor);
    const std::vector<KnobSlot>& slots = slots_[f];
    const auto& knobs = families_[f]->knobs;
    for (size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].in_scope) c[k + 1] = 0;
    }
    while (true) {
      fn(static_cast<const Config&>(c));
      bool advanced = false;
      for (size_t k = slots.size(); k-- > 0;) {
        if (!slots[k].in_scope) continue;
        if (++c[k + 1] < knobs[k].values.size()) {
          advanced = true;
          break;
        }
        c[k + 1] = 0;
      }
      if (!advanced) break;  // every knob in scope wrapped: the family is done
    }
  }
}

}  // namespace arc::actors
