#pragma once
// The workers a campaign measures on (DESIGN.md §9; docs/distributed.md), as `arcd run
// --workers` and campaign.toml's [[workers]] name them:
//   auto          one local worker per visible device (the default): every GPU the CUDA backend
//                 sees, one worker for the host and replay backends
//   local         the local worker of device 0; local:N that of device N
//   HOST:PORT     a remote worker, `arc-eval --serve HOST:PORT` on that host
// A list is comma-separated ("local:0,10.0.0.2:7100"); "auto" stands alone. Pure: parsing and
// naming only; connecting is the caller's.
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace arc::actors {

struct WorkerSpec {
  std::string name;  // "local", "local:N" or "host:port": CandidateEvaluated.worker
  bool local = true;
  int device = 0;    // local: the device ordinal
  std::string host;  // remote
  uint16_t port = 0;
};

// The workers `text` names, or an error naming `what` (the flag or field), the item and what
// was expected. "auto" gives an empty list (auto_workers() expands it once the backend is
// known). An item named twice is refused.
Result<std::vector<WorkerSpec>> parse_worker_list(const std::string& text, const std::string& what);
// One worker spec, as an item of the list above ("auto" is not one).
Result<WorkerSpec> parse_worker(const std::string& item, const std::string& what);
// "auto": local:0 .. local:devices-1 (one "local" worker when devices <= 1).
std::vector<WorkerSpec> auto_workers(int devices);

}  // namespace arc::actors
