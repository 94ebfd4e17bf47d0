#pragma once
// Small in-code problems, skills and event builders for the cores' unit tests.
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "actors/view.h"
#include "events/codec.h"
#include "problem/problem.h"
#include "skills/skill.h"

namespace arc::testing {

inline problem::Problem toy_problem() {
  problem::Problem p;
  p.name = "toy";
  p.kernel_type = "softmax";
  p.axes = {"n"};
  p.workloads = {{"small", {{"n", 64}}, {}}, {"large", {{"n", 4096}}, {}}};
  problem::Family a;
  a.name = "alpha";
  a.knobs = {{"TILE_M", {"8", "16", "32", "64"}, "8"}, {"VEC", {"1", "2", "4"}, "1"}};
  problem::Family b;
  b.name = "beta";
  b.knobs = {{"TILE_M", {"16", "32"}, "16"}, {"UNROLL", {"1", "2", "4", "8"}, "1"}};
  p.families = {a, b};
  p.seed.base = a.default_variant();
  return p;
}

inline skills::Skill skill(std::string name, std::vector<std::string> knobs,
                           std::map<std::string, double> moves) {
  skills::Skill s;
  s.name = std::move(name);
  s.kernel_types = {"*"};
  s.knobs = std::move(knobs);
  s.families = {"*"};
  s.moves = std::move(moves);
  s.guidance = "test";
  return s;
}

inline std::vector<skills::Skill> toy_skills() {
  return {skill("tiling", {"TILE_*"}, {{"neighbour", 3}, {"jump", 1}}),
          skill("vectorize", {"VEC*", "UNROLL*"}, {{"neighbour", 2}, {"family_switch", 1}}),
          skill("shape-gate", {"*"}, {{"shape_gate", 2}, {"neighbour", 1}})};
}

class LogBuilder {
 public:
  template <class T>
  const events::Event& add(std::string actor, T payload) {
    events::Event e = events::make_event(std::move(actor), std::move(payload));
    e.seq = ++seq_;
    e.campaign = "test";
    log_.push_back(std::move(e));
    return log_.back();
  }
  const std::vector<events::Event>& log() const { return log_; }
  uint64_t last_seq() const { return seq_; }

 private:
  uint64_t seq_ = 0;
  std::vector<events::Event> log_;
};

inline fb::CandidateProposedT proposal(const std::string& agent, const problem::Candidate& c,
                                       const std::string& move, uint64_t view_seq = 0) {
  fb::CandidateProposedT p;
  p.agent = agent;
  p.candidate_hash = c.hash();
  p.canonical = c.canonical();
  p.move = move;
  p.view_seq = view_seq;
  return p;
}

inline fb::CandidateEvaluatedT evaluation(const std::string& hash,
                                          const std::vector<double>& medians_ns,
                                          double spread = 0.01) {
  fb::CandidateEvaluatedT e;
  e.candidate_hash = hash;
  const char* names[] = {"small", "large"};
  for (size_t i = 0; i < medians_ns.size(); ++i) {
    auto w = std::make_unique<fb::WorkloadEvaluationT>();
    w->workload = names[i];
    w->status = fb::WorkloadStatus::OK;
    w->median_ns = medians_ns[i];
    w->spread = spread;
    w->sol_ns = 1.0;
    e.workloads.push_back(std::move(w));
  }
  return e;
}

// Pair `index` of `p` against `incumbent` (candidate first in odd pairs), every side OK: per
// workload its name, the candidate's median and the incumbent's.
inline fb::PairMeasuredT pair_measured(
    const fb::CandidateProposedT& p, const std::string& incumbent, uint32_t index,
    uint64_t eval_seq, const std::vector<std::tuple<std::string, double, double>>& workloads) {
  fb::PairMeasuredT m;
  m.candidate_hash = p.candidate_hash;
  m.agent = p.agent;
  m.incumbent_hash = incumbent;
  m.index = index;
  m.candidate_first = index % 2 == 1;
  m.evaluation_seq = eval_seq;
  for (const auto& [name, candidate_ns, incumbent_ns] : workloads) {
    auto w = std::make_unique<fb::PairWorkloadT>();
    w->workload = name;
    w->candidate = std::make_unique<fb::PairSideT>();
    w->candidate->status = fb::WorkloadStatus::OK;
    w->candidate->median_ns = candidate_ns;
    w->incumbent = std::make_unique<fb::PairSideT>();
    w->incumbent->status = fb::WorkloadStatus::OK;
    w->incumbent->median_ns = incumbent_ns;
    m.workloads.push_back(std::move(w));
  }
  return m;
}

// The opening of a campaign's log: `agents` spawned, the problem's seed proposed as the baseline,
// evaluated at 1000 ns (small) and 8000 ns (large) and KEPT with score 1; each event is handed
// to `apply` as it is added.
template <class Apply>
void open_campaign(LogBuilder& log, const problem::Problem& problem,
                   std::initializer_list<const char*> agents, Apply&& apply) {
  for (const char* name : agents) {
    fb::AgentSpawnedT a;
    a.agent = name;
    apply(log.add(actors::kCampaignActor, a));
  }
  auto base = proposal(actors::kCampaignActor, problem.seed, actors::kBaselineMove);
  apply(log.add(actors::kCampaignActor, base));
  apply(log.add(actors::kGuardActor, evaluation(base.candidate_hash, {1000, 8000})));
  fb::DecisionT d;
  d.agent = actors::kCampaignActor;
  d.candidate_hash = base.candidate_hash;
  d.verdict = fb::Verdict::KEEP;
  d.score = 1.0;
  apply(log.add(actors::kGuardActor, d));
}

}  // namespace arc::testing
