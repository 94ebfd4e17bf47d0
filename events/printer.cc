// Text and JSON renderings of events. The text form is for people scanning a log (one line,
// the fields that identify and explain an event, hashes cut to 12 hex digits); the JSON form is
// lossless (every field, full hashes, enums by name) for exports and tools.
#include "events/printer.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/string_literal.h"
#include "base/throttle.h"

namespace arc::events {
namespace {

using nlohmann::json;

constexpr size_t kShortHash = 12;

std::string short_hash(const std::string& h) {
  return h.size() > kShortHash ? h.substr(0, kShortHash) : h;
}

// A value is quoted when it would not read back as one token.
std::string quote_if_needed(const std::string& v) {
  bool plain = !v.empty();
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      plain = false;
      break;
    }
  }
  return plain ? v : string_literal(v);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Accumulates " key=value" pairs of one text line.
class Line {
 public:
  explicit Line(std::string head) : s_(std::move(head)) {}
  Line& str(const char* k, const std::string& v) {
    s_ += ' ';
    s_ += k;
    s_ += '=';
    s_ += quote_if_needed(v);
    return *this;
  }
  // Optional text: omitted when empty, so lines stay short.
  Line& opt(const char* k, const std::string& v) { return v.empty() ? *this : str(k, v); }
  Line& hash(const char* k, const std::string& v) { return str(k, short_hash(v)); }
  Line& opt_hash(const char* k, const std::string& v) { return v.empty() ? *this : hash(k, v); }
  Line& u(const char* k, uint64_t v) { return raw(k, std::to_string(v)); }
  Line& d(const char* k, double v) { return raw(k, num(v)); }
  Line& b(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  Line& raw(const char* k, const std::string& v) {
    s_ += ' ';
    s_ += k;
    s_ += '=';
    s_ += v;
    return *this;
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl) + "...";
}

void text_payload(Line& l, const fb::PayloadUnion& p) {
  using fb::Payload;
  switch (p.type) {
    case Payload::CampaignStarted: {
      const auto& x = *p.AsCampaignStarted();
      l.str("problem", x.problem_name).opt("kernel_type", x.kernel_type).u("seed", x.seed);
      l.opt("mode", x.mode).u("budget", x.budget).opt("device", x.device);
      l.opt_hash("config", x.config_hash).opt_hash("problem_hash", x.problem_hash);
      l.opt("config_path", x.config_path);
      if (!x.overrides.empty()) l.u("overrides", x.overrides.size());
      l.opt_hash("inputs", x.inputs_ref);
      break;
    }
    case Payload::AgentSpawned: {
      const auto& x = *p.AsAgentSpawned();
      l.str("agent", x.agent).u("index", x.index).str("backend", x.backend).str("skill", x.skill);
      break;
    }
    case Payload::CandidateProposed: {
      const auto& x = *p.AsCandidateProposed();
      l.hash("cand", x.candidate_hash).str("agent", x.agent).opt_hash("parent", x.parent);
      l.opt("skill", x.skill).str("move", x.move).u("view_seq", x.view_seq);
      break;
    }
    case Payload::CompileFinished: {
      const auto& x = *p.AsCompileFinished();
      size_t ok = 0, cached = 0;
      double seconds = 0;
      for (const auto& v : x.variants) {
        if (!v) continue;
        ok += v->ok;
        cached += v->cached;
        seconds += v->seconds;
      }
      l.hash("cand", x.candidate_hash).b("ok", x.ok);
      l.raw("variants", std::to_string(ok) + "/" + std::to_string(x.variants.size()));
      l.u("cached", cached).d("seconds", seconds).opt("toolchain", x.toolchain);
      for (const auto& v : x.variants) {
        if (v && !v->ok && !v->error.empty()) {
          l.str("error", first_line(v->error));
          break;
        }
      }
      break;
    }
    case Payload::CandidateEvaluated: {
      const auto& x = *p.AsCandidateEvaluated();
      l.hash("cand", x.candidate_hash).opt("evaluator", x.evaluator).opt("device", x.device);
      l.opt("worker", x.worker).u("workloads", x.workloads.size());
      for (const auto& w : x.workloads) {
        if (!w) continue;
        std::string v = fb::EnumNameWorkloadStatus(w->status);
        if (w->status == fb::WorkloadStatus::OK) v += ":" + num(w->median_ns) + "ns";
        l.str(("w." + w->workload).c_str(), v);
      }
      // Workloads timed while the GPU throttled, with the reasons (base/throttle.h).
      for (const auto& w : x.workloads) {
        if (!w) continue;
        for (const auto& d : w->details) {
          if (!d || d->key != throttle::kDetailKey) continue;
          if (auto reasons = throttle::throttled_reasons(d->value)) {
            l.str(("throttled." + w->workload).c_str(), *reasons);
          }
        }
      }
      if (x.worker_restarts != 0) l.u("restarts", x.worker_restarts);
      break;
    }
    case Payload::Decision: {
      const auto& x = *p.AsDecision();
      l.hash("cand", x.candidate_hash).str("agent", x.agent);
      l.raw("verdict", fb::EnumNameVerdict(x.verdict)).d("score", x.score);
      l.d("incumbent", x.incumbent_score).d("margin", x.margin).d("noise", x.noise);
      if (x.pairs != 0) {
        l.u("pairs", x.pairs).d("paired_ratio", x.paired_ratio).d("paired_bound", x.paired_bound);
      }
      l.opt("slower_workload", x.slower_workload);
      l.u("eval_seq", x.evaluation_seq).opt("reason", x.reason);
      break;
    }
    case Payload::ConclusionRecorded: {
      const auto& x = *p.AsConclusionRecorded();
      l.raw("kind", fb::EnumNameConclusionKind(x.kind)).str("kernel_type", x.kernel_type);
      l.str("move", x.move);
      if (x.kind == fb::ConclusionKind::WIN) l.d("speedup", x.speedup);
      l.opt("why", x.why).opt_hash("cand", x.candidate_hash).opt("agent", x.agent);
      break;
    }
    case Payload::PlateauDetected: {
      const auto& x = *p.AsPlateauDetected();
      l.raw("scope", fb::EnumNamePlateauScope(x.scope)).opt("agent", x.agent);
      l.u("window", x.window).u("candidates", x.candidates);
      break;
    }
    case Payload::StrategyDrafted: {
      const auto& x = *p.AsStrategyDrafted();
      l.str("agent", x.agent).str("from", x.from_skill).str("to", x.to_skill);
      l.opt("reason", x.reason);
      break;
    }
    case Payload::SiblingInspected: {
      const auto& x = *p.AsSiblingInspected();
      l.str("agent", x.agent).str("sibling", x.sibling);
      l.opt_hash("incumbent", x.sibling_incumbent).d("score", x.sibling_score);
      l.b("adopted", x.adopted);
      break;
    }
    case Payload::AgentExchange: {
      const auto& x = *p.AsAgentExchange();
      l.str("agent", x.agent).str("backend", x.backend).opt("model", x.model);
      l.opt_hash("prompt", x.prompt_ref).opt_hash("response", x.response_ref);
      l.u("tokens_in", x.tokens_in).u("tokens_out", x.tokens_out);
      l.d("latency_ms", x.latency_ms).u("attempts", x.attempts).u("view_seq", x.view_seq);
      l.b("ok", x.ok).opt_hash("candidate", x.candidate_hash).opt("error", first_line(x.error));
      break;
    }
    case Payload::CampaignStopped: {
      const auto& x = *p.AsCampaignStopped();
      l.str("reason", x.reason).u("candidates", x.candidates);
      l.opt_hash("best", x.best_hash).d("best_score", x.best_score);
      break;
    }
    case Payload::PeaksMeasured: {
      const auto& x = *p.AsPeaksMeasured();
      l.str("device", x.device).d("bandwidth_bytes_per_s", x.bandwidth_bytes_per_s);
      l.d("flops_per_s", x.flops_per_s).opt("method", x.method);
      break;
    }
    case Payload::PairMeasured: {
      const auto& x = *p.AsPairMeasured();
      l.hash("cand", x.candidate_hash).str("agent", x.agent).hash("incumbent", x.incumbent_hash);
      l.u("pair", x.index).raw("order", x.candidate_first ? "candidate-first" : "incumbent-first");
      for (const auto& w : x.workloads) {
        if (!w || !w->candidate || !w->incumbent) continue;
        const auto side = [](const fb::PairSideT& s) {
          std::string v = fb::EnumNameWorkloadStatus(s.status);
          if (s.status == fb::WorkloadStatus::OK) v += ":" + num(s.median_ns) + "ns";
          return v;
        };
        l.str(("w." + w->workload).c_str(), side(*w->candidate) + "/" + side(*w->incumbent));
      }
      l.u("eval_seq", x.evaluation_seq).opt("worker", x.worker);
      if (x.worker_restarts != 0) l.u("restarts", x.worker_restarts);
      break;
    }
    case Payload::WorkerChanged: {
      const auto& x = *p.AsWorkerChanged();
      l.str("worker", x.worker).str("state", x.state).opt("device", x.device);
      l.opt("reason", first_line(x.reason)).u("live", x.live).opt_hash("requeued", x.requeued);
      break;
    }
    case Payload::NONE:
      break;
  }
}

// JSON numbers cannot be NaN or infinite; nlohmann would write null silently, so say so.
json jnum(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

json jnums(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(jnum(x));
  return a;
}

json jkv(const std::vector<std::unique_ptr<fb::KeyValueT>>& kvs) {
  json a = json::array();
  for (const auto& kv : kvs) {
    if (kv) a.push_back({{"key", kv->key}, {"value", kv->value}});
  }
  return a;
}

json jkernels(const std::vector<std::unique_ptr<fb::KernelResourcesT>>& ks) {
  json a = json::array();
  for (const auto& k : ks) {
    if (!k) continue;
    a.push_back({{"name", k->name},
                 {"registers", k->registers},
                 {"stack_bytes", k->stack_bytes},
                 {"spill_store_bytes", k->spill_store_bytes},
                 {"spill_load_bytes", k->spill_load_bytes},
                 {"shared_static_bytes", k->shared_static_bytes},
                 {"barriers", k->barriers}});
  }
  return a;
}

json json_payload(const fb::PayloadUnion& p) {
  using fb::Payload;
  switch (p.type) {
    case Payload::CampaignStarted: {
      const auto& x = *p.AsCampaignStarted();
      return {{"config_text", x.config_text},
              {"config_hash", x.config_hash},
              {"config_path", x.config_path},
              {"problem_name", x.problem_name},
              {"problem_hash", x.problem_hash},
              {"problem_dir", x.problem_dir},
              {"kernel_type", x.kernel_type},
              {"seed", x.seed},
              {"mode", x.mode},
              {"budget", x.budget},
              {"device", x.device},
              {"software", jkv(x.software)},
              {"overrides", jkv(x.overrides)},
              {"inputs_ref", x.inputs_ref}};
    }
    case Payload::AgentSpawned: {
      const auto& x = *p.AsAgentSpawned();
      return {{"agent", x.agent}, {"index", x.index}, {"backend", x.backend}, {"skill", x.skill}};
    }
    case Payload::CandidateProposed: {
      const auto& x = *p.AsCandidateProposed();
      return {{"candidate_hash", x.candidate_hash},
              {"agent", x.agent},
              {"parent", x.parent},
              {"skill", x.skill},
              {"move", x.move},
              {"view_seq", x.view_seq},
              {"canonical", x.canonical}};
    }
    case Payload::CompileFinished: {
      const auto& x = *p.AsCompileFinished();
      json variants = json::array();
      for (const auto& v : x.variants) {
        if (!v) continue;
        variants.push_back({{"variant", v->variant},
                            {"ok", v->ok},
                            {"cached", v->cached},
                            {"options", v->options},
                            {"object_ref", v->object_ref},
                            {"log_ref", v->log_ref},
                            {"seconds", jnum(v->seconds)},
                            {"error", v->error},
                            {"kernels", jkernels(v->kernels)}});
      }
      return {{"candidate_hash", x.candidate_hash},
              {"ok", x.ok},
              {"variants", variants},
              {"toolchain", x.toolchain}};
    }
    case Payload::CandidateEvaluated: {
      const auto& x = *p.AsCandidateEvaluated();
      json workloads = json::array();
      for (const auto& w : x.workloads) {
        if (!w) continue;
        workloads.push_back({{"workload", w->workload},
                             {"status", fb::EnumNameWorkloadStatus(w->status)},
                             {"error", w->error},
                             {"samples_ns", jnums(w->samples_ns)},
                             {"median_ns", jnum(w->median_ns)},
                             {"p25_ns", jnum(w->p25_ns)},
                             {"p75_ns", jnum(w->p75_ns)},
                             {"min_ns", jnum(w->min_ns)},
                             {"spread", jnum(w->spread)},
                             {"sol_ns", jnum(w->sol_ns)},
                             {"method", w->method},
                             {"max_abs_error", jnum(w->max_abs_error)},
                             {"matched_ratio", jnum(w->matched_ratio)},
                             {"rounds", w->rounds},
                             {"details", jkv(w->details)},
                             {"sol_floor_ns", jnum(w->sol_floor_ns)}});
      }
      return {{"candidate_hash", x.candidate_hash},
              {"workloads", workloads},
              {"device", x.device},
              {"clocks", jkv(x.clocks)},
              {"input_seed", x.input_seed},
              {"worker_restarts", x.worker_restarts},
              {"evaluator", x.evaluator},
              {"wall_seconds", jnum(x.wall_seconds)},
              {"worker", x.worker}};
    }
    case Payload::Decision: {
      const auto& x = *p.AsDecision();
      return {{"candidate_hash", x.candidate_hash},
              {"agent", x.agent},
              {"verdict", fb::EnumNameVerdict(x.verdict)},
              {"score", jnum(x.score)},
              {"incumbent_score", jnum(x.incumbent_score)},
              {"margin", jnum(x.margin)},
              {"noise", jnum(x.noise)},
              {"reason", x.reason},
              {"speedups", jnums(x.speedups)},
              {"sol_scores", jnums(x.sol_scores)},
              {"evaluation_seq", x.evaluation_seq},
              {"incumbent_hash", x.incumbent_hash},
              {"pairs", x.pairs},
              {"paired_ratio", jnum(x.paired_ratio)},
              {"paired_bound", jnum(x.paired_bound)},
              {"paired_confidence", jnum(x.paired_confidence)},
              {"slower_workload", x.slower_workload}};
    }
    case Payload::ConclusionRecorded: {
      const auto& x = *p.AsConclusionRecorded();
      return {{"kind", fb::EnumNameConclusionKind(x.kind)},
              {"kernel_type", x.kernel_type},
              {"move", x.move},
              {"speedup", jnum(x.speedup)},
              {"why", x.why},
              {"candidate_hash", x.candidate_hash},
              {"agent", x.agent}};
    }
    case Payload::PlateauDetected: {
      const auto& x = *p.AsPlateauDetected();
      return {{"agent", x.agent},
              {"scope", fb::EnumNamePlateauScope(x.scope)},
              {"window", x.window},
              {"candidates", x.candidates}};
    }
    case Payload::StrategyDrafted: {
      const auto& x = *p.AsStrategyDrafted();
      return {{"agent", x.agent},
              {"from_skill", x.from_skill},
              {"to_skill", x.to_skill},
              {"reason", x.reason}};
    }
    case Payload::SiblingInspected: {
      const auto& x = *p.AsSiblingInspected();
      return {{"agent", x.agent},
              {"sibling", x.sibling},
              {"sibling_incumbent", x.sibling_incumbent},
              {"sibling_score", jnum(x.sibling_score)},
              {"adopted", x.adopted}};
    }
    case Payload::AgentExchange: {
      const auto& x = *p.AsAgentExchange();
      return {{"agent", x.agent},
              {"backend", x.backend},
              {"prompt_ref", x.prompt_ref},
              {"response_ref", x.response_ref},
              {"model", x.model},
              {"tokens_in", x.tokens_in},
              {"tokens_out", x.tokens_out},
              {"latency_ms", jnum(x.latency_ms)},
              {"ok", x.ok},
              {"error", x.error},
              {"view_seq", x.view_seq},
              {"candidate_hash", x.candidate_hash},
              {"attempts", x.attempts}};
    }
    case Payload::CampaignStopped: {
      const auto& x = *p.AsCampaignStopped();
      return {{"reason", x.reason},
              {"candidates", x.candidates},
              {"best_hash", x.best_hash},
              {"best_score", jnum(x.best_score)}};
    }
    case Payload::PeaksMeasured: {
      const auto& x = *p.AsPeaksMeasured();
      return {{"device", x.device},
              {"bandwidth_bytes_per_s", jnum(x.bandwidth_bytes_per_s)},
              {"flops_per_s", jnum(x.flops_per_s)},
              {"method", x.method},
              {"details", jkv(x.details)}};
    }
    case Payload::PairMeasured: {
      const auto& x = *p.AsPairMeasured();
      json ws = json::array();
      const auto side = [](const fb::PairSideT* s) {
        if (s == nullptr) return json(nullptr);
        return json{{"status", fb::EnumNameWorkloadStatus(s->status)},
                    {"error", s->error},
                    {"samples_ns", jnums(s->samples_ns)},
                    {"median_ns", jnum(s->median_ns)},
                    {"spread", jnum(s->spread)},
                    {"method", s->method}};
      };
      for (const auto& w : x.workloads) {
        if (!w) continue;
        ws.push_back({{"workload", w->workload},
                      {"candidate", side(w->candidate.get())},
                      {"incumbent", side(w->incumbent.get())}});
      }
      return {{"candidate_hash", x.candidate_hash},
              {"agent", x.agent},
              {"incumbent_hash", x.incumbent_hash},
              {"index", x.index},
              {"candidate_first", x.candidate_first},
              {"input_seed", x.input_seed},
              {"evaluation_seq", x.evaluation_seq},
              {"workloads", ws},
              {"clocks", jkv(x.clocks)},
              {"worker_restarts", x.worker_restarts},
              {"worker", x.worker},
              {"device", x.device}};
    }
    case Payload::WorkerChanged: {
      const auto& x = *p.AsWorkerChanged();
      return {{"worker", x.worker}, {"state", x.state}, {"device", x.device},
              {"reason", x.reason}, {"live", x.live},   {"requeued", x.requeued}};
    }
    case Payload::NONE:
      break;
  }
  return json::object();
}

}  // namespace

std::string to_text(const Event& e) {
  Line l("#" + std::to_string(e.seq) + " " + (e.actor.empty() ? "-" : e.actor) + " " +
         payload_name(e.payload.type));
  if (e.payload.value != nullptr) text_payload(l, e.payload);
  return l.take();
}

json to_json(const Event& e) {
  json j = {{"seq", e.seq},
            {"campaign", e.campaign},
            {"actor", e.actor},
            {"wall_time_ns", e.wall_time_ns},
            {"type", payload_name(e.payload.type)}};
  j["payload"] = e.payload.value != nullptr ? json_payload(e.payload) : json::object();
  return j;
}

}  // namespace arc::events

namespace arc::events {

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace arc::events
