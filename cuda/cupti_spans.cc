#include "cuda/cupti_spans.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace arc::cuda {

std::string describe_activities(const std::vector<std::string>& names, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < names.size();) {
    size_t j = i;
    while (j < names.size() && names[j] == names[i]) ++j;
    std::string item = names[i].empty() ? "(unnamed)" : names[i];
    if (j - i > 1) item += " x" + std::to_string(j - i);
    if (!out.empty()) out += "; ";
    if (out.size() + item.size() > max_chars) {
      out += "... (" + std::to_string(names.size() - i) + " more)";
      break;
    }
    out += item;
    i = j;
  }
  return out.empty() ? "(none)" : out;
}

RepetitionSpans repetition_spans(const ActivityRecords& records, uint64_t first_external_id,
                                 uint32_t repetitions) {
  RepetitionSpans r;
  auto unusable = [&r](std::string why) {
    r.usable = false;
    r.reason = std::move(why);
    r.spans_ns.clear();
    r.names.clear();
    return r;
  };
  if (repetitions == 0) return unusable("no timed repetitions");
  if (records.dropped > 0) {
    return unusable("CUPTI dropped " + std::to_string(records.dropped) +
                    " activity records (no buffer space)");
  }
  // correlation id -> repetition, from the external ids this timing pushed.
  std::map<uint32_t, uint32_t> rep_of;
  for (const auto& c : records.correlations) {
    if (c.external_id < first_external_id || c.external_id - first_external_id >= repetitions) {
      continue;
    }
    const auto rep = static_cast<uint32_t>(c.external_id - first_external_id);
    auto [it, fresh] = rep_of.emplace(c.correlation_id, rep);
    if (!fresh && it->second != rep) {
      return unusable("CUPTI correlation id " + std::to_string(c.correlation_id) +
                      " is attributed to repetitions " + std::to_string(it->second) + " and " +
                      std::to_string(rep));
    }
  }
  std::vector<std::vector<const GpuActivity*>> per_rep(repetitions);
  for (const auto& a : records.activities) {
    auto it = rep_of.find(a.correlation_id);
    if (it != rep_of.end()) per_rep[it->second].push_back(&a);
  }
  uint32_t empty = 0, first_empty = 0;
  for (uint32_t i = 0; i < repetitions; ++i) {
    if (per_rep[i].empty() && empty++ == 0) first_empty = i;
  }
  if (empty > 0) {
    return unusable(std::to_string(empty) + " of " + std::to_string(repetitions) +
                    " timed repetitions have no GPU activity in CUPTI's records (first: "
                    "repetition " +
                    std::to_string(first_empty) + ")");
  }
  for (uint32_t i = 0; i < repetitions; ++i) {
    auto& acts = per_rep[i];
    std::sort(acts.begin(), acts.end(), [](const GpuActivity* a, const GpuActivity* b) {
      return std::tie(a->start_ns, a->end_ns, a->correlation_id, a->name) <
             std::tie(b->start_ns, b->end_ns, b->correlation_id, b->name);
    });
    uint64_t first = acts.front()->start_ns, last = 0;
    std::vector<std::string> names;
    for (const GpuActivity* a : acts) {
      const std::string where = " (" + (a->name.empty() ? std::string("unnamed") : a->name) +
                                ", repetition " + std::to_string(i) + ")";
      if (a->start_ns == 0 && a->end_ns == 0) {
        return unusable("CUPTI could not time an activity" + where);
      }
      if (a->end_ns < a->start_ns) {
        return unusable("CUPTI reports an activity ending before it starts" + where);
      }
      first = std::min(first, a->start_ns);
      last = std::max(last, a->end_ns);
      names.push_back(a->name);
    }
    if (last <= first) {
      return unusable("repetition " + std::to_string(i) + " spans 0 ns in CUPTI's records");
    }
    if (i == 0) {
      r.names = std::move(names);
    } else if (names != r.names) {
      return unusable("repetition " + std::to_string(i) + " ran [" + describe_activities(names) +
                      "] but repetition 0 ran [" + describe_activities(r.names) +
                      "]: the engine issues the same launches every repetition");
    }
    r.spans_ns.push_back(static_cast<double>(last - first));
  }
  r.usable = true;
  return r;
}

}  // namespace arc::cuda
