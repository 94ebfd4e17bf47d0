#pragma once
// Events with every field set to a non-default value, one per payload type, for round-trip,
// printer and storage tests. Header-only so tests of several modules can share it.
#include <memory>
#include <string>
#include <vector>

#include "events/codec.h"

namespace arc::events::testing {

inline std::string hex_hash(char c) { return std::string(64, c); }

inline std::unique_ptr<fb::KeyValueT> kv(std::string k, std::string v) {
  auto p = std::make_unique<fb::KeyValueT>();
  p->key = std::move(k);
  p->value = std::move(v);
  return p;
}

// All payload types this build knows, in union order.
inline std::vector<fb::Payload> all_payload_types() {
  std::vector<fb::Payload> out;
  for (auto t : fb::EnumValuesPayload()) {
    if (t != fb::Payload::NONE) out.push_back(t);
  }
  return out;
}

// An event of the given type with every field set (n varies the values).
inline Event sample_event(fb::Payload type, int n = 1) {
  const std::string agent = "agent-" + std::to_string(n % 4);
  switch (type) {
    case fb::Payload::CampaignStarted: {
      fb::CampaignStartedT p;
      p.config_text = "[campaign]\nbudget = 64\n";
      p.config_hash = hex_hash('a');
      p.config_path = "campaigns/gemm.toml";
      p.problem_name = "gemm_bf16";
      p.problem_hash = hex_hash('b');
      p.problem_dir = "problems/gpu/gemm_bf16";
      p.kernel_type = "gemm";
      p.seed = 42u + n;
      p.mode = "lockstep";
      p.budget = 64;
      p.device = "NVIDIA H200";
      p.software.push_back(kv("nvrtc", "13.0"));
      p.software.push_back(kv("kernelarc", "0.1.0"));
      p.overrides.push_back(kv("budget", "64"));
      return make_event("campaign", std::move(p));
    }
    case fb::Payload::AgentSpawned: {
      fb::AgentSpawnedT p;
      p.agent = agent;
      p.index = 3;
      p.backend = "builtin";
      p.skill = "tiling";
      return make_event("campaign", std::move(p));
    }
    case fb::Payload::CandidateProposed: {
      fb::CandidateProposedT p;
      p.candidate_hash = "3fa2c1e9b0d4" + std::string(52, '7');
      p.agent = agent;
      p.parent = hex_hash('c');
      p.skill = "tiling";
      p.move = "knob:TILE=64";
      p.view_seq = 40u + n;
      p.canonical = R"({"family":"tiled","knobs":{"TILE":64}})";
      return make_event(agent, std::move(p));
    }
    case fb::Payload::CompileFinished: {
      fb::CompileFinishedT p;
      p.candidate_hash = hex_hash('d');
      p.ok = true;
      auto v = std::make_unique<fb::CompiledVariantT>();
      v->variant = "tiled/TILE=64";
      v->ok = true;
      v->cached = true;
      v->options = "-arch=sm_90 -O3";
      v->object_ref = hex_hash('e');
      v->log_ref = hex_hash('f');
      v->seconds = 0.25;
      v->error = "warning: unused";
      p.variants.push_back(std::move(v));
      p.toolchain = "nvrtc 13.0";
      return make_event("guard", std::move(p));
    }
    case fb::Payload::CandidateEvaluated: {
      fb::CandidateEvaluatedT p;
      p.candidate_hash = hex_hash('1');
      auto w = std::make_unique<fb::WorkloadEvaluationT>();
      w->workload = "m4096";
      w->status = fb::WorkloadStatus::WRONG_RESULT;
      w->error = "max abs error 0.5 > 0.01";
      w->samples_ns = {1000.0, 1010.0, 990.5};
      w->median_ns = 1000.0;
      w->p25_ns = 995.0;
      w->p75_ns = 1005.0;
      w->min_ns = 990.5;
      w->spread = 0.01;
      w->sol_ns = 800.0;
      w->method = "cuda_event";
      w->max_abs_error = 0.5;
      w->matched_ratio = 0.75;
      w->rounds = 5;
      p.workloads.push_back(std::move(w));
      p.device = "NVIDIA H200";
      p.worker = "local:0";
      p.clocks.push_back(kv("sm_mhz", "1980"));
      p.input_seed = 7;
      p.worker_restarts = 1;
      p.evaluator = "cuda";
      p.wall_seconds = 1.5;
      return make_event("guard", std::move(p));
    }
    case fb::Payload::Decision: {
      fb::DecisionT p;
      p.candidate_hash = hex_hash('2');
      p.agent = agent;
      p.verdict = fb::Verdict::REVERT;
      p.score = 1.25;
      p.incumbent_score = 1.5;
      p.margin = 0.02;
      p.noise = 0.01;
      p.reason = "slower than incumbent";
      p.speedups = {1.2, 1.3};
      p.sol_scores = {0.6, 0.7};
      p.evaluation_seq = 17;
      p.incumbent_hash = hex_hash('8');
      p.pairs = 10;
      p.paired_ratio = 1.04;
      p.paired_bound = 1.01;
      p.paired_confidence = 0.989;
      p.slower_workload = "large";
      return make_event("guard", std::move(p));
    }
    case fb::Payload::ConclusionRecorded: {
      fb::ConclusionRecordedT p;
      p.kind = fb::ConclusionKind::TRAP;
      p.kernel_type = "gemm";
      p.move = "knob:STAGES=5";
      p.speedup = 0.9;
      p.why = "out of shared memory";
      p.candidate_hash = hex_hash('3');
      p.agent = agent;
      return make_event("memory", std::move(p));
    }
    case fb::Payload::PlateauDetected: {
      fb::PlateauDetectedT p;
      p.agent = agent;
      p.scope = fb::PlateauScope::CAMPAIGN;
      p.window = 8;
      p.candidates = 24;
      return make_event("plateau", std::move(p));
    }
    case fb::Payload::StrategyDrafted: {
      fb::StrategyDraftedT p;
      p.agent = agent;
      p.from_skill = "tiling";
      p.to_skill = "pipeline";
      p.reason = "plateau after 8";
      return make_event(agent, std::move(p));
    }
    case fb::Payload::SiblingInspected: {
      fb::SiblingInspectedT p;
      p.agent = agent;
      p.sibling = "agent-9";
      p.sibling_incumbent = hex_hash('4');
      p.sibling_score = 2.5;
      p.adopted = true;
      return make_event(agent, std::move(p));
    }
    case fb::Payload::AgentExchange: {
      fb::AgentExchangeT p;
      p.agent = agent;
      p.backend = "llm";
      p.prompt_ref = hex_hash('5');
      p.response_ref = hex_hash('6');
      p.model = "some-model";
      p.tokens_in = 1200;
      p.tokens_out = 300;
      p.latency_ms = 850.5;
      p.ok = true;
      p.error = "none";
      return make_event(agent, std::move(p));
    }
    case fb::Payload::CampaignStopped: {
      fb::CampaignStoppedT p;
      p.reason = "budget";
      p.candidates = 64;
      p.best_hash = hex_hash('7');
      p.best_score = 3.25;
      return make_event("campaign", std::move(p));
    }
    case fb::Payload::PeaksMeasured: {
      fb::PeaksMeasuredT p;
      p.device = "NVIDIA H200";
      p.bandwidth_bytes_per_s = 4.27e12;
      p.flops_per_s = 7.0e14;
      p.method = "copy+gemm";
      return make_event("guard", std::move(p));
    }
    case fb::Payload::PairMeasured: {
      fb::PairMeasuredT p;
      p.candidate_hash = hex_hash('2');
      p.agent = agent;
      p.incumbent_hash = hex_hash('8');
      p.index = 3;
      p.candidate_first = true;
      p.input_seed = 424242;
      p.evaluation_seq = 17;
      auto w = std::make_unique<fb::PairWorkloadT>();
      w->workload = "m4096";
      for (auto* side : {&w->candidate, &w->incumbent}) {
        *side = std::make_unique<fb::PairSideT>();
        (*side)->status = fb::WorkloadStatus::OK;
        (*side)->error = "none";
        (*side)->samples_ns = {1000, 1010, 990};
        (*side)->median_ns = side == &w->candidate ? 1000 : 1040;
        (*side)->spread = 0.02;
        (*side)->method = "cuda_events";
        (*side)->details.push_back(kv("throttled", "no"));
      }
      p.workloads.push_back(std::move(w));
      p.clocks.push_back(kv("sm_mhz", "1980"));
      p.worker_restarts = 1;
      p.worker = "127.0.0.1:7101";
      p.device = "NVIDIA H200";
      return make_event("guard", std::move(p));
    }
    case fb::Payload::WorkerChanged: {
      fb::WorkerChangedT p;
      p.worker = "10.0.0.7:7100";
      p.state = "lost";
      p.device = "NVIDIA H200";
      p.reason = "disconnected";
      p.live = 2;
      p.requeued = hex_hash('3');
      return make_event("guard", std::move(p));
    }
    case fb::Payload::NONE:
      break;
  }
  return Event{};
}

}  // namespace arc::events::testing
