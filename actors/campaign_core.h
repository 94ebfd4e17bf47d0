#pragma once
// CampaignCore: the campaign's budget, stop conditions and roster, as a fold of the log.
//   - stop: `budget` candidates decided, or a campaign-scope PlateauDetected;
//   - lockstep rounds: which agents' proposals are logged (agent order, no duplicate within a
//     round, no more than the budget has left);
//   - async: every agent idle (nothing new to propose) since the last decision also stops it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/agent_core.h"
#include "actors/view.h"
#include "events/codec.h"

namespace arc::actors {

class CampaignCore {
 public:
  CampaignCore(uint32_t budget, uint32_t global_plateau, std::vector<std::string> agents,
               std::vector<std::string> workloads);

  void apply(const events::Event& e);

  std::optional<std::string> stop_reason() const;
  uint32_t remaining() const;
  const CampaignView& view() const { return view_; }

  // Indexes of the replies (one per agent, in agent order) whose proposals a round logs.
  std::vector<size_t> select_round(const std::vector<std::optional<Proposal>>& replies) const;

  // Async: `agent` found nothing new to propose from the view at `seq`.
  void mark_idle(const std::string& agent, uint64_t seq);
  bool all_idle() const;

  // The campaign's last event.
  fb::CampaignStoppedT stopped(const std::string& reason) const;

  // Where a log stands, for resuming it.
  bool started() const { return started_; }
  bool peaks_measured() const { return peaks_; }
  bool has_stopped() const { return stopped_; }
  // The baseline's proposal, once logged.
  const fb::CandidateProposedT* baseline_proposal() const;
  bool baseline_decided() const { return view_.baseline() != nullptr || baseline_rejected_; }
  // Proposals logged without a Decision yet (agent, candidate), in log order, with their seqs.
  std::vector<std::pair<uint64_t, fb::CandidateProposedT>> undecided() const;

 private:
  uint32_t budget_;
  uint32_t global_plateau_;
  std::vector<std::string> agents_;
  CampaignView view_;
  bool campaign_plateau_ = false;
  uint64_t last_decision_seq_ = 0;
  std::map<std::string, uint64_t> idle_;  // agent -> seq of the view it was idle at
  bool started_ = false, peaks_ = false, stopped_ = false, baseline_rejected_ = false;
  std::optional<fb::CandidateProposedT> baseline_;
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, fb::CandidateProposedT>>
      undecided_;
};

// JournalCore: the log's sequence and idempotency. Seqs must arrive dense; a proposal an agent
// already made (same agent, same candidate hash) is a retried message and is refused, so
// nothing is logged or evaluated twice.
class JournalCore {
 public:
  void apply(const events::Event& e);
  // Empty when the batch may be appended; otherwise why not.
  std::string refuse(const std::vector<events::Event>& batch) const;
  uint64_t last_seq() const { return last_seq_; }

 private:
  uint64_t last_seq_ = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> proposals_;
};

}  // namespace arc::actors
