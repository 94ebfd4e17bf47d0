#pragma once
// A candidate: a complete implementation of a problem. Per workload it names a variant (a family
// plus knob values, or free source); the base variant serves every workload without a gate.
// A candidate is identified by the SHA-256 of its canonical JSON form.
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace arc::problem {

// A variant is a family with knob values, or free source (llm/exec agents). Free source may
// also name a family: the source then replaces the family's source file, and the family still
// supplies what the source does not say (a CUDA family's launches, workspace and knob names).
struct Variant {
  std::string family;                        // family name; may be empty when `source` is set
  std::map<std::string, std::string> knobs;  // compile-time defines, NAME -> VALUE
  std::string source;                        // free source; empty for a family variant

  // Stable text naming this variant, e.g. "blocked{TILE=64,UNROLL=4}",
  // "source:<sha256/12>{UNROLL=4}" or, with a family, "source:<sha256/12>@warprow{}".
  std::string key() const;
  bool operator==(const Variant&) const = default;
};

struct Candidate {
  Variant base;
  std::map<std::string, Variant> gates;  // workload name -> variant used for that workload

  const Variant& variant_for(const std::string& workload) const;
  // Canonical JSON: sorted keys, no whitespace; the identity of the candidate.
  std::string canonical() const;
  // Full lowercase hex SHA-256 of canonical().
  std::string hash() const;
  static Result<Candidate> from_canonical(std::string_view text);
  bool operator==(const Candidate&) const = default;
};

// The first 12 hex digits of a hash, for people.
std::string short_hash(std::string_view hash);

}  // namespace arc::problem
