#include "actors/campaign_worker.h"

namespace arc::actors {

std::string lost_reason(const CampaignWorker& w) {
  if (w.evaluator == nullptr) return w.unreachable.empty() ? "not connected" : w.unreachable;
  Status s = w.evaluator->availability();
  return s ? "" : s.message();
}

Status reach_worker(CampaignWorker& w, bool* renewed) {
  *renewed = false;
  if (w.evaluator == nullptr || (w.connect && !w.evaluator->availability())) {
    if (!w.connect)
      return Status::unavailable(w.unreachable.empty() ? "not connected" : w.unreachable);
    auto made = w.connect();
    if (!made) {
      w.unreachable = made.status().message();
      return made.status();
    }
    w.owned = std::move(made.value());
    w.evaluator = w.owned.get();
    w.unreachable.clear();
    *renewed = true;
  } else if (Status s = w.evaluator->availability(); !s) {
    if (Status r = w.evaluator->reconnect(); !r) return r;
    *renewed = true;
  }
  return Status::ok();
}

}  // namespace arc::actors
