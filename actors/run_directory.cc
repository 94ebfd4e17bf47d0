#include "actors/run_directory.h"

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "storage/journal.h"
#include "storage/run_lock.h"

namespace arc::actors {

namespace fs = std::filesystem;

Result<RunDirInspection> inspect_run_dir(const fs::path& run_dir) {
  RunDirInspection out;
  std::error_code ec;
  if (!fs::exists(run_dir, ec)) return out;
  if (!fs::is_directory(run_dir, ec)) {
    return Status::invalid_argument(run_dir.string() + ": expected a run directory, got a file");
  }
  bool has_log = false;
  bool has_others = false;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "log") {
      has_log = true;
    } else if (name != storage::RunLock::kFileName) {
      has_others = true;
    }
  }
  if (ec) return Status::io_error(run_dir.string() + ": cannot list: " + ec.message());
  if (!has_log) {
    out.state = has_others ? RunDirState::kForeign : RunDirState::kNew;
    return out;
  }
  const std::string log = log_dir_of(run_dir).string();
  auto empty = storage::Journal::holds_no_events(log);
  if (!empty) return empty.status();
  // A run writes its outputs only after its last event: outputs beside an empty log are not
  // what a start cut short leaves.
  if (!empty.value() || has_others) {
    out.state = empty.value() ? RunDirState::kForeign : RunDirState::kStarted;
    return out;
  }
  out.state = RunDirState::kUnstarted;
  if (fs::exists(fs::path(log) / "CURRENT", ec)) {
    storage::JournalOptions ro;
    ro.read_only = true;
    ro.create_if_missing = false;
    // A log whose creation stopped before its column families were made does not open; it
    // holds no start request either.
    if (auto j = storage::Journal::open(log, ro); j) {
      if (auto request = j.value()->get_meta(kStartRequestKey); request) {
        out.start_request = request.value();
      }
    }
  }
  return out;
}

Status discard_unstarted_log(const fs::path& run_dir) {
  const std::string log = log_dir_of(run_dir).string();
  auto empty = storage::Journal::holds_no_events(log);
  if (!empty) return empty.status();
  if (!empty.value()) {
    return Status::invalid_argument(log + ": holds events; it is resumed, never removed");
  }
  std::error_code ec;
  fs::remove_all(log, ec);
  if (ec)
    return Status::io_error(log + ": cannot remove the log of the unstarted run: " + ec.message());
  return Status::ok();
}

std::string start_request_text(const CampaignConfig& config) {
  nlohmann::json j = {{"config_path", config.file.string()},
                      {"config_text", config.text},
                      {"overrides", config.overrides}};
  return j.dump();
}

Result<CampaignConfig> campaign_of_start_request(const std::string& request,
                                                 const fs::path& run_dir, RunOptions& options) {
  const std::string where = run_dir.string() + ": the start request in its log";
  const nlohmann::json j = nlohmann::json::parse(request, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("config_path") || !j["config_path"].is_string() ||
      !j.contains("config_text") || !j["config_text"].is_string() || !j.contains("overrides") ||
      !j["overrides"].is_object()) {
    return Status::corruption(where + ": expected {config_path, config_text, overrides}");
  }
  auto config =
      parse_campaign(j["config_text"].get<std::string>(), j["config_path"].get<std::string>());
  if (!config) {
    return Status::invalid_argument(
        where + ": the campaign no longer parses: " + config.status().message());
  }
  for (const auto& [key, value] : j["overrides"].items()) {
    std::string bad_override = where;
    bad_override += ": override ";
    bad_override += key;
    if (!value.is_string()) return Status::corruption(bad_override);
    const std::string v = value.get<std::string>();
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    const bool number = !v.empty() && errno == 0 && end != nullptr && *end == '\0';
    if (key == "seed" && number) {
      options.seed = n;
    } else if (key == "budget" && number && n <= UINT32_MAX) {
      options.budget = static_cast<uint32_t>(n);
    } else if (key == "mode" && (v == "async" || v == "lockstep")) {
      options.mode = v == "async" ? Mode::kAsync : Mode::kLockstep;
    } else {
      bad_override += " = \"";
      bad_override += v;
      bad_override += "\"";
      return Status::corruption(bad_override);
    }
  }
  return config;
}

}  // namespace arc::actors
