#include "replay/export.h"

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "events/printer.h"

namespace arc::replay {
namespace {

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

using Row = std::vector<std::string>;

void write_row(const std::vector<std::string>& columns, const Row& row, ExportFormat format,
               std::ostream& out, const nlohmann::json* extra = nullptr) {
  if (format == ExportFormat::kCsv) {
    for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_field(row[i]);
    out << "\n";
    return;
  }
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < columns.size(); ++i) j[columns[i]] = row[i];
  if (extra != nullptr) j["event"] = *extra;
  out << events::dump_json(j) << "\n";
}

// The agent, candidate and a short detail of an event, for the events table.
void event_fields(const events::Event& e, std::string& agent, std::string& candidate,
                  std::string& detail) {
  switch (e.payload.type) {
    case fb::Payload::AgentSpawned:
      agent = e.payload.AsAgentSpawned()->agent;
      detail = e.payload.AsAgentSpawned()->skill;
      break;
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      agent = p->agent;
      candidate = p->candidate_hash;
      detail = p->move;
      break;
    }
    case fb::Payload::CompileFinished:
      candidate = e.payload.AsCompileFinished()->candidate_hash;
      detail = e.payload.AsCompileFinished()->ok ? "ok" : "failed";
      break;
    case fb::Payload::CandidateEvaluated:
      candidate = e.payload.AsCandidateEvaluated()->candidate_hash;
      break;
    case fb::Payload::Decision: {
      const auto* d = e.payload.AsDecision();
      agent = d->agent;
      candidate = d->candidate_hash;
      detail = std::string(fb::EnumNameVerdict(d->verdict)) + " " + num(d->score);
      break;
    }
    case fb::Payload::ConclusionRecorded: {
      const auto* c = e.payload.AsConclusionRecorded();
      agent = c->agent;
      candidate = c->candidate_hash;
      detail = std::string(fb::EnumNameConclusionKind(c->kind)) + " " + c->move;
      break;
    }
    case fb::Payload::PlateauDetected:
      agent = e.payload.AsPlateauDetected()->agent;
      detail = fb::EnumNamePlateauScope(e.payload.AsPlateauDetected()->scope);
      break;
    case fb::Payload::StrategyDrafted:
      agent = e.payload.AsStrategyDrafted()->agent;
      detail = e.payload.AsStrategyDrafted()->from_skill + " -> " +
               e.payload.AsStrategyDrafted()->to_skill;
      break;
    case fb::Payload::SiblingInspected:
      agent = e.payload.AsSiblingInspected()->agent;
      candidate = e.payload.AsSiblingInspected()->sibling_incumbent;
      detail = e.payload.AsSiblingInspected()->sibling;
      break;
    case fb::Payload::AgentExchange: {
      const auto* x = e.payload.AsAgentExchange();
      agent = x->agent;
      candidate = x->candidate_hash;
      detail = x->backend + (x->ok ? " ok" : " failed: " + x->error) + " (" +
               num(x->latency_ms) + " ms, " + std::to_string(x->tokens_in) + "+" +
               std::to_string(x->tokens_out) + " tokens)";
      break;
    }
    case fb::Payload::CampaignStopped:
      candidate = e.payload.AsCampaignStopped()->best_hash;
      detail = e.payload.AsCampaignStopped()->reason;
      break;
    default:
      break;
  }
}

}  // namespace

const std::vector<std::string>& export_columns(ExportTable table) {
  static const std::vector<std::string> events = {"seq",   "wall_time_ns", "actor", "type",
                                                  "agent", "candidate",    "detail"};
  static const std::vector<std::string> evaluations = {
      "seq",          "candidate",  "agent",     "skill",      "move",  "parent",
      "workload",     "status",     "median_ns", "p25_ns",     "p75_ns", "min_ns",
      "spread",       "samples",    "sol_ns",    "method",     "max_abs_error",
      "matched_ratio", "verdict",   "score",     "error"};
  return table == ExportTable::kEvents ? events : evaluations;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void export_log(const std::vector<events::Event>& log, ExportTable table, ExportFormat format,
                std::ostream& out) {
  const auto& columns = export_columns(table);
  if (format == ExportFormat::kCsv) write_row(columns, columns, format, out);
  if (table == ExportTable::kEvents) {
    for (const auto& e : log) {
      std::string agent, candidate, detail;
      event_fields(e, agent, candidate, detail);
      Row row = {std::to_string(e.seq), std::to_string(e.wall_time_ns), e.actor,
                 events::payload_name(e.payload.type), agent, candidate, detail};
      if (format == ExportFormat::kJsonl) {
        const nlohmann::json full = events::to_json(e);
        write_row(columns, row, format, out, &full);
      } else {
        write_row(columns, row, format, out);
      }
    }
    return;
  }
  // Evaluations: rows are emitted at the decision, so each carries its verdict. A candidate
  // decided for several agents (a duplicate proposal) appears once per decision.
  std::map<std::pair<std::string, std::string>, const fb::CandidateProposedT*> proposals;
  std::map<uint64_t, const fb::CandidateEvaluatedT*> evaluations;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::CandidateProposed) {
      const auto* p = e.payload.AsCandidateProposed();
      proposals[{p->agent, p->candidate_hash}] = p;
    } else if (e.payload.type == fb::Payload::CandidateEvaluated) {
      evaluations[e.seq] = e.payload.AsCandidateEvaluated();
    } else if (e.payload.type == fb::Payload::Decision) {
      const auto* d = e.payload.AsDecision();
      auto ev = evaluations.find(d->evaluation_seq);
      if (d->verdict == fb::Verdict::STOP || ev == evaluations.end()) continue;
      auto pr = proposals.find({d->agent, d->candidate_hash});
      const fb::CandidateProposedT* p = pr == proposals.end() ? nullptr : pr->second;
      for (const auto& w : ev->second->workloads) {
        Row row = {std::to_string(d->evaluation_seq),
                   d->candidate_hash,
                   d->agent,
                   p ? p->skill : "",
                   p ? p->move : "",
                   p ? p->parent : "",
                   w->workload,
                   fb::EnumNameWorkloadStatus(w->status),
                   num(w->median_ns),
                   num(w->p25_ns),
                   num(w->p75_ns),
                   num(w->min_ns),
                   num(w->spread),
                   std::to_string(w->samples_ns.size()),
                   num(w->sol_ns),
                   w->method,
                   num(w->max_abs_error),
                   num(w->matched_ratio),
                   fb::EnumNameVerdict(d->verdict),
                   num(d->score),
                   w->error};
        write_row(columns, row, format, out);
      }
    }
  }
}

}  // namespace arc::replay
