#include "actors/worker_spec.h"

#include <set>

#include "base/numeric_range.h"
#include "base/trim.h"
#include "eval/remote_protocol.h"

namespace arc::actors {
namespace {

// Device ordinals of local:N.
constexpr IntegerRange kDeviceRange{0, 1023};

std::string trim(const std::string& s) { return arc::trim(s, " \t"); }

}  // namespace

Result<WorkerSpec> parse_worker(const std::string& text, const std::string& what) {
  const std::string item = trim(text);
  auto bad = [&what, &item](const std::string& expected) {
    return Status::invalid_argument(what + ": worker \"" + item + "\": expected " + expected);
  };
  WorkerSpec w;
  if (item == "local") {
    w.name = "local";
    return w;
  }
  if (item.rfind("local:", 0) == 0) {
    auto n = parse_flag_integer(item.substr(6), kDeviceRange);
    if (!n) return bad("local:N with a device ordinal N in 0..1023");
    w.name = item;
    w.device = static_cast<int>(n.value());
    return w;
  }
  auto endpoint = eval::parse_worker_endpoint(item);
  if (!endpoint) return Status::invalid_argument(what + ": " + endpoint.status().message());
  w.local = false;
  w.host = endpoint->host;
  w.port = endpoint->port;
  w.name = endpoint->text();
  return w;
}

Result<std::vector<WorkerSpec>> parse_worker_list(const std::string& text,
                                                  const std::string& what) {
  std::vector<WorkerSpec> out;
  if (trim(text) == "auto") return out;
  if (trim(text).empty()) {
    return Status::invalid_argument(what +
                                    ": expected auto or a list of workers (local, "
                                    "local:N, HOST:PORT), got nothing");
  }
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(text.substr(start, end - start));
    if (item == "auto") {
      return Status::invalid_argument(what + ": \"auto\" stands alone, not in a list");
    }
    auto w = parse_worker(item, what);
    if (!w) return w.status();
    const std::string key = w->local ? "local:" + std::to_string(w->device) : w->name;
    if (!seen.insert(key).second) {
      std::string why = what;
      why += ": worker \"" + item + "\" is listed twice";
      return Status::invalid_argument(why);
    }
    out.push_back(std::move(w.value()));
    start = end + 1;
  }
  return out;
}

std::vector<WorkerSpec> auto_workers(int devices) {
  std::vector<WorkerSpec> out;
  if (devices <= 1) {
    out.push_back(WorkerSpec{"local", true, 0, "", 0});
    return out;
  }
  for (int d = 0; d < devices; ++d) {
    out.push_back(WorkerSpec{"local:" + std::to_string(d), true, d, "", 0});
  }
  return out;
}

}  // namespace arc::actors
