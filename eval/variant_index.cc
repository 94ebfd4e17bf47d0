#include "eval/variant_index.h"

#include <string_view>

namespace arc::eval {
namespace {

// How the host and CUDA devices begin the error of a workload whose reference failed (a fault
// of the harness, e.g. a reference launch refused by the driver), whatever the status.
constexpr std::string_view kReferenceFault = "the reference (not the candidate)";

bool measures(const fb::WorkloadEvaluationT& w) {
  const fb::WorkloadStatus s = w.status;
  if (s == fb::WorkloadStatus::COMPILE_ERROR || s == fb::WorkloadStatus::NOT_RUN ||
      s == fb::WorkloadStatus::UNANSWERED) {
    return false;
  }
  return w.error.compare(0, kReferenceFault.size(), kReferenceFault) != 0;
}

// Keeps the preferred of two sources: ungated first, then the smaller hash.
void offer(std::map<std::string, VariantSource>& slots, std::string key, VariantSource s) {
  auto [it, inserted] = slots.emplace(std::move(key), s);
  if (inserted) return;
  const VariantSource& kept = it->second;
  if (s.gated != kept.gated ? !s.gated : s.candidate_hash < kept.candidate_hash) it->second = s;
}

std::string slot(const std::string& variant_key, const std::string& workload) {
  return variant_key + '\n' + workload;
}

}  // namespace

VariantIndex VariantIndex::build(
    const std::map<std::string, problem::Candidate>& candidates,
    const std::map<std::string, fb::CompileFinishedT>& compiles,
    const std::map<std::string, fb::CandidateEvaluatedT>& evaluations) {
  VariantIndex index;
  for (const auto& [hash, compile] : compiles) {
    auto c = candidates.find(hash);
    if (c == candidates.end()) continue;
    const bool gated = !c->second.gates.empty();
    for (size_t i = 0; i < compile.variants.size(); ++i) {
      const auto& v = compile.variants[i];
      if (v != nullptr) offer(index.compiled_, v->variant, {hash, i, gated});
    }
  }
  for (const auto& [hash, evaluation] : evaluations) {
    auto c = candidates.find(hash);
    if (c == candidates.end()) continue;
    const bool gated = !c->second.gates.empty();
    for (size_t i = 0; i < evaluation.workloads.size(); ++i) {
      const auto& w = evaluation.workloads[i];
      if (w == nullptr || !measures(*w)) continue;
      const problem::Variant& v = c->second.variant_for(w->workload);
      offer(index.measured_, slot(v.key(), w->workload), {hash, i, gated});
      index.measured_variants_.emplace(v.key(), v);
    }
  }
  return index;
}

const VariantSource* VariantIndex::measurement(const std::string& variant_key,
                                               const std::string& workload) const {
  auto it = measured_.find(slot(variant_key, workload));
  return it == measured_.end() ? nullptr : &it->second;
}

const VariantSource* VariantIndex::compile(const std::string& variant_key) const {
  auto it = compiled_.find(variant_key);
  return it == compiled_.end() ? nullptr : &it->second;
}

}  // namespace arc::eval
