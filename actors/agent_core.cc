#include "actors/agent_core.h"

#include <algorithm>
#include <set>

#include "actors/model_move.h"
#include "actors/search_space.h"
#include "base/sha256.h"

namespace arc::actors {
namespace {

// Salt of the seed of the model move's pick, apart from the agent's other draws.
constexpr uint64_t kModelSalt = 0x6d6f64656c6d6f76ULL;

// splitmix64 stream: the C++ standard's distributions are implementation-defined, so every draw
// goes through this to stay identical across compilers.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() { return mix64(s_ += kSplitMixIncrement); }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  double unit() { return unit_double(next()); }

 private:
  uint64_t s_;
};

size_t value_index(const problem::Knob& k, const std::string& v) {
  auto it = std::find(k.values.begin(), k.values.end(), v);
  if (it != k.values.end()) return static_cast<size_t>(it - k.values.begin());
  auto d = std::find(k.values.begin(), k.values.end(), k.default_value);
  return d == k.values.end() ? 0 : static_cast<size_t>(d - k.values.begin());
}

std::string knob_value(const problem::Variant& v, const problem::Knob& k) {
  auto it = v.knobs.find(k.name);
  return it == v.knobs.end() ? k.default_value : it->second;
}

// Knobs of the variant's family that the skill may touch and that have a choice.
std::vector<const problem::Knob*> knobs_in_scope(const problem::Problem& p, const skills::Skill& s,
                                                 const problem::Variant& v) {
  std::vector<const problem::Knob*> out;
  const problem::Family* f = v.family.empty() ? nullptr : p.family(v.family);
  if (f == nullptr) return out;
  for (const auto& k : f->knobs) {
    if (k.values.size() > 1 && s.may_touch_knob(k.name)) out.push_back(&k);
  }
  return out;
}

std::vector<const problem::Family*> families_in_scope(const problem::Problem& p,
                                                      const skills::Skill& s,
                                                      const std::string& except) {
  std::vector<const problem::Family*> out;
  for (const auto& f : p.families) {
    if (f.name != except && s.may_use_family(f.name)) out.push_back(&f);
  }
  return out;
}

problem::Variant switch_family(const problem::Family& to, const problem::Variant& from,
                               const problem::Problem& p) {
  problem::Variant v = to.default_variant();
  for (const auto& k : to.knobs) {
    auto it = from.knobs.find(k.name);
    if (it != from.knobs.end() &&
        std::find(k.values.begin(), k.values.end(), it->second) != k.values.end()) {
      v.knobs[k.name] = it->second;
    }
  }
  // Carried values that break the family's constraints give way to its defaults.
  if (!to.constraint_violation(v.knobs, p.integer_params()).empty()) return to.default_variant();
  return v;
}

// Applies a recorded move text ("knob:N=V", "knobs:A=x,B=y", "family:F") to a variant.
bool apply_move_text(const problem::Problem& p, const std::string& move, problem::Variant& v) {
  auto colon = move.find(':');
  if (colon == std::string::npos) return false;
  const std::string kind = move.substr(0, colon);
  const std::string rest = move.substr(colon + 1);
  if (kind == "family") {
    const problem::Family* f = p.family(rest);
    if (f == nullptr || f->name == v.family) return false;
    v = switch_family(*f, v, p);
    return true;
  }
  if (kind != "knob" && kind != "knobs") return false;
  const problem::Family* f = v.family.empty() ? nullptr : p.family(v.family);
  if (f == nullptr) return false;
  bool changed = false;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string item =
        rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = item.find('=');
    if (eq != std::string::npos) {
      const problem::Knob* k = f->knob(item.substr(0, eq));
      const std::string val = item.substr(eq + 1);
      if (k != nullptr && std::find(k->values.begin(), k->values.end(), val) != k->values.end() &&
          knob_value(v, *k) != val) {
        v.knobs[k->name] = val;
        changed = true;
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return changed;
}

// A gated candidate collapses gates equal to its base.
void normalize(problem::Candidate& c) {
  for (auto it = c.gates.begin(); it != c.gates.end();) {
    it = it->second == c.base ? c.gates.erase(it) : std::next(it);
  }
}

// The canonical form of c once normalized (c itself is left as it is).
std::string normalized_canonical(const problem::Candidate& c) {
  for (const auto& [w, v] : c.gates) {
    if (v == c.base) {
      problem::Candidate n = c;
      normalize(n);
      return n.canonical();
    }
  }
  return c.canonical();
}

// Per workload, the fastest correct variant seen so far that no REVERT showed slower there in
// pairs (CampaignView::slower_on), composed into one dispatching candidate: the base is the
// variant that wins most workloads (first in workload order on ties).
std::optional<problem::Candidate> compose_gates(const CampaignView& view) {
  const auto& names = view.workload_names();
  std::vector<const problem::Variant*> best(names.size(), nullptr);
  std::vector<double> best_ns(names.size(), 0);
  for (const auto& rec : view.candidates()) {
    for (size_t i = 0; i < rec.workloads.size() && i < names.size(); ++i) {
      const auto& o = rec.workloads[i];
      if (o.ok && o.median_ns > 0 && (best[i] == nullptr || o.median_ns < best_ns[i])) {
        const problem::Variant& v = rec.candidate.variant_for(names[i]);
        if (view.slower_on(names[i], v)) continue;
        best[i] = &v;
        best_ns[i] = o.median_ns;
      }
    }
  }
  if (best.empty() || std::find(best.begin(), best.end(), nullptr) != best.end()) {
    return std::nullopt;
  }
  size_t base_i = 0, base_count = 0;
  for (size_t i = 0; i < best.size(); ++i) {
    size_t count = 0;
    for (const auto* b : best) count += (*b == *best[i]) ? 1 : 0;
    if (count > base_count) {
      base_count = count;
      base_i = i;
    }
  }
  problem::Candidate g;
  g.base = *best[base_i];
  for (size_t i = 0; i < best.size(); ++i) {
    if (!(*best[i] == g.base)) g.gates[names[i]] = *best[i];
  }
  if (g.gates.empty()) return std::nullopt;
  return g;
}

}  // namespace

uint64_t seed_for(uint64_t campaign_seed, uint64_t a, uint64_t b) {
  return mix64(mix64(mix64(campaign_seed) ^ a) ^ (b * 0x632be59bd9b4e019ULL));
}

AgentCore::AgentCore(AgentSetup setup, const problem::Problem& problem,
                     const std::vector<skills::Skill>& skills)
    : setup_(std::move(setup)), problem_(&problem), skills_(&skills), draft_(setup_.skill) {}

const skills::Skill* AgentCore::find_skill(const std::string& name) const {
  for (const auto& s : *skills_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void AgentCore::apply(const events::Event& e) {
  if (e.payload.type == fb::Payload::CandidateProposed &&
      e.payload.AsCandidateProposed()->agent == setup_.name) {
    ++proposals_;
    draft_.proposed();
  }
  draft_.apply(e, setup_.name);
}

std::vector<std::string> AgentCore::draft_order(const std::string& from, uint64_t rng_seed) const {
  std::vector<std::string> fresh, seen;
  for (const auto& s : *skills_) {
    if (s.name == from || s.opt_in || !s.eligible_for(problem_->kernel_type)) continue;
    const bool used = draft_.used(s.name);
    (used ? seen : fresh).push_back(s.name);
  }
  // Skills not tried yet come first; each group in a seeded order.
  Rng rng(rng_seed);
  for (auto* group : {&fresh, &seen}) {
    for (size_t i = group->size(); i > 1; --i) std::swap((*group)[i - 1], (*group)[rng.below(i)]);
  }
  fresh.insert(fresh.end(), seen.begin(), seen.end());
  return fresh;
}

std::optional<AgentCore::Generated> AgentCore::generate(const skills::Skill& skill,
                                                        const Incumbent& inc,
                                                        const CampaignView& view,
                                                        const Recall& recall, uint64_t rng_seed,
                                                        int attempts, ComposedGate& gate) const {
  const problem::Problem& p = *problem_;
  Rng rng(rng_seed);
  std::set<std::string> traps;
  for (const auto& t : recall.traps) traps.insert(t.move);

  // Move kinds and weights; recalled wins are always worth re-trying.
  std::vector<std::pair<std::string, double>> kinds(skill.moves.begin(), skill.moves.end());
  if (!recall.wins.empty() && skill.moves.count("recall_win") == 0) {
    kinds.emplace_back("recall_win", 1.0);
  }
  double total = 0;
  for (const auto& [k, w] : kinds) total += w;

  // Targets: the base variant and each gated variant.
  std::vector<std::string> targets = {""};
  for (const auto& [w, _] : inc.candidate.gates) targets.push_back(w);

  const std::string inc_canonical = inc.candidate.canonical();
  auto accept = [&](const problem::Candidate& c, std::string move) -> std::optional<Generated> {
    if (traps.count(move) != 0) return std::nullopt;
    if (setup_.restriction && !setup_.restriction->admits(c)) return std::nullopt;
    // Outside the families' constraints is outside the search space.
    if (!p.constraint_violation(c).empty()) return std::nullopt;
    std::string canonical = normalized_canonical(c);
    if (canonical == inc_canonical || view.known_canonical(canonical)) return std::nullopt;
    return Generated{std::move(canonical), std::move(move)};
  };
  auto target_variant = [&](problem::Candidate& c, const std::string& t) -> problem::Variant& {
    return t.empty() ? c.base : c.gates[t];
  };

  const bool gating = skill.moves.count("shape_gate") != 0;
  if (gating && !gate.done) {
    gate.done = true;
    gate.gated = compose_gates(view);
    if (gate.gated) gate.canonical = gate.gated->canonical();
  }
  static const std::optional<problem::Candidate> kNoGate;
  const std::optional<problem::Candidate>& gated = gating ? gate.gated : kNoGate;

  // Deterministic walk: the composed gate, each recalled win, every single-knob value and
  // every family in scope. If it finds nothing new the skill is exhausted around this base;
  // that only changes when recall or the composed gate does (the known set only grows), so
  // it is remembered under that key and the random moves below are not tried.
  std::string key = skill.name + "|" + inc.hash + "|" + (gated ? gate.canonical : "");
  for (const auto& t : recall.traps) key += "|t:" + t.move;
  for (const auto& w : recall.wins) key += "|w:" + w.move;
  if (exhausted_.count(key) != 0) return std::nullopt;
  auto walk = [&]() -> std::optional<Generated> {
    if (gated) {
      if (auto out =
              accept(*gated, "shape_gate:" + std::to_string(gated->gates.size()) + "_gates")) {
        return out;
      }
    }
    // Each move edits the target variant of one working copy of the incumbent and puts it
    // back afterwards: the same candidates as a fresh copy per move, without the copies.
    for (const auto& target : targets) {
      problem::Candidate c = inc.candidate;
      problem::Variant& v = target_variant(c, target);
      const problem::Variant v0 = v;
      for (const auto& w : recall.wins) {
        if (apply_move_text(p, w.move, v)) {
          if (auto out = accept(c, w.move)) return out;
        }
        v = v0;
      }
      for (const problem::Knob* k : knobs_in_scope(p, skill, v0)) {
        const std::string current = knob_value(v0, *k);
        for (const auto& val : k->values) {
          if (current == val) continue;
          v.knobs[k->name] = val;
          if (auto out = accept(c, "knob:" + k->name + "=" + val)) return out;
        }
        if (auto it = v0.knobs.find(k->name); it != v0.knobs.end()) {
          v.knobs[k->name] = it->second;
        } else {
          v.knobs.erase(k->name);
        }
      }
      if (skill.moves.count("family_switch") != 0) {
        for (const problem::Family* f : families_in_scope(p, skill, v0.family)) {
          v = switch_family(*f, v0, p);
          if (auto out = accept(c, "family:" + f->name)) return out;
        }
      }
    }
    return std::nullopt;
  };
  // The model move (actors/model_move.h) fits a surrogate: at most once per call. Its pick
  // depends on the whole view, not on the target variant or the walk.
  bool model_tried = false;
  auto model = [&]() -> std::optional<Generated> {
    if (model_tried) return std::nullopt;
    model_tried = true;
    const SearchSpace space(p, skill);
    problem::Candidate c;
    auto admissible = [&accept, &c](const problem::Variant& v) {
      c.base = v;
      return accept(c, std::string()).has_value();
    };
    ModelOptions options;
    options.restriction = setup_.restriction.get();
    auto pick = pick_by_model(space, inc.candidate.base, view, mix64(rng_seed ^ kModelSalt),
                              admissible, options);
    if (!pick) return std::nullopt;
    c.base = std::move(pick->variant);
    return accept(c, std::string("model:") + (pick->explored ? "explore:" : "ei:") + c.base.key());
  };
  std::optional<Generated> walked = walk();
  if (!walked) {
    // Nothing new around the incumbent; the model looks over the whole space. It finds nothing
    // only when every configuration of its pool is visited, which stays so.
    if (skill.moves.count("model") != 0) {
      if (auto out = model()) return out;
    }
    exhausted_.insert(std::move(key));
    return std::nullopt;
  }

  for (int attempt = 0; attempt < attempts && total > 0; ++attempt) {
    double r = rng.unit() * total;
    std::string kind = kinds.back().first;
    for (const auto& [k, w] : kinds) {
      if (r < w) {
        kind = k;
        break;
      }
      r -= w;
    }
    if (kind == "model") {
      if (auto out = model()) return out;
      continue;
    }
    problem::Candidate c = inc.candidate;
    const std::string target = targets[rng.below(targets.size())];
    problem::Variant& v = target_variant(c, target);
    std::string move;
    if (kind == "neighbour" || kind == "jump") {
      auto ks = knobs_in_scope(p, skill, v);
      if (ks.empty()) continue;
      const problem::Knob& k = *ks[rng.below(ks.size())];
      const size_t i = value_index(k, knob_value(v, k));
      size_t j;
      if (kind == "neighbour") {
        const bool up = (rng.next() & 1) != 0;
        j = up ? (i + 1 < k.values.size() ? i + 1 : i - 1) : (i > 0 ? i - 1 : i + 1);
      } else {
        j = (i + 1 + rng.below(k.values.size() - 1)) % k.values.size();
      }
      v.knobs[k.name] = k.values[j];
      move = "knob:" + k.name + "=" + k.values[j];
    } else if (kind == "pair") {
      auto ks = knobs_in_scope(p, skill, v);
      if (ks.size() < 2) continue;
      size_t a = rng.below(ks.size());
      size_t b = (a + 1 + rng.below(ks.size() - 1)) % ks.size();
      if (ks[a]->name > ks[b]->name) std::swap(a, b);
      move = "knobs:";
      for (size_t idx : {a, b}) {
        const problem::Knob& k = *ks[idx];
        const size_t i = value_index(k, knob_value(v, k));
        const bool up = (rng.next() & 1) != 0;
        const size_t j = up ? (i + 1 < k.values.size() ? i + 1 : i - 1) : (i > 0 ? i - 1 : i + 1);
        v.knobs[k.name] = k.values[j];
        move += (idx == a ? "" : ",") + k.name + "=" + k.values[j];
      }
    } else if (kind == "family_switch") {
      auto fs = families_in_scope(p, skill, v.family);
      if (fs.empty()) continue;
      const problem::Family& f = *fs[rng.below(fs.size())];
      v = switch_family(f, v, p);
      move = "family:" + f.name;
    } else if (kind == "recall_win") {
      if (recall.wins.empty()) continue;
      const size_t n = std::min<size_t>(recall.wins.size(), 4);
      const Conclusion& w = recall.wins[rng.below(n)];
      if (!apply_move_text(p, w.move, v)) continue;
      move = w.move;
    } else if (kind == "shape_gate") {
      if (!gated) continue;
      c = *gated;
      move = "shape_gate:" + std::to_string(c.gates.size()) + "_gates";
    } else {
      continue;  // a move kind this agent does not know
    }
    if (auto out = accept(c, std::move(move))) return out;
  }

  // Random moves found nothing new: the walk's first find.
  return walked;
}

Proposal AgentCore::propose(const CampaignView& view, const Recall& recall) const {
  Proposal out;
  const Incumbent* mine = view.incumbent(setup_.name);
  if (mine == nullptr) {
    out.idle_reason = "no incumbent yet (baseline not decided)";
    return out;
  }
  Incumbent inc = *mine;
  std::string skill_name = draft_.skill;
  const uint64_t base_seed = seed_for(setup_.campaign_seed, setup_.index + 1, proposals_);

  auto note_draft = [&](const std::string& to, const std::string& reason) {
    if (!out.drafted) {
      fb::StrategyDraftedT d;
      d.agent = setup_.name;
      d.from_skill = draft_.skill;
      d.reason = reason;
      out.drafted = std::move(d);
    }
    out.drafted->to_skill = to;
    skill_name = to;
  };

  std::vector<std::string> order;
  if (setup_.drafting) order = draft_order(draft_.skill, base_seed ^ 0xd1b54a32d192ed03ULL);
  // An opt-in skill is kept through plateaus (skills/skill.h).
  const skills::Skill* current = find_skill(draft_.skill);
  const bool holds = current != nullptr && current->opt_in;
  if (draft_.pending && setup_.drafting && !order.empty() && !holds) {
    note_draft(order.front(), "plateau: no KEEP in the last window");
    if (setup_.sibling_inspection) {
      // The fastest sibling whose incumbent beats ours (first in name order on ties).
      const Incumbent* best = nullptr;
      std::string best_agent;
      for (const auto& [agent, sib] : view.incumbents()) {
        if (agent == setup_.name) continue;
        if (sib.score > inc.score && (best == nullptr || sib.score > best->score)) {
          best = &sib;
          best_agent = agent;
        }
      }
      if (best != nullptr) {
        fb::SiblingInspectedT s;
        s.agent = setup_.name;
        s.sibling = best_agent;
        s.sibling_incumbent = best->hash;
        s.sibling_score = best->score;
        s.adopted = true;
        out.inspected = std::move(s);
        inc = *best;
      }
    }
  }

  ComposedGate gate;
  auto try_skill = [&](const std::string& name, const Incumbent& from, uint64_t seed,
                       int attempts = 8) -> std::optional<Generated> {
    const skills::Skill* skill = find_skill(name);
    if (skill == nullptr) return std::nullopt;
    return generate(*skill, from, view, recall, seed, attempts, gate);
  };

  std::optional<Generated> g = try_skill(skill_name, inc, base_seed);
  // Nothing new around the incumbent with this skill: draft the next skill that has something.
  for (size_t i = 0; !g && setup_.drafting && i < order.size(); ++i) {
    if (order[i] == skill_name) continue;
    g = try_skill(order[i], inc, base_seed ^ (i + 1));
    if (g) note_draft(order[i], "exhausted: skill " + skill_name + " has nothing new to try");
  }
  // Every skill is exhausted around the incumbent: build on the campaign's other candidates.
  Incumbent base = inc;
  if (!g) {
    std::vector<const CandidateRecord*> bases;
    // Correct candidates first (best first), then rejected ones: a neighbour of a rejected
    // candidate may not share its fault.
    for (const auto& r : view.candidates()) {
      if (r.hash == inc.hash || !r.verdict) continue;
      bases.push_back(&r);
    }
    std::stable_sort(
        bases.begin(), bases.end(),
        [](const CandidateRecord* a, const CandidateRecord* b) { return a->score > b->score; });
    for (size_t i = 0; !g && i < bases.size() && i < 16; ++i) {
      base = Incumbent{bases[i]->hash, bases[i]->candidate, bases[i]->score};
      // A few random moves, then the exhaustive walk: these bases are mostly well explored.
      g = try_skill(skill_name, base, base_seed ^ (0x100 + i), 4);
    }
  }
  if (!g) {
    out.drafted.reset();
    out.inspected.reset();
    out.idle_reason = "nothing new to propose from any skill or base";
    return out;
  }
  fb::CandidateProposedT c;
  c.candidate_hash = arc::sha256_hex(g->canonical);
  c.agent = setup_.name;
  c.parent = base.hash;
  c.skill = skill_name;
  c.move = g->move;
  c.view_seq = view.last_seq();
  c.canonical = std::move(g->canonical);
  out.proposed = std::move(c);
  return out;
}

}  // namespace arc::actors
