#include "replay/verify_core.h"

#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "base/sha256.h"

namespace arc::replay {
namespace {

using actors::kCampaignActor;

bool close_enough(double a, double b) {
  if (a == b) return true;
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

std::string describe_decision(const fb::DecisionT& d) {
  std::ostringstream os;
  os << fb::EnumNameVerdict(d.verdict) << " score=" << d.score << " margin=" << d.margin
     << " eval_seq=" << d.evaluation_seq << " reason=\"" << d.reason << "\"";
  return os.str();
}

std::string decision_difference(const fb::DecisionT& want, const fb::DecisionT& got) {
  if (want.verdict != got.verdict || want.candidate_hash != got.candidate_hash ||
      want.agent != got.agent || want.evaluation_seq != got.evaluation_seq ||
      !close_enough(want.score, got.score) || !close_enough(want.margin, got.margin) ||
      !close_enough(want.incumbent_score, got.incumbent_score) ||
      want.speedups.size() != got.speedups.size() || want.pairs != got.pairs ||
      want.incumbent_hash != got.incumbent_hash ||
      !close_enough(want.paired_ratio, got.paired_ratio) ||
      !close_enough(want.paired_bound, got.paired_bound) ||
      want.slower_workload != got.slower_workload) {
    return "decision differs: re-derived " + describe_decision(want) + ", logged " +
           describe_decision(got);
  }
  for (size_t i = 0; i < want.speedups.size(); ++i) {
    if (!close_enough(want.speedups[i], got.speedups[i])) {
      return "decision differs in the speedup of workload " + std::to_string(i);
    }
  }
  return "";
}

std::string proposal_text(const fb::CandidateProposedT& p) {
  return "candidate " + p.candidate_hash.substr(0, 12) + " move " + p.move + " skill " + p.skill +
         " parent " + p.parent.substr(0, 12) + " view_seq " + std::to_string(p.view_seq);
}

class Verifier {
 public:
  Verifier(const actors::CoreFactory& cores, ArtifactLookup artifacts)
      : cores_(cores), artifacts_(std::move(artifacts)) {}

  VerifyReport run(const std::vector<events::Event>& log) {
    if (auto r = verify_preamble(log)) return *r;
    setup();

    // Pass 1: the views each agent proposed from (llm/exec agents: each exchange's view).
    std::set<std::string> external;
    for (const auto& a : cores_.settings().agents) {
      if (a.format != nullptr) external.insert(a.name);
    }
    for (const auto& e : log) {
      if (e.payload.type == fb::Payload::CandidateProposed) {
        const auto* p = e.payload.AsCandidateProposed();
        if (p->agent != kCampaignActor && external.count(p->agent) == 0) {
          needed_[p->agent].push_back(p->view_seq);
        }
      } else if (e.payload.type == fb::Payload::AgentExchange) {
        const auto* p = e.payload.AsAgentExchange();
        if (external.count(p->agent) == 0) {
          return fail(e.seq, "AgentExchange for '" + p->agent + "', which is no llm/exec agent");
        }
        needed_[p->agent].push_back(p->view_seq);
      }
    }
    for (auto& [agent, views] : needed_) cursor_[agent] = 0;

    // Pass 2: fold and compare.
    uint64_t expected_seq = log.front().seq;
    for (const auto& e : log) {
      if (e.seq != expected_seq)
        return fail(e.seq, "seq gap: expected " + std::to_string(expected_seq));
      ++expected_seq;
      if (std::string why = check(e); !why.empty()) return fail(e.seq, why);
      apply(e);
      if (std::string why = derive_after(e.seq); !why.empty()) return fail(e.seq, why);
      ++report_.events;
    }
    if (auto due = plateau_->due(); !due.empty()) {
      return fail(log.back().seq, "a plateau was due and never recorded");
    }
    for (const auto& [agent, q] : pending_) {
      if (!q.empty() && q.front().second > 0) {
        return fail(log.back().seq, "agent " + agent + ": a proposal was cut short");
      }
    }
    for (const auto& [agent, q] : asked_) {
      if (!q.empty()) return fail(log.back().seq, "agent " + agent + ": an exchange is missing");
    }
    report_.ok = true;
    return report_;
  }

 private:
  void setup() {
    view_ = cores_.view();
    memory_ = cores_.memory();
    guard_ = cores_.guard();
    plateau_ = cores_.plateau();
  }

  VerifyReport fail(uint64_t seq, std::string why) {
    report_.ok = false;
    report_.divergence_seq = seq;
    report_.message = std::move(why);
    return report_;
  }

  // The expected events of a proposal, in log order.
  static std::vector<events::Event> expected_events(const actors::Proposal& p,
                                                    const std::string& agent) {
    std::vector<events::Event> out;
    if (p.drafted) out.push_back(events::make_event(agent, *p.drafted));
    if (p.inspected) out.push_back(events::make_event(agent, *p.inspected));
    if (p.proposed) out.push_back(events::make_event(agent, *p.proposed));
    return out;
  }

  std::string check(const events::Event& e) {
    switch (e.payload.type) {
      case fb::Payload::AgentSpawned: {
        const auto* p = e.payload.AsAgentSpawned();
        const auto& agents = cores_.settings().agents;
        if (p->index >= agents.size() || agents[p->index].name != p->agent) {
          return "AgentSpawned " + p->agent + " does not match the campaign's agents";
        }
        return "";
      }
      case fb::Payload::StrategyDrafted:
      case fb::Payload::SiblingInspected:
      case fb::Payload::CandidateProposed:
        return check_proposal_part(e);
      case fb::Payload::Decision:
        return check_decision(e);
      case fb::Payload::ConclusionRecorded: {
        if (!expected_conclusion_) return "a ConclusionRecorded that no decision calls for";
        fb::ConclusionRecordedT want = *expected_conclusion_;
        expected_conclusion_.reset();
        const auto* got = e.payload.AsConclusionRecorded();
        if (want.kind != got->kind || want.move != got->move || want.why != got->why ||
            want.candidate_hash != got->candidate_hash ||
            !close_enough(want.speedup, got->speedup)) {
          return "conclusion differs: re-derived " +
                 std::string(fb::EnumNameConclusionKind(want.kind)) + " " + want.move +
                 ", logged " + fb::EnumNameConclusionKind(got->kind) + " " + got->move;
        }
        return "";
      }
      case fb::Payload::PlateauDetected: {
        const auto* got = e.payload.AsPlateauDetected();
        for (const auto& want : plateau_->due()) {
          if (want.scope == got->scope && want.agent == got->agent && want.window == got->window &&
              want.candidates == got->candidates) {
            ++report_.plateaus;
            return "";
          }
        }
        return "PlateauDetected for '" + got->agent + "' was not due";
      }
      case fb::Payload::CandidateEvaluated: {
        const auto* p = e.payload.AsCandidateEvaluated();
        evaluations_[e.seq] = p;
        return "";
      }
      case fb::Payload::AgentExchange:
        return check_exchange(e);
      case fb::Payload::PairMeasured:
        return check_pair(e);
      default:
        return "";
    }
  }

  // A pair must be the one the guard core asks for next: its candidate's evaluation, the
  // agent's incumbent, the next index and its order.
  std::string check_pair(const events::Event& e) {
    const auto* p = e.payload.AsPairMeasured();
    auto it = proposals_.find({p->agent, p->candidate_hash});
    if (it == proposals_.end()) return "a PairMeasured for a candidate never proposed";
    auto ev = evaluations_.find(p->evaluation_seq);
    if (ev == evaluations_.end() || ev->second->candidate_hash != p->candidate_hash) {
      return "the pair's evaluation_seq " + std::to_string(p->evaluation_seq) +
             " is not an evaluation of its candidate";
    }
    auto want = guard_->next_pair(*it->second, *ev->second, p->evaluation_seq);
    if (!want) return "a PairMeasured the decision does not need";
    if (want->incumbent_hash != p->incumbent_hash || want->index != p->index ||
        want->candidate_first != p->candidate_first) {
      return "pair differs: re-derived pair " + std::to_string(want->index) + " against " +
             want->incumbent_hash.substr(0, 12) + ", logged pair " + std::to_string(p->index) +
             " against " + p->incumbent_hash.substr(0, 12);
    }
    ++report_.pairs;
    return "";
  }

  std::string check_proposal_part(const events::Event& e) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      proposals_[{p->agent, p->candidate_hash}] = p;
      if (p->agent == kCampaignActor) {
        if (p->move != actors::kBaselineMove || p->candidate_hash != cores_.problem().seed.hash()) {
          return "the campaign's proposal is not the problem's seed";
        }
        return "";
      }
    }
    const std::string& agent = e.actor;
    auto& q = pending_[agent];
    if (q.empty())
      return "agent " + agent + ": " + events::payload_name(e.payload.type) +
             " without a view to derive it from";
    auto& [expected, pos] = q.front();
    if (pos >= expected.size()) return "agent " + agent + ": unexpected extra event";
    const events::Event& want = expected[pos];
    if (want.payload.type != e.payload.type) {
      return "agent " + agent + ": re-derived " + events::payload_name(want.payload.type) +
             ", logged " + events::payload_name(e.payload.type);
    }
    bool same = false;
    std::string detail;
    switch (e.payload.type) {
      case fb::Payload::StrategyDrafted:
        same = *want.payload.AsStrategyDrafted() == *e.payload.AsStrategyDrafted();
        detail = "draft to " + want.payload.AsStrategyDrafted()->to_skill + " vs " +
                 e.payload.AsStrategyDrafted()->to_skill;
        break;
      case fb::Payload::SiblingInspected:
        same = *want.payload.AsSiblingInspected() == *e.payload.AsSiblingInspected();
        detail = "sibling " + want.payload.AsSiblingInspected()->sibling + " vs " +
                 e.payload.AsSiblingInspected()->sibling;
        break;
      default:
        same = *want.payload.AsCandidateProposed() == *e.payload.AsCandidateProposed();
        detail = "re-derived " + proposal_text(*want.payload.AsCandidateProposed()) + "; logged " +
                 proposal_text(*e.payload.AsCandidateProposed());
        if (same) ++report_.proposals;
        break;
    }
    if (!same)
      return "agent " + agent + ": " + events::payload_name(e.payload.type) + " differs: " + detail;
    if (++pos == expected.size()) q.pop_front();
    return "";
  }

  // The exchange must carry the prompt re-built from its view; what it gave must re-derive
  // from the logged reply. Its draft, inspection and proposal are then expected next.
  std::string check_exchange(const events::Event& e) {
    const auto* x = e.payload.AsAgentExchange();
    auto& q = asked_[x->agent];
    if (q.empty()) return "agent " + x->agent + ": an exchange without a view to derive it from";
    const actors::ExchangeRequest req = std::move(q.front());
    q.pop_front();
    if (req.view_seq != x->view_seq) {
      return "agent " + x->agent + ": exchange view_seq " + std::to_string(x->view_seq) +
             " re-derived as " + std::to_string(req.view_seq);
    }
    if (arc::sha256_hex(req.prompt) != x->prompt_ref) {
      return "agent " + x->agent + ": the logged prompt " + x->prompt_ref.substr(0, 12) +
             " differs from the one re-built from view " + std::to_string(req.view_seq);
    }
    actors::ExchangeReply reply;
    reply.prompt_ref = x->prompt_ref;
    reply.response_ref = x->response_ref;
    reply.latency_ms = x->latency_ms;
    reply.attempts = x->attempts;
    if (x->response_ref.empty()) {
      reply.error = x->error;  // a transport failure: nothing was delivered to re-read
    } else {
      if (!artifacts_) return "agent " + x->agent + ": the reply's artifact store is not open";
      auto body = artifacts_(x->response_ref);
      if (!body) {
        return "agent " + x->agent + ": reply " + x->response_ref.substr(0, 12) +
               " unreadable: " + body.status().message();
      }
      reply.delivered = true;
      reply.body = std::move(body.value());
    }
    auto core = external_.find(x->agent);
    if (core == external_.end()) return "agent " + x->agent + " exchanges before it was spawned";
    actors::Proposal p = core->second->conclude(req, reply);
    const fb::AgentExchangeT& want = *p.exchange;
    if (want.ok != x->ok || want.error != x->error || want.candidate_hash != x->candidate_hash ||
        want.tokens_in != x->tokens_in || want.tokens_out != x->tokens_out ||
        want.model != x->model || want.backend != x->backend) {
      return "agent " + x->agent + ": exchange re-derived " +
             (want.ok ? "candidate " + want.candidate_hash.substr(0, 12)
                      : "failure \"" + want.error + "\"") +
             ", logged " +
             (x->ok ? "candidate " + x->candidate_hash.substr(0, 12)
                    : "failure \"" + x->error + "\"");
    }
    ++report_.exchanges;
    if (p.proposed) {
      p.exchange.reset();
      pending_[x->agent].emplace_back(expected_events(p, x->agent), 0);
    }
    return "";
  }

  std::string check_decision(const events::Event& e) {
    if (expected_conclusion_) return "the previous decision's conclusion is missing";
    if (!plateau_->due().empty()) return "a plateau was due before this decision and not recorded";
    const auto* d = e.payload.AsDecision();
    auto it = proposals_.find({d->agent, d->candidate_hash});
    if (it == proposals_.end()) return "a Decision for a candidate never proposed";
    const fb::CandidateProposedT& proposal = *it->second;
    if (d->verdict == fb::Verdict::STOP) {
      auto want = guard_->stop_decision(proposal);
      if (!want) return "logged STOP, but the campaign was not stopping";
      if (want->reason != d->reason) return "STOP reason differs";
      ++report_.decisions;
      return "";
    }
    if (auto stop = guard_->stop_decision(proposal)) {
      return "logged " + std::string(fb::EnumNameVerdict(d->verdict)) +
             ", but the campaign was stopping (re-derived STOP)";
    }
    auto ev = evaluations_.find(d->evaluation_seq);
    if (ev == evaluations_.end() || ev->second->candidate_hash != d->candidate_hash) {
      return "the decision's evaluation_seq " + std::to_string(d->evaluation_seq) +
             " is not an evaluation of its candidate";
    }
    auto want = guard_->decide(proposal, *ev->second, d->evaluation_seq);
    if (std::string diff = decision_difference(want.decision, *d); !diff.empty()) return diff;
    expected_conclusion_ = want.conclusion;
    ++report_.decisions;
    return "";
  }

  void apply(const events::Event& e) {
    if (e.payload.type == fb::Payload::AgentSpawned) {
      const auto* p = e.payload.AsAgentSpawned();
      if (cores_.external(p->index)) {
        external_.emplace(p->agent, cores_.external_agent(p->index));
      } else {
        agents_.emplace(p->agent, cores_.agent(p->index));
      }
    }
    view_->apply(e);
    memory_->apply(e);
    guard_->apply(e);
    plateau_->apply(e);
    for (auto& [name, core] : agents_) core->apply(e);
    for (auto& [name, core] : external_) core->apply(e);
  }

  // Proposals whose view is the state just reached.
  std::string derive_after(uint64_t seq) {
    for (auto& [agent, views] : needed_) {
      size_t& i = cursor_[agent];
      while (i < views.size() && views[i] == seq) {
        if (auto x = external_.find(agent); x != external_.end()) {
          auto prepared =
              x->second->prepare(*view_, memory_->recall(cores_.problem().kernel_type, seq));
          if (!prepared.request) {
            return "agent " + agent + ": re-derived nothing to ask from view " +
                   std::to_string(seq) + " (" + prepared.idle_reason + ")";
          }
          asked_[agent].push_back(std::move(*prepared.request));
          ++i;
          continue;
        }
        auto core = agents_.find(agent);
        if (core == agents_.end()) return "agent " + agent + " proposes before it was spawned";
        auto p = core->second->propose(*view_, memory_->recall(cores_.problem().kernel_type, seq));
        if (!p.proposed) {
          return "agent " + agent + ": re-derived no proposal from view " + std::to_string(seq) +
                 " (" + p.idle_reason + ")";
        }
        pending_[agent].emplace_back(expected_events(p, agent), 0);
        ++i;
      }
      if (i < views.size() && views[i] < seq) {
        return "agent " + agent + ": view_seq " + std::to_string(views[i]) +
               " is not in the log before its proposal";
      }
    }
    return "";
  }

  const actors::CoreFactory& cores_;
  ArtifactLookup artifacts_;
  std::map<std::string, std::unique_ptr<actors::ExternalAgentCore>> external_;
  std::map<std::string, std::deque<actors::ExchangeRequest>> asked_;
  VerifyReport report_;
  std::unique_ptr<actors::CampaignView> view_;
  std::unique_ptr<actors::MemoryCore> memory_;
  std::unique_ptr<actors::GuardCore> guard_;
  std::unique_ptr<actors::PlateauCore> plateau_;
  std::map<std::string, std::unique_ptr<actors::AgentCore>> agents_;
  std::map<std::string, std::vector<uint64_t>> needed_;
  std::map<std::string, size_t> cursor_;
  std::map<std::string, std::deque<std::pair<std::vector<events::Event>, size_t>>> pending_;
  // Pointers into the log being verified, which outlives the verifier.
  std::map<std::pair<std::string, std::string>, const fb::CandidateProposedT*> proposals_;
  std::unordered_map<uint64_t, const fb::CandidateEvaluatedT*> evaluations_;
  std::optional<fb::ConclusionRecordedT> expected_conclusion_;
};

}  // namespace

std::optional<VerifyReport> verify_preamble(const std::vector<events::Event>& log) {
  VerifyReport r;
  if (log.empty()) {
    r.message = "empty log";
    return r;
  }
  if (log.front().payload.type != fb::Payload::CampaignStarted) {
    r.divergence_seq = log.front().seq;
    r.damaged = true;  // every log begins with it: this one lost its start
    r.message = "the log does not begin with CampaignStarted";
    return r;
  }
  if (log.front().payload.AsCampaignStarted()->mode == "sweep") {
    // Measurements only: every record was read and checked; there is nothing to re-derive.
    r.events = log.size();
    r.ok = true;
    r.message = "a sweep log: measurements only, nothing to re-derive";
    return r;
  }
  return std::nullopt;
}

VerifyReport verify_log(const std::vector<events::Event>& log, const actors::CoreFactory& cores,
                        const ArtifactLookup& artifacts) {
  Verifier v(cores, artifacts);
  return v.run(log);
}

}  // namespace arc::replay
