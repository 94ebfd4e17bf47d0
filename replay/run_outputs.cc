// A run's outputs beside its log: best/, report.md and summary.json (replay/summary.h). Each is
// written aside and renamed into place, so that after a kill an output is either whole or
// absent, and `arcd resume` of a stopped run can tell what is missing by its absence.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "events/printer.h"
#include "problem/candidate.h"
#include "problem/problem.h"
#include "problem/shared_sources.h"
#include "replay/summary.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

// The name an output is written under before it is renamed into place.
fs::path aside(const fs::path& p) {
  return p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()));
}

Status write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::io_error("cannot create " + path.string() + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return Status::io_error("cannot write " + path.string() + ": " + std::strerror(errno));
  out.close();
  if (!out) return Status::io_error("cannot close " + path.string() + ": " + std::strerror(errno));
  return Status::ok();
}

Status rename_into_place(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) {
    fs::remove_all(from, ec);
    return Status::io_error("cannot rename " + from.string() + " to " + to.string() + ": " +
                            ec.message());
  }
  return Status::ok();
}

Status write_file_whole(const fs::path& path, const std::string& text) {
  const fs::path tmp = aside(path);
  if (auto s = write_file(tmp, text); !s) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return s;
  }
  return rename_into_place(tmp, path);
}

// best/ into `dir`: candidate.json and, per variant, the source that was compiled.
Status write_best(const fs::path& dir, const CampaignSummary& s,
                  const problem::Problem* run_problem) {
  if (auto st = write_file(dir / "candidate.json",
                           nlohmann::json::parse(s.best_canonical).dump(2) + "\n");
      !st) {
    return st;
  }
  auto cand = problem::Candidate::from_canonical(s.best_canonical);
  std::optional<problem::Problem> loaded;
  if (run_problem == nullptr) {
    if (auto p = problem::load_problem(s.problem_dir); p) loaded = std::move(p.value());
  }
  const problem::Problem* problem = run_problem != nullptr ? run_problem
                                    : loaded               ? &*loaded
                                                           : nullptr;
  if (!cand || problem == nullptr) return Status::ok();
  auto write_variant = [&](const std::string& label, const problem::Variant& v) -> Status {
    std::ostringstream src;
    src << "// KernelArc best implementation of " << s.problem << ", campaign " << s.campaign_id
        << "\n// variant " << v.key() << " (" << label << ")\n";
    // What the evaluator compiled: the knobs and params as #defines, then the source with the
    // problem's shared sources written into it.
    std::string text;
    if (!v.source.empty()) {
      text = v.source;
    } else if (const problem::Family* f = problem->family(v.family); f != nullptr) {
      std::ifstream in(f->source);
      std::ostringstream body;
      body << in.rdbuf();
      text = body.str();
    }
    for (const auto& [k, val] : problem->defines_for(v)) {
      src << "#define " << k << " " << val << "\n";
    }
    src << problem::inline_shared_sources(text, problem->headers);
    return write_file(dir / (label + ".cpp"), src.str());
  };
  if (auto st = write_variant("base", cand->base); !st) return st;
  for (const auto& [w, v] : cand->gates) {
    if (auto st = write_variant("workload-" + w, v); !st) return st;
  }
  return Status::ok();
}

}  // namespace

Status write_run_outputs(const fs::path& run_dir, const CampaignSummary& s, bool only_missing,
                         std::vector<std::string>* written, const problem::Problem* problem) {
  std::error_code ec;
  const auto wanted = [&](const fs::path& p) { return !only_missing || !fs::exists(p, ec); };
  const auto wrote = [written](const std::string& name) {
    if (written != nullptr) written->push_back(name);
  };
  // best/ first and summary.json last: summary.json present means the others are too.
  const fs::path best = run_dir / "best";
  if (s.best_canonical.empty()) {
    fs::create_directories(best, ec);  // a run without a best candidate has an empty best/
  } else if (wanted(best)) {
    const fs::path tmp = aside(best);
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return Status::io_error("cannot create " + tmp.string() + ": " + ec.message());
    if (auto st = write_best(tmp, s, problem); !st) {
      fs::remove_all(tmp, ec);
      return st;
    }
    fs::remove_all(best, ec);
    if (auto st = rename_into_place(tmp, best); !st) return st;
    wrote("best/");
  }
  if (wanted(run_dir / "report.md")) {
    if (auto st = write_file_whole(run_dir / "report.md", report_markdown(s)); !st) return st;
    wrote("report.md");
  }
  if (wanted(run_dir / "summary.json")) {
    if (auto st =
            write_file_whole(run_dir / "summary.json", events::dump_json(to_json(s), 2) + "\n");
        !st) {
      return st;
    }
    wrote("summary.json");
  }
  return Status::ok();
}

}  // namespace arc::replay
