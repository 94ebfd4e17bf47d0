#include "replay/analyze.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/view.h"

namespace arc::replay {

void Tally::add(const Tally& o) {
  candidates += o.candidates;
  keeps += o.keeps;
  reverts += o.reverts;
  rejects += o.rejects;
  stops += o.stops;
  wins += o.wins;
  traps += o.traps;
  plateaus += o.plateaus;
  drafts += o.drafts;
  adoptions += o.adoptions;
  for (const auto& [k, v] : o.rejects_by_reason) rejects_by_reason[k] += v;
  best_score = std::max(best_score, o.best_score);
}

RunAnalysis analyze_run(const std::string& label, const std::vector<events::Event>& log) {
  RunAnalysis r;
  r.label = label;
  std::map<std::pair<std::string, std::string>, std::string> skill_of;  // (agent, hash)
  std::map<std::string, std::string> first_failure;                    // hash -> status
  std::map<std::string, double> agent_best;
  double best = 1.0;
  for (const auto& e : log) {
    switch (e.payload.type) {
      case fb::Payload::CampaignStarted:
        r.campaign = e.campaign;
        r.problem = e.payload.AsCampaignStarted()->problem_name;
        r.mode = e.payload.AsCampaignStarted()->mode;
        break;
      case fb::Payload::AgentSpawned:
        r.agents[e.payload.AsAgentSpawned()->agent];
        break;
      case fb::Payload::CandidateProposed: {
        const auto* p = e.payload.AsCandidateProposed();
        if (p->agent == actors::kCampaignActor) break;
        skill_of[{p->agent, p->candidate_hash}] = p->skill;
        break;
      }
      case fb::Payload::CandidateEvaluated: {
        const auto* p = e.payload.AsCandidateEvaluated();
        for (const auto& w : p->workloads) {
          if (w->status != fb::WorkloadStatus::OK) {
            first_failure[p->candidate_hash] = fb::EnumNameWorkloadStatus(w->status);
            break;
          }
        }
        break;
      }
      case fb::Payload::Decision: {
        const auto* d = e.payload.AsDecision();
        if (d->agent == actors::kCampaignActor) break;
        const std::string skill = skill_of[{d->agent, d->candidate_hash}];
        for (Tally* t : {&r.agents[d->agent], &r.skills[skill]}) {
          switch (d->verdict) {
            case fb::Verdict::KEEP:
              ++t->keeps;
              t->best_score = std::max(t->best_score, d->score);
              break;
            case fb::Verdict::REVERT: ++t->reverts; break;
            case fb::Verdict::REJECT: {
              auto it = first_failure.find(d->candidate_hash);
              ++t->rejects;
              ++t->rejects_by_reason[it == first_failure.end() ? "OTHER" : it->second];
              break;
            }
            case fb::Verdict::STOP: ++t->stops; break;
          }
          if (d->verdict != fb::Verdict::STOP) ++t->candidates;
        }
        if (d->verdict == fb::Verdict::STOP) break;
        ++r.candidates;
        if (d->verdict == fb::Verdict::KEEP) {
          best = std::max(best, d->score);
          agent_best[d->agent] = std::max(agent_best[d->agent], d->score);
          r.markers.push_back({r.candidates, d->agent, false, d->score});
        }
        r.campaign_curve.emplace_back(r.candidates, best);
        for (const auto& [agent, _] : r.agents) {
          auto it = agent_best.find(agent);
          r.curves[agent].emplace_back(r.candidates, it == agent_best.end() ? 1.0 : it->second);
        }
        break;
      }
      case fb::Payload::ConclusionRecorded: {
        const auto* c = e.payload.AsConclusionRecorded();
        const std::string skill = skill_of[{c->agent, c->candidate_hash}];
        for (Tally* t : {&r.agents[c->agent], &r.skills[skill]}) {
          (c->kind == fb::ConclusionKind::WIN ? t->wins : t->traps)++;
        }
        break;
      }
      case fb::Payload::PlateauDetected: {
        const auto* p = e.payload.AsPlateauDetected();
        if (p->scope == fb::PlateauScope::AGENT) {
          ++r.agents[p->agent].plateaus;
          auto it = agent_best.find(p->agent);
          r.markers.push_back(
              {r.candidates, p->agent, true, it == agent_best.end() ? 1.0 : it->second});
        }
        break;
      }
      case fb::Payload::StrategyDrafted: {
        const auto* p = e.payload.AsStrategyDrafted();
        ++r.agents[p->agent].drafts;
        ++r.skills[p->to_skill].drafts;
        break;
      }
      case fb::Payload::SiblingInspected:
        if (e.payload.AsSiblingInspected()->adopted) {
          ++r.agents[e.payload.AsSiblingInspected()->agent].adoptions;
        }
        break;
      default:
        break;
    }
  }
  r.best_score = best;
  return r;
}

Analysis aggregate(std::vector<RunAnalysis> runs) {
  Analysis a;
  for (const auto& r : runs) {
    for (const auto& [name, t] : r.agents) a.agents[name].add(t);
    for (const auto& [name, t] : r.skills) a.skills[name].add(t);
  }
  a.runs = std::move(runs);
  return a;
}

namespace {

std::string reasons(const Tally& t) {
  std::string out;
  for (const auto& [k, v] : t.rejects_by_reason) {
    out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  }
  return out.empty() ? "-" : out;
}

void table(std::ostringstream& os, const std::string& title,
           const std::map<std::string, Tally>& rows) {
  os << std::left << std::setw(14) << title << std::right << std::setw(6) << "cand"
     << std::setw(6) << "keep" << std::setw(8) << "revert" << std::setw(8) << "reject"
     << std::setw(6) << "wins" << std::setw(7) << "traps" << std::setw(9) << "plateau"
     << std::setw(7) << "draft" << std::setw(10) << "best" << "  rejects by reason\n";
  for (const auto& [name, t] : rows) {
    os << std::left << std::setw(14) << (name.empty() ? "(none)" : name) << std::right
       << std::setw(6) << t.candidates << std::setw(6) << t.keeps << std::setw(8) << t.reverts
       << std::setw(8) << t.rejects << std::setw(6) << t.wins << std::setw(7) << t.traps
       << std::setw(9) << t.plateaus << std::setw(7) << t.drafts << std::setw(9) << std::fixed
       << std::setprecision(3) << t.best_score << "x  " << reasons(t) << "\n";
  }
}

nlohmann::json tally_json(const Tally& t) {
  return {{"candidates", t.candidates}, {"keeps", t.keeps},     {"reverts", t.reverts},
          {"rejects", t.rejects},       {"stops", t.stops},     {"wins", t.wins},
          {"traps", t.traps},           {"plateaus", t.plateaus}, {"drafts", t.drafts},
          {"adoptions", t.adoptions},   {"rejects_by_reason", t.rejects_by_reason},
          {"best_score", t.best_score}};
}

nlohmann::json curve_json(const std::vector<std::pair<uint32_t, double>>& c) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [i, s] : c) j.push_back({i, s});
  return j;
}

}  // namespace

std::string to_table(const Analysis& a) {
  std::ostringstream os;
  for (const auto& r : a.runs) {
    os << r.label << ": campaign " << r.campaign << ", " << r.problem << ", " << r.mode << ", "
       << r.candidates << " candidates, best " << std::fixed << std::setprecision(3)
       << r.best_score << "x\n";
  }
  os << "\n";
  table(os, a.runs.size() > 1 ? "agent (all)" : "agent", a.agents);
  os << "\n";
  table(os, a.runs.size() > 1 ? "skill (all)" : "skill", a.skills);
  return os.str();
}

nlohmann::json to_json(const Analysis& a) {
  nlohmann::json j;
  j["runs"] = nlohmann::json::array();
  for (const auto& r : a.runs) {
    nlohmann::json jr = {{"run", r.label},         {"campaign", r.campaign},
                         {"problem", r.problem},   {"mode", r.mode},
                         {"candidates", r.candidates}, {"best_score", r.best_score},
                         {"campaign_curve", curve_json(r.campaign_curve)}};
    for (const auto& [n, t] : r.agents) jr["agents"][n] = tally_json(t);
    for (const auto& [n, t] : r.skills) jr["skills"][n] = tally_json(t);
    for (const auto& [n, c] : r.curves) jr["curves"][n] = curve_json(c);
    j["runs"].push_back(std::move(jr));
  }
  for (const auto& [n, t] : a.agents) j["agents"][n] = tally_json(t);
  for (const auto& [n, t] : a.skills) j["skills"][n] = tally_json(t);
  return j;
}

}  // namespace arc::replay
