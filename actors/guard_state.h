#pragma once
// The guard actor's state (actors/guard_actor.cc), shared by the two files of its shell:
// guard_actor.cc (scheduling, logging and deciding candidates) and guard_workers.cc (its
// workers: slots, joins, losses, refusals, peaks). Internal to them; nothing else includes it.
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/follower.h"
#include "actors/guard_core.h"
#include "actors/messages.h"
#include "actors/shells.h"
#include "actors/worker_slot.h"

namespace arc::actors::guard_detail {

// Between attempts to reach a worker that is lost or not yet listening.
constexpr auto kRetrySeconds = std::chrono::seconds(1);

// A candidate's evaluation on the way: not started, on a worker, or back.
struct WorkState {
  enum class Phase { kIdle, kRunning, kDone };
  Phase at = Phase::kIdle;
  EvalOutcome result;
  size_t slot = 0;  // the worker that measured it
};

struct GuardItem {
  submission sub;
  caf::response_promise promise;       // a single submission's promise
  std::shared_ptr<verdict_list> list;  // set for lockstep rounds
  std::shared_ptr<size_t> remaining;
  size_t index = 0;
  std::shared_ptr<WorkState> work = std::make_shared<WorkState>();
};

struct WorkerSlot {
  std::string name;
  caf::actor actor;
  bool local = true;
  enum class Reach { kReaching, kLive, kLost, kRefused };
  Reach at = Reach::kReaching;
  bool busy = false;
  bool retrying = false;  // a retry is scheduled or under way
  std::string device, model, key;
};

// One pair the front candidate's decision may need.
struct PairWork {
  PairJob job;
  enum class Phase { kIdle, kRunning, kDone };
  Phase at = Phase::kIdle;
  PairOutcome result;
  size_t slot = 0;
};

// The pairs a queued candidate's decision may still need (GuardCore::remaining_pairs), measured
// at once on idle workers and logged in index order as next_pair() asks for them once the
// candidate is at the front. A candidate behind the front gets its batch as soon as it is
// evaluated, when no earlier queued candidate is its agent's (only those could change the
// incumbent it is paired with); at the front the batch is checked against the core and made
// again if the incumbent differs.
struct PairBatch {
  uint64_t id = 0;  // outcomes of a replaced batch are dropped
  std::string candidate_hash, incumbent_hash;
  size_t prefer = 0;  // the worker that evaluated the candidate
  fb::CandidateEvaluatedT evaluation;
  uint64_t eval_seq = 0;               // set at the front
  std::map<uint32_t, PairWork> pairs;  // by index
  std::optional<uint32_t> waiting;     // the index settle() waits for
};

struct GuardState {
  std::unique_ptr<GuardCore> core;
  Follower follower;
  caf::actor journal;
  caf::actor plateau;
  std::deque<GuardItem> queue;
  bool busy = false;           // the front item is being processed
  bool front_waiting = false;  // ... and waits for its evaluation
  uint64_t last_own_seq = 0;
  std::map<std::string, fb::CandidateEvaluatedT> evaluations;
  std::map<std::string, std::shared_ptr<const fb::CompileFinishedT>> precompiled;
  // Every proposed candidate's canonical form (pairs measure incumbents again from it).
  std::map<std::string, std::string> canonicals;
  // The workers. `fallback` holds the one worker of a campaign given a single evaluator.
  std::vector<WorkerSlot> slots;
  std::deque<CampaignWorker> fallback;
  std::map<std::string, PairBatch> batches;  // by candidate hash
  uint64_t batch_ids = 0;
  std::vector<caf::response_promise> peaks_waiting;
  bool peaks_running = false;
  // WorkerChanged events wait for CampaignStarted to be in the log.
  bool started = false;
  std::vector<fb::WorkerChangedT> unlogged_changes;
  static inline const char* name = "arc.guard";
};

using GuardActor = caf::stateful_actor<GuardState>*;

// guard_actor.cc: hands work to idle workers (the front's pairs first, then queued candidates).
void dispatch(GuardActor self, CampaignContext* ctx);
// A journal failure: every waiting requester learns it; nothing more is evaluated.
void fail(GuardActor self, CampaignContext* ctx, caf::error err);

// guard_workers.cc.
uint32_t live_workers(const GuardState& st);
// An idle live worker, `prefer` first; slots.size() when none.
size_t idle_worker(const GuardState& st, size_t prefer);
// Logs the worker changes noted so far, once the campaign has started its log.
void log_changes(GuardActor self, CampaignContext* ctx);
void note_change(GuardActor self, CampaignContext* ctx, size_t i, const std::string& state,
                 const std::string& reason, const std::string& requeued = "");
// The worker went away during a job; `requeued` names the candidate whose work goes elsewhere.
void worker_lost(GuardActor self, CampaignContext* ctx, size_t i, const std::string& why,
                 const std::string& requeued);
// Asks worker `i` to (re)connect and admits it when it answers (retry_atom comes back here).
void reach(GuardActor self, CampaignContext* ctx, size_t i);
// Measures the peaks on the first idle worker for everyone who asked.
void serve_peaks(GuardActor self, CampaignContext* ctx);
// One slot per worker of the campaign (or for its single evaluator), each asked at once which
// device it measures on.
void spawn_slots(GuardActor self, CampaignContext* ctx);

}  // namespace arc::actors::guard_detail
