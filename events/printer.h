#pragma once
// Human and JSON renderings of events, for `arc-replay show` and exports.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "events/codec.h"

namespace arc::events {

// One line per event: "#42 agent-1 CandidateProposed cand=3fa2c1e9b0d4 move=knob:TILE=64 ...".
std::string to_text(const Event& e);
// Every field of the envelope and payload; enums as names, hashes as full hex.
nlohmann::json to_json(const Event& e);

// JSON text of any value built from log contents. Strings that came from compilers or
// candidates may hold bytes that are not UTF-8: they are written as U+FFFD, never thrown.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace arc::events
