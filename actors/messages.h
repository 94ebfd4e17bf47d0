#pragma once
// Every message type and atom the actors exchange, in one CAF type-ID block. Events travel
// between actors either as verified frames (FlatBuffers bytes with their CRC, published by the
// journal) or, on their way to the journal, as object-API events. None leaves the process.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/agent_core.h"
#include "actors/memory_core.h"
#include "caf/all.hpp"
#include "eval/evaluator.h"
#include "events/codec.h"

namespace arc::actors {

// Events the journal made durable, published to subscribers in seq order: the frames as
// stored and, decoded (verified and unpacked) once by the journal for every subscriber, the
// events they hold.
struct published_events {
  std::shared_ptr<const std::vector<std::string>> frames;
  uint64_t first_seq = 0;
  std::shared_ptr<const std::vector<events::Event>> events;  // decode_frame of each frame
};

// Events to append, in order.
struct event_list {
  std::vector<events::Event> events;
};

struct seq_list {
  std::vector<uint64_t> seqs;
};

struct proposal_msg {
  Proposal proposal;
  uint32_t agent_index = 0;
};

struct recall_msg {
  Recall recall;
};

// A logged proposal handed to the guard.
struct submission {
  fb::CandidateProposedT proposal;
  uint64_t seq = 0;
};

struct submission_list {
  std::vector<submission> items;
};

// The guard's answer to one submission.
struct verdict_msg {
  std::string candidate_hash;
  fb::Verdict verdict = fb::Verdict::REJECT;
  std::string reason;
  uint64_t last_seq = 0;  // the last seq the guard (and plateau) appended for it
};

struct verdict_list {
  std::vector<verdict_msg> items;
};

struct peaks_msg {
  fb::PeaksMeasuredT peaks;
};

// Guard <-> worker slot (actors/worker_slot.h). `lost` non-empty: the worker was lost on the
// way (disconnected, crashed, stopped answering); the rest of the answer is not the candidate's
// and the guard sends the work elsewhere.
struct EvalJob {
  std::string hash;
  std::string canonical;
  uint64_t input_seed = 0;
  eval::EvalSettings settings;
  // Compiled by the guard's pool (lockstep rounds), for a worker of this process only.
  std::shared_ptr<const fb::CompileFinishedT> precompiled;
};

struct EvalOutcome {
  fb::CompileFinishedT compiled;
  fb::CandidateEvaluatedT evaluation;
  std::string lost;
};

struct PairJob {
  std::string candidate_hash, candidate_canonical;
  std::string incumbent_hash, incumbent_canonical;
  bool candidate_first = false;
  uint64_t input_seed = 0;
  eval::EvalSettings settings;
};

struct PairOutcome {
  fb::PairMeasuredT pair;
  std::string lost;
};

struct PeaksOutcome {
  fb::PeaksMeasuredT peaks;
  std::string error;  // the peaks could not be measured (not a lost worker)
  std::string lost;
};

// A worker slot's (re)connection: error empty when it is connected, with its device.
struct ConnectOutcome {
  std::string error;
  bool refused = false;  // the worker refused us (credentials): trying again will not help
  std::string device, device_model, device_key;
};

}  // namespace arc::actors

CAF_BEGIN_TYPE_ID_BLOCK(arc, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(arc, (arc::actors::published_events))
  CAF_ADD_TYPE_ID(arc, (arc::actors::event_list))
  CAF_ADD_TYPE_ID(arc, (arc::actors::seq_list))
  CAF_ADD_TYPE_ID(arc, (arc::actors::proposal_msg))
  CAF_ADD_TYPE_ID(arc, (arc::actors::recall_msg))
  CAF_ADD_TYPE_ID(arc, (arc::actors::submission))
  CAF_ADD_TYPE_ID(arc, (arc::actors::submission_list))
  CAF_ADD_TYPE_ID(arc, (arc::actors::verdict_msg))
  CAF_ADD_TYPE_ID(arc, (arc::actors::verdict_list))
  CAF_ADD_TYPE_ID(arc, (arc::actors::peaks_msg))
  CAF_ADD_TYPE_ID(arc, (arc::actors::EvalJob))
  CAF_ADD_TYPE_ID(arc, (arc::actors::EvalOutcome))
  CAF_ADD_TYPE_ID(arc, (arc::actors::PairJob))
  CAF_ADD_TYPE_ID(arc, (arc::actors::PairOutcome))
  CAF_ADD_TYPE_ID(arc, (arc::actors::PeaksOutcome))
  CAF_ADD_TYPE_ID(arc, (arc::actors::ConnectOutcome))
  CAF_ADD_ATOM(arc, arc::actors, append_atom, "append")
  CAF_ADD_ATOM(arc, arc::actors, subscribe_atom, "subscribe")
  CAF_ADD_ATOM(arc, arc::actors, propose_atom, "propose")
  CAF_ADD_ATOM(arc, arc::actors, submit_atom, "submit")
  CAF_ADD_ATOM(arc, arc::actors, recall_atom, "recall")
  CAF_ADD_ATOM(arc, arc::actors, check_atom, "check")
  CAF_ADD_ATOM(arc, arc::actors, start_atom, "start")
  CAF_ADD_ATOM(arc, arc::actors, run_atom, "run")
  CAF_ADD_ATOM(arc, arc::actors, stop_atom, "stop")
  CAF_ADD_ATOM(arc, arc::actors, peaks_atom, "peaks")
  CAF_ADD_ATOM(arc, arc::actors, sync_atom, "sync")
  CAF_ADD_ATOM(arc, arc::actors, done_atom, "done")
  CAF_ADD_ATOM(arc, arc::actors, evaluate_atom, "evaluate")
  CAF_ADD_ATOM(arc, arc::actors, pair_atom, "pair")
  CAF_ADD_ATOM(arc, arc::actors, reach_atom, "reach")
  CAF_ADD_ATOM(arc, arc::actors, retry_atom, "retry")
CAF_END_TYPE_ID_BLOCK(arc)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::published_events)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::event_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::seq_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::proposal_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::recall_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::submission)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::submission_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::verdict_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::verdict_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::peaks_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::EvalJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::EvalOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::PairJob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::PairOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::PeaksOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(arc::actors::ConnectOutcome)
