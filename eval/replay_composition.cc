#include "eval/replay_composition.h"

#include <memory>

#include "eval/worker_client.h"

namespace arc::eval {
namespace {

using problem::Candidate;
using problem::Variant;
using problem::Workload;

constexpr const char* kNoCompile = "replay: no recorded compile of this variant";

std::unique_ptr<fb::KeyValueT> key_value(std::string key, std::string value) {
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = std::move(key);
  kv->value = std::move(value);
  return kv;
}

std::unique_ptr<fb::WorkloadEvaluationT> entry(const std::string& workload,
                                               fb::WorkloadStatus status, std::string error) {
  auto w = std::make_unique<fb::WorkloadEvaluationT>();
  w->workload = workload;
  w->status = status;
  w->error = std::move(error);
  return w;
}

// The recorded compile of one variant, or null.
const fb::CompiledVariantT* recorded_compile(const ReplayRecords& records, const Variant& v,
                                             const VariantSource** source) {
  const VariantSource* s = records.variants.compile(v.key());
  *source = s;
  if (s == nullptr) return nullptr;
  return records.compiles.at(s->candidate_hash).variants[s->entry].get();
}

}  // namespace

fb::CompileFinishedT compose_compile(const ReplayRecords& records, const Candidate& c,
                                     const std::string& hash,
                                     const std::vector<Workload>& workloads) {
  fb::CompileFinishedT out;
  out.candidate_hash = hash;
  out.ok = true;
  for (const Variant& v : distinct_variants(c, workloads)) {
    const VariantSource* source = nullptr;
    const fb::CompiledVariantT* recorded = recorded_compile(records, v, &source);
    if (recorded == nullptr) {
      auto cv = std::make_unique<fb::CompiledVariantT>();
      cv->variant = v.key();
      cv->ok = true;
      cv->error = kNoCompile;
      out.variants.push_back(std::move(cv));
      continue;
    }
    if (out.toolchain.empty())
      out.toolchain = records.compiles.at(source->candidate_hash).toolchain;
    out.ok &= recorded->ok;
    out.variants.push_back(std::make_unique<fb::CompiledVariantT>(*recorded));
  }
  if (out.toolchain.empty()) out.toolchain = "replay";
  return out;
}

fb::CandidateEvaluatedT compose_evaluation(const ReplayRecords& records, const Candidate& c,
                                           const std::string& hash,
                                           const std::vector<Workload>& workloads) {
  fb::CandidateEvaluatedT out;
  out.candidate_hash = hash;
  out.device = records.device;
  out.evaluator = "replay";

  // The build: a recorded failure fails every workload; a missing record leaves the variant's
  // workloads (or, serving none, the candidate) unanswered.
  std::vector<std::string> uncompiled;
  for (const Variant& v : distinct_variants(c, workloads)) {
    const VariantSource* source = nullptr;
    const fb::CompiledVariantT* recorded = recorded_compile(records, v, &source);
    if (recorded == nullptr) {
      uncompiled.push_back(v.key());
    } else if (!recorded->ok) {
      for (const Workload& w : workloads) {
        auto e = entry(w.name, fb::WorkloadStatus::COMPILE_ERROR,
                       "variant " + recorded->variant + ": " + recorded->error);
        e->details.push_back(key_value(kComposedFromKey, source->candidate_hash));
        out.workloads.push_back(std::move(e));
      }
      return out;
    }
  }
  auto is_uncompiled = [&uncompiled](const std::string& key) {
    for (const auto& u : uncompiled) {
      if (u == key) return true;
    }
    return false;
  };
  std::string serving_none;
  for (const auto& key : uncompiled) {
    bool serves = false;
    for (const Workload& w : workloads) serves |= c.variant_for(w.name).key() == key;
    if (!serves) serving_none += (serving_none.empty() ? "" : ", ") + key;
  }
  if (!serving_none.empty()) {
    out.workloads.push_back(entry("*", fb::WorkloadStatus::UNANSWERED,
                                  "replay: no recorded compile of variant " + serving_none +
                                      ", which serves no workload but a live evaluation builds"));
  }

  // The workloads, in problem order.
  std::string failed;
  for (const Workload& w : workloads) {
    const std::string key = c.variant_for(w.name).key();
    if (!failed.empty()) {
      out.workloads.push_back(
          entry(w.name, fb::WorkloadStatus::NOT_RUN, "not run: workload " + failed + " failed"));
      continue;
    }
    const VariantSource* source = records.variants.measurement(key, w.name);
    if (source == nullptr || is_uncompiled(key)) {
      out.workloads.push_back(
          entry(w.name, fb::WorkloadStatus::UNANSWERED,
                source == nullptr
                    ? "replay: no recorded measurement of variant " + key + " on workload " + w.name
                    : "replay: no recorded compile of variant " + key + ", which serves workload " +
                          w.name));
      continue;
    }
    const auto& recorded = records.evaluations.at(source->candidate_hash).workloads[source->entry];
    auto e = std::make_unique<fb::WorkloadEvaluationT>(*recorded);
    e->details.push_back(key_value(kComposedFromKey, source->candidate_hash));
    if (e->status != fb::WorkloadStatus::OK) failed = w.name;
    out.workloads.push_back(std::move(e));
  }
  if (out.workloads.empty()) {
    out.workloads.push_back(entry("*", fb::WorkloadStatus::UNANSWERED,
                                  "replay: no workloads given to compose an answer over"));
  }
  return out;
}

}  // namespace arc::eval
