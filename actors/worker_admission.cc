#include "actors/worker_admission.h"

namespace arc::actors {

std::string admission_refusal(const std::string& run_model, const std::string& model,
                              const std::string& key, const std::vector<LiveWorker>& live) {
  if (!run_model.empty() && model != run_model) {
    return "it measures on " + model + ", the run on " + run_model +
           "; timings are never compared across device models (start a run of its own for it)";
  }
  if (key.empty()) return "";
  for (const auto& w : live) {
    if (w.device_key == key) {
      return "its device " + key + " is already measured by worker " + w.name +
             "; two workers on one device would be timed at once";
    }
  }
  return "";
}

}  // namespace arc::actors
