#include "replay/summary.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/view.h"
#include "base/throttle.h"
#include "events/printer.h"
#include "problem/candidate.h"
#include "problem/problem.h"
#include "problem/shared_sources.h"
#include "replay/reconstruct.h"

namespace arc::replay {
namespace {

bool unanswered(const fb::CandidateEvaluatedT& e) {
  for (const auto& w : e.workloads) {
    if (w->status == fb::WorkloadStatus::UNANSWERED) return true;
  }
  return false;
}

std::string fmt_ns(double ns) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(ns >= 1e6 ? 2 : 1);
  if (ns >= 1e6) {
    os << ns / 1e6 << " ms";
  } else if (ns >= 1e3) {
    os << ns / 1e3 << " us";
  } else {
    os << ns << " ns";
  }
  return os.str();
}

std::string fmt(double v, int precision = 3) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

// The workload's "throttled" verdict (base/throttle.h); empty when it has none.
std::string throttle_verdict(const fb::WorkloadEvaluationT& w) {
  for (const auto& d : w.details) {
    if (d && d->key == throttle::kDetailKey) return d->value;
  }
  return "";
}

// The throttling reasons of the workload named `name` in an evaluation; empty when not throttled.
std::string throttled_reasons(const fb::CandidateEvaluatedT& e, const std::string& name) {
  for (const auto& w : e.workloads) {
    if (w && w->workload == name) {
      return throttle::throttled_reasons(throttle_verdict(*w)).value_or("");
    }
  }
  return "";
}

void count_throttling(ThrottleSummary& t, const fb::CandidateEvaluatedT& e, uint64_t seq,
                      const std::string& agent) {
  for (const auto& w : e.workloads) {
    if (!w) continue;
    const std::string v = throttle_verdict(*w);
    if (v.empty()) continue;
    ++t.verdicts;
    if (auto why = throttle::unknown_reason(v)) {
      if (t.unknown++ == 0) t.unknown_why = *why;
    } else if (auto reasons = throttle::throttled_reasons(v)) {
      t.throttled.push_back({seq, e.candidate_hash, agent, w->workload, *reasons});
    }
  }
}

// A measured time, marked when it was measured while the GPU throttled.
std::string marked(const std::string& time, const std::string& throttled) {
  return throttled.empty() ? time : time + " (throttled)";
}

AgentSummary& agent(CampaignSummary& s, const std::string& name) {
  for (auto& a : s.agents) {
    if (a.name == name) return a;
  }
  s.agents.push_back(AgentSummary{});
  s.agents.back().name = name;
  return s.agents.back();
}

}  // namespace

uint32_t count_unanswered(const std::vector<events::Event>& log) {
  uint32_t n = 0;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateEvaluated) {
      n += unanswered(*e.payload.AsCandidateEvaluated()) ? 1 : 0;
    }
  }
  return n;
}

uint32_t count_unanswered_gated(const std::vector<events::Event>& log) {
  std::set<std::string> gated;
  uint32_t n = 0;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      auto c = problem::Candidate::from_canonical(p->canonical);
      if (c && !c->gates.empty()) gated.insert(p->candidate_hash);
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      const auto* p = e.payload.AsCandidateEvaluated();
      n += unanswered(*p) && gated.count(p->candidate_hash) ? 1 : 0;
    }
  }
  return n;
}

CampaignSummary summarize(const std::vector<events::Event>& log, const problem::Problem* problem) {
  CampaignSummary s;
  std::vector<std::string> workloads;
  std::map<std::string, fb::CandidateEvaluatedT> evals;  // hash -> evaluation
  std::map<std::string, std::string> proposers;          // hash -> the agent that first proposed it
  std::string baseline_hash;
  int64_t t0 = 0, t1 = 0;
  actors::CampaignView view;
  for (const auto& e : log) {
    ++s.events;
    if (t0 == 0) t0 = e.wall_time_ns;
    t1 = e.wall_time_ns;
    switch (e.payload.type) {
      case fb::Payload::CampaignStarted: {
        const auto* p = e.payload.AsCampaignStarted();
        s.campaign_id = e.campaign;
        s.problem = p->problem_name;
        s.problem_dir = p->problem_dir;
        s.kernel_type = p->kernel_type;
        s.mode = p->mode;
        s.device = p->device;
        s.seed = p->seed;
        s.budget = p->budget;
        if (problem != nullptr) {
          for (const auto& w : problem->workloads) workloads.push_back(w.name);
        } else if (auto prob = problem::load_problem(p->problem_dir); prob) {
          for (const auto& w : prob->workloads) workloads.push_back(w.name);
        }
        view = actors::CampaignView(workloads);
        break;
      }
      case fb::Payload::AgentSpawned: {
        const auto* p = e.payload.AsAgentSpawned();
        auto& a = agent(s, p->agent);
        a.skill = p->skill;
        a.skills_used.push_back(p->skill);
        break;
      }
      case fb::Payload::CandidateProposed: {
        const auto* p = e.payload.AsCandidateProposed();
        proposers.emplace(p->candidate_hash, p->agent);
        if (p->agent == actors::kCampaignActor) {
          baseline_hash = p->candidate_hash;
        } else {
          ++agent(s, p->agent).candidates;
        }
        break;
      }
      case fb::Payload::CandidateEvaluated: {
        const auto* p = e.payload.AsCandidateEvaluated();
        evals.emplace(p->candidate_hash, *p);
        s.unanswered += unanswered(*p) ? 1 : 0;
        auto who = proposers.find(p->candidate_hash);
        count_throttling(s.throttle, *p, e.seq, who == proposers.end() ? "" : who->second);
        break;
      }
      case fb::Payload::Decision: {
        const auto* p = e.payload.AsDecision();
        if (p->agent == actors::kCampaignActor) break;
        auto& a = agent(s, p->agent);
        switch (p->verdict) {
          case fb::Verdict::KEEP:
            ++a.keeps;
            ++s.keeps;
            a.best_score = std::max(a.best_score, p->score);
            break;
          case fb::Verdict::REVERT:
            ++a.reverts;
            break;
          case fb::Verdict::REJECT: {
            ++a.rejects;
            ++s.rejects;
            std::string status = "OTHER";
            if (auto it = evals.find(p->candidate_hash); it != evals.end()) {
              for (const auto& w : it->second.workloads) {
                if (w->status != fb::WorkloadStatus::OK) {
                  status = fb::EnumNameWorkloadStatus(w->status);
                  break;
                }
              }
            }
            ++a.rejects_by_status[status];
            break;
          }
          case fb::Verdict::STOP:
            ++a.stops;
            break;
        }
        break;
      }
      case fb::Payload::ConclusionRecorded:
        if (e.payload.AsConclusionRecorded()->kind == fb::ConclusionKind::WIN) {
          ++s.wins;
        } else {
          ++s.traps;
        }
        break;
      case fb::Payload::PlateauDetected: {
        const auto* p = e.payload.AsPlateauDetected();
        if (p->scope == fb::PlateauScope::AGENT) ++agent(s, p->agent).plateaus;
        break;
      }
      case fb::Payload::StrategyDrafted: {
        const auto* p = e.payload.AsStrategyDrafted();
        auto& a = agent(s, p->agent);
        ++a.drafts;
        a.skill = p->to_skill;
        a.skills_used.push_back(p->to_skill);
        break;
      }
      case fb::Payload::AgentExchange: {
        const auto* p = e.payload.AsAgentExchange();
        auto& a = agent(s, p->agent);
        ++a.exchanges;
        if (!p->ok) ++a.failed_exchanges;
        a.tokens_in += p->tokens_in;
        a.tokens_out += p->tokens_out;
        a.exchange_ms += p->latency_ms;
        break;
      }
      case fb::Payload::SiblingInspected:
        if (e.payload.AsSiblingInspected()->adopted) {
          ++agent(s, e.payload.AsSiblingInspected()->agent).adoptions;
        }
        break;
      case fb::Payload::CampaignStopped: {
        const auto* p = e.payload.AsCampaignStopped();
        s.stopped = true;
        s.stop_reason = p->reason;
        break;
      }
      default:
        break;
    }
    const uint32_t before = view.decided();
    view.apply(e);
    if (view.decided() != before) {
      const auto* best = view.best();
      s.best_curve.emplace_back(view.decided(), best ? best->score : 1.0);
    }
  }
  s.candidates = view.decided();
  s.wall_seconds = static_cast<double>(t1 - t0) / 1e9;
  const actors::CandidateRecord* best = view.best();
  if (best != nullptr) {
    s.best_hash = best->hash;
    s.best_canonical = best->candidate.canonical();
    s.best_agent = best->agent;
    s.best_move = best->move;
    s.best_score = best->score;
  }
  auto base_it = evals.find(baseline_hash);
  auto best_it = best ? evals.find(best->hash) : evals.end();
  for (const auto& name : workloads) {
    WorkloadSummary w;
    w.name = name;
    if (base_it != evals.end()) {
      for (const auto& x : base_it->second.workloads) {
        if (x->workload == name) w.baseline_ns = x->median_ns;
      }
      w.baseline_throttled = throttled_reasons(base_it->second, name);
    }
    if (best_it != evals.end()) {
      for (const auto& x : best_it->second.workloads) {
        if (x->workload == name) {
          w.best_ns = x->median_ns;
          w.sol_ns = x->sol_ns;
        }
      }
      w.best_throttled = throttled_reasons(best_it->second, name);
    }
    if (w.best_ns > 0) w.speedup = w.baseline_ns / w.best_ns;
    const double head = w.baseline_ns - w.sol_ns;
    if (w.best_ns > 0 && head > 0) w.sol_score = 1.0 / (1.0 + (w.best_ns - w.sol_ns) / head);
    s.workloads.push_back(w);
  }
  return s;
}

nlohmann::json to_json(const CampaignSummary& s) {
  nlohmann::json j;
  j["campaign"] = s.campaign_id;
  j["problem"] = s.problem;
  j["kernel_type"] = s.kernel_type;
  j["mode"] = s.mode;
  j["device"] = s.device;
  j["seed"] = s.seed;
  j["budget"] = s.budget;
  j["events"] = s.events;
  j["stopped"] = s.stopped;
  j["stop_reason"] = s.stop_reason;
  j["candidates"] = s.candidates;
  j["keeps"] = s.keeps;
  j["rejects"] = s.rejects;
  j["wins"] = s.wins;
  j["traps"] = s.traps;
  j["unanswered"] = s.unanswered;
  j["best"] = {
      {"hash", s.best_hash},
      {"score", s.best_score},
      {"agent", s.best_agent},
      {"move", s.best_move},
      {"candidate", nlohmann::json::parse(s.best_canonical.empty() ? "null" : s.best_canonical)}};
  j["workloads"] = nlohmann::json::array();
  for (const auto& w : s.workloads) {
    j["workloads"].push_back({{"name", w.name},
                              {"baseline_ns", w.baseline_ns},
                              {"best_ns", w.best_ns},
                              {"speedup", w.speedup},
                              {"sol_ns", w.sol_ns},
                              {"sol_score", w.sol_score},
                              {"baseline_throttled", w.baseline_throttled},
                              {"best_throttled", w.best_throttled}});
  }
  nlohmann::json throttled = nlohmann::json::array();
  for (const auto& m : s.throttle.throttled) {
    throttled.push_back({{"seq", m.seq},
                         {"candidate", m.candidate_hash},
                         {"agent", m.agent},
                         {"workload", m.workload},
                         {"reasons", m.reasons}});
  }
  j["throttle"] = {{"verdicts", s.throttle.verdicts},
                   {"unknown", s.throttle.unknown},
                   {"unknown_why", s.throttle.unknown_why},
                   {"throttled", std::move(throttled)}};
  j["agents"] = nlohmann::json::array();
  for (const auto& a : s.agents) {
    j["agents"].push_back({{"name", a.name},
                           {"skill", a.skill},
                           {"skills_used", a.skills_used},
                           {"candidates", a.candidates},
                           {"keeps", a.keeps},
                           {"reverts", a.reverts},
                           {"rejects", a.rejects},
                           {"rejects_by_status", a.rejects_by_status},
                           {"stops", a.stops},
                           {"plateaus", a.plateaus},
                           {"drafts", a.drafts},
                           {"adoptions", a.adoptions},
                           {"best_score", a.best_score}});
    if (a.exchanges > 0) {
      j["agents"].back()["exchanges"] = {{"count", a.exchanges},
                                         {"failed", a.failed_exchanges},
                                         {"tokens_in", a.tokens_in},
                                         {"tokens_out", a.tokens_out},
                                         {"latency_ms", a.exchange_ms}};
    }
  }
  j["wall_seconds"] = s.wall_seconds;
  return j;
}

std::string to_table(const CampaignSummary& s) {
  std::ostringstream os;
  os << "campaign " << s.campaign_id << "  problem " << s.problem << " (" << s.kernel_type
     << ")  mode " << s.mode << "  seed " << s.seed << "\n";
  os << "device   " << s.device << "\n";
  os << "stopped  " << (s.stopped ? s.stop_reason : "(not stopped)") << " after " << s.candidates
     << " candidates, " << fmt(s.wall_seconds, 1) << " s\n";
  if (s.unanswered > 0) {
    os << "replay    " << s.unanswered
       << " candidates had no recorded measurement (UNANSWERED, rejected without a trap)\n";
  }
  os << "\n";
  os << std::left << std::setw(12) << "agent" << std::setw(14) << "skill" << std::right
     << std::setw(6) << "cand" << std::setw(6) << "keep" << std::setw(8) << "revert" << std::setw(8)
     << "reject" << std::setw(9) << "plateau" << std::setw(7) << "draft" << std::setw(10) << "best"
     << "\n";
  for (const auto& a : s.agents) {
    os << std::left << std::setw(12) << a.name << std::setw(14) << a.skill << std::right
       << std::setw(6) << a.candidates << std::setw(6) << a.keeps << std::setw(8) << a.reverts
       << std::setw(8) << a.rejects << std::setw(9) << a.plateaus << std::setw(7) << a.drafts
       << std::setw(9) << fmt(a.best_score, 3) << "x\n";
  }
  os << "\n"
     << std::left << std::setw(16) << "workload" << std::right << std::setw(12) << "baseline"
     << std::setw(12) << "best" << std::setw(10) << "speedup" << std::setw(12) << "SOL bound"
     << std::setw(10) << "SOL score"
     << "\n";
  for (const auto& w : s.workloads) {
    os << std::left << std::setw(16) << w.name << std::right << std::setw(12)
       << fmt_ns(w.baseline_ns) << std::setw(12) << fmt_ns(w.best_ns) << std::setw(9)
       << fmt(w.speedup, 2) << "x" << std::setw(12) << fmt_ns(w.sol_ns) << std::setw(10)
       << fmt(w.sol_score, 3);
    if (!w.baseline_throttled.empty()) os << "  baseline throttled: " << w.baseline_throttled;
    if (!w.best_throttled.empty()) os << "  best throttled: " << w.best_throttled;
    os << "\n";
  }
  if (!s.throttle.throttled.empty()) {
    os << "\nthrottled " << s.throttle.throttled.size() << " of " << s.throttle.verdicts
       << " workload measurements were taken while the GPU throttled:\n";
    for (const auto& m : s.throttle.throttled) {
      os << "  #" << m.seq << " " << problem::short_hash(m.candidate_hash) << " " << m.agent << " "
         << m.workload << ": " << m.reasons << "\n";
    }
  }
  os << "\nbest " << problem::short_hash(s.best_hash) << " score " << fmt(s.best_score, 3)
     << "x (geometric-mean speedup over the seed) by " << s.best_agent << " via " << s.best_move
     << "\n";
  return os.str();
}

namespace {

// The report's account of throttling (base/throttle.h, docs/cuda-evaluator.md); nothing for a
// log whose measurements carry no verdict.
std::string throttle_markdown(const ThrottleSummary& t) {
  if (t.verdicts == 0) return "";
  std::ostringstream os;
  os << "\n## Throttling\n\n";
  if (!t.throttled.empty()) {
    os << "**" << t.throttled.size() << " of " << t.verdicts
       << " workload measurements were taken while the GPU throttled** (NVML's clocks-event "
          "reasons or violation counters, read before and after the timed runs); their times "
          "may be slower than the kernel is:\n\n"
          "| seq | candidate | agent | workload | reasons |\n|---:|---|---|---|---|\n";
    for (const auto& m : t.throttled) {
      os << "| " << m.seq << " | `" << problem::short_hash(m.candidate_hash) << "` | " << m.agent
         << " | " << m.workload << " | " << m.reasons << " |\n";
    }
  } else if (t.unknown < t.verdicts) {
    os << "No workload measurement was taken while the GPU throttled (" << t.verdicts - t.unknown
       << " with NVML readings before and after the timed runs).\n";
  }
  if (t.unknown > 0) {
    os << (t.throttled.empty() && t.unknown == t.verdicts ? "" : "\n") << "Whether the device "
       << "throttled is unknown for " << t.unknown << " of " << t.verdicts
       << " workload measurements: " << t.unknown_why << ".\n";
  }
  return os.str();
}

}  // namespace

std::string report_markdown(const CampaignSummary& s) {
  std::ostringstream os;
  os << "# KernelArc campaign " << s.campaign_id << "\n\n";
  os << "| | |\n|---|---|\n";
  os << "| problem | " << s.problem << " (" << s.kernel_type << ") |\n";
  os << "| device | " << s.device << " |\n";
  os << "| mode, seed, budget | " << s.mode << ", " << s.seed << ", " << s.budget << " |\n";
  os << "| stopped | " << s.stop_reason << " |\n";
  os << "| candidates | " << s.candidates << " (" << s.keeps << " kept, " << s.rejects
     << " rejected) |\n";
  os << "| wins / traps recorded | " << s.wins << " / " << s.traps << " |\n";
  os << "| best | `" << problem::short_hash(s.best_hash) << "` score " << fmt(s.best_score, 3)
     << "x by " << s.best_agent << " (" << s.best_move << ") |\n\n";
  os << "## Workloads\n\n| workload | baseline | best | speedup | SOL bound | SOL score |\n"
        "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& w : s.workloads) {
    os << "| " << w.name << " | " << marked(fmt_ns(w.baseline_ns), w.baseline_throttled) << " | "
       << marked(fmt_ns(w.best_ns), w.best_throttled) << " | " << fmt(w.speedup, 2) << "x | "
       << fmt_ns(w.sol_ns) << " | " << fmt(w.sol_score, 3) << " |\n";
  }
  os << throttle_markdown(s.throttle);
  os << "\n## Agents\n\n| agent | skills | candidates | keep | revert | reject | plateaus | "
        "drafts | adoptions | best |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& a : s.agents) {
    std::string skills;
    for (const auto& k : a.skills_used) skills += (skills.empty() ? "" : " → ") + k;
    os << "| " << a.name << " | " << skills << " | " << a.candidates << " | " << a.keeps << " | "
       << a.reverts << " | " << a.rejects << " | " << a.plateaus << " | " << a.drafts << " | "
       << a.adoptions << " | " << fmt(a.best_score, 3) << "x |\n";
  }
  bool any_exchange = false;
  for (const auto& a : s.agents) any_exchange |= a.exchanges > 0;
  if (any_exchange) {
    os << "\n## Model and command exchanges\n\n| agent | exchanges | no candidate | tokens in | "
          "tokens out | mean latency |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& a : s.agents) {
      if (a.exchanges == 0) continue;
      os << "| " << a.name << " | " << a.exchanges << " | " << a.failed_exchanges << " | "
         << a.tokens_in << " | " << a.tokens_out << " | " << fmt(a.exchange_ms / a.exchanges, 0)
         << " ms |\n";
    }
    os << "\n`arc-replay show RUN --conversation` prints every prompt and reply.\n";
  }
  os << "\n## Best so far\n\n| candidate | best score |\n|---:|---:|\n";
  double last = -1;
  for (const auto& [i, score] : s.best_curve) {
    if (score != last) os << "| " << i << " | " << fmt(score, 3) << "x |\n";
    last = score;
  }
  os << "\nThe best implementation is in `best/`; `arc-replay verify` re-derives every "
        "proposal and decision of this run from its log.\n";
  return os.str();
}

Result<std::vector<events::Event>> read_run(const std::filesystem::path& run_dir) {
  auto journal = open_run_log(run_dir);
  if (!journal) return journal.status();
  auto all = journal.value()->read_all();
  if (!all) return Status::corruption(run_dir.string() + ": " + all.status().message());
  return all;
}

}  // namespace arc::replay
