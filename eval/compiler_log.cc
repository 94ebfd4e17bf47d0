#include "eval/compiler_log.h"

namespace arc::eval {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_own(std::string_view path, const std::vector<std::string>& own) {
  for (const std::string& o : own) {
    if (o.empty()) continue;
    if (o.back() == '/' ? starts_with(path, o) && path.size() > o.size() : path == o) return true;
  }
  return false;
}

bool driver_line(std::string_view line) {
  for (std::string_view p : {"g++:", "gcc:", "c++:", "cc1plus:", "cc1:", "collect2:", "ld:",
                             "/usr/bin/ld:", "as:", "lto-wrapper:"}) {
    if (starts_with(line, p)) return true;
  }
  return line == "compilation terminated.";
}

}  // namespace

std::string withhold_foreign_diagnostics(std::string_view log,
                                         const std::vector<std::string>& own) {
  std::string out;
  bool last_kept = false;
  bool last_withheld_noted = false;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(pos, end - pos);
    pos = end + 1;
    bool keep = false;
    if (starts_with(line, "In file included from ") ||
        starts_with(line, "                 from ") || driver_line(line)) {
      keep = true;
    } else if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      keep = last_kept;  // continuation: goes with what it continues
    } else if (size_t colon = line.find(':'); colon != std::string_view::npos && colon > 0) {
      keep = is_own(line.substr(0, colon), own);
    }
    if (keep) {
      out.append(line);
      out.push_back('\n');
      last_withheld_noted = false;
    } else if (!line.empty() && !last_withheld_noted) {
      out.append(kWithheldDiagnostic);
      out.push_back('\n');
      last_withheld_noted = true;
    }
    // Include chains belong to the next located line; they never make a continuation keepable.
    if (!(line.empty() || line[0] == ' ' || line[0] == '\t')) {
      last_kept = keep && !starts_with(line, "In file included from ");
    }
  }
  if (!out.empty() && (log.empty() || log.back() != '\n')) out.pop_back();
  return out;
}

}  // namespace arc::eval
