#pragma once
// CampaignView: what every proposer may know, as a pure fold over the log. Agents propose from
// a view; verification rebuilds the same view from the same prefix of the log.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "events/codec.h"
#include "problem/candidate.h"

namespace arc::actors {

// Per-workload outcome of a candidate, as far as a proposer needs it.
struct WorkloadOutcome {
  bool ok = false;
  double median_ns = 0;
  bool unanswered = false;  // the replay evaluator had no record: nothing is known
};

struct CandidateRecord {
  std::string hash;
  problem::Candidate candidate;
  std::string agent;
  std::string parent;
  std::string skill;
  std::string move;
  uint64_t proposed_seq = 0;
  uint64_t evaluated_seq = 0;              // 0 until evaluated
  std::vector<WorkloadOutcome> workloads;  // problem order, filled when evaluated
  std::optional<fb::Verdict> verdict;
  double score = 0;
};

// An agent's incumbent: the candidate it builds on.
struct Incumbent {
  std::string hash;
  problem::Candidate candidate;
  double score = 0;
};

class CampaignView {
 public:
  explicit CampaignView(std::vector<std::string> workload_names = {});

  // Applies one event; events must come in seq order.
  void apply(const events::Event& e);

  uint64_t last_seq() const { return last_seq_; }
  const std::vector<std::string>& workload_names() const { return workloads_; }
  bool known(const std::string& hash) const { return by_hash_.count(hash) != 0; }
  // As known(), by canonical form (cheaper for proposers: no hashing).
  bool known_canonical(const std::string& canonical) const {
    return canonicals_.count(canonical) != 0;
  }
  const CandidateRecord* find(const std::string& hash) const;
  // Candidates in proposal order.
  const std::vector<CandidateRecord>& candidates() const { return records_; }

  // The baseline (seed) record, once decided.
  const CandidateRecord* baseline() const;
  // Agent name -> its incumbent (after KEEPs and adoptions); agents start at the baseline.
  const std::map<std::string, Incumbent>& incumbents() const { return incumbents_; }
  const Incumbent* incumbent(const std::string& agent) const;
  // The campaign's best KEEP so far (the baseline if nothing beat it).
  const CandidateRecord* best() const;
  // Number of decided candidates excluding the baseline and STOP verdicts.
  uint32_t decided() const { return decided_; }
  // Whether a REVERT showed `variant` slower on `workload` than its incumbent's there, in pairs
  // (Decision.slower_workload): a gate that is not to be composed again.
  bool slower_on(const std::string& workload, const problem::Variant& variant) const;

 private:
  CandidateRecord* mutable_find(const std::string& hash);

  std::vector<std::string> workloads_;
  std::vector<CandidateRecord> records_;
  std::unordered_map<std::string, size_t> by_hash_;
  std::unordered_set<std::string> canonicals_;
  std::map<std::string, Incumbent> incumbents_;
  std::vector<std::string> agents_;
  std::string baseline_hash_;
  // workload -> the keys of the variants shown slower there (slower_on()).
  std::map<std::string, std::unordered_set<std::string>> slower_;
  std::string best_hash_;
  uint64_t last_seq_ = 0;
  uint32_t decided_ = 0;
};

// The actor name used for the campaign's own proposals (the baseline) and the move text.
inline constexpr const char* kCampaignActor = "campaign";
inline constexpr const char* kGuardActor = "guard";
inline constexpr const char* kBaselineMove = "baseline";

}  // namespace arc::actors
