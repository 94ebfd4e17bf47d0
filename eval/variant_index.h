#pragma once
// Where each variant (family + knobs, or free source: problem::Variant::key()) was measured and
// compiled in a set of recorded candidates, so that the replay evaluator can answer a candidate
// it holds no record of from the records of the variants serving its workloads
// (eval/replay_composition.h). Pure: built from records already read.
//
// A recorded workload entry measures the variant that served that workload in its candidate
// when its status says something about that variant there: OK, WRONG_RESULT, CRASH, TIMEOUT,
// OUT_OF_MEMORY, IMPOSSIBLE, STALE_OUTPUT or LOAD_ERROR. COMPILE_ERROR (the candidate's build
// failed, maybe in another variant), NOT_RUN (an earlier workload failed) and UNANSWERED (a
// replay had no record) measure nothing; nor does a failure of the reference rather than the
// candidate (its error begins "the reference (not the candidate)": a fault of the harness, say
// a reference launch the driver refused, that says nothing about the variant).
//
// Of several recorded candidates that measured (or compiled) one variant, the index keeps one:
// a candidate without gates (a sweep's point) before a gated one, then the smallest hash. The
// choice depends on what was recorded, never on the order in which the logs were read.
#include <cstddef>
#include <map>
#include <string>

#include "events/events_generated.h"
#include "problem/candidate.h"

namespace arc::eval {

// A recorded entry: the candidate holding it and its position in that candidate's
// CandidateEvaluated::workloads (a measurement) or CompileFinished::variants (a compile).
struct VariantSource {
  std::string candidate_hash;
  size_t entry = 0;
  bool gated = false;  // the recorded candidate has gates
};

class VariantIndex {
 public:
  // `candidates`: the recorded candidates by hash (from their CandidateProposed); compiles and
  // evaluations of hashes without a candidate are skipped (nothing says which variant they ran).
  static VariantIndex build(const std::map<std::string, problem::Candidate>& candidates,
                            const std::map<std::string, fb::CompileFinishedT>& compiles,
                            const std::map<std::string, fb::CandidateEvaluatedT>& evaluations);

  // The recorded measurement of variant `variant_key` on workload `workload`, or null.
  const VariantSource* measurement(const std::string& variant_key,
                                   const std::string& workload) const;
  // The recorded compile of variant `variant_key`, or null.
  const VariantSource* compile(const std::string& variant_key) const;

  // Every variant measured on at least one workload, by key (for a sweep: its points' variants
  // that did not fail to compile).
  const std::map<std::string, problem::Variant>& measured_variants() const {
    return measured_variants_;
  }

  size_t measurements() const { return measured_.size(); }
  size_t compiles() const { return compiled_.size(); }

 private:
  std::map<std::string, VariantSource> measured_;  // variant key + '\n' + workload
  std::map<std::string, VariantSource> compiled_;  // variant key
  std::map<std::string, problem::Variant> measured_variants_;
};

}  // namespace arc::eval
