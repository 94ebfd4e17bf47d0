// A run's inputs kept in its log: the manifest, storing it, restoring from it
// (actors/run_inputs.h).
#include "actors/run_inputs.h"

#include <algorithm>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "problem/problem_copy.h"
#include "storage/journal.h"

namespace arc::actors {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kFormat[] = "kernelarc-run-inputs-v1";
using problem::levels_up;

bool is_sha256_hex(const std::string& h) {
  return h.size() == 64 && std::all_of(h.begin(), h.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// "<skill>/skill.toml" or "<skill>/SKILL.md".
bool is_skill_file(const std::string& path) {
  const size_t slash = path.find('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string name = path.substr(0, slash);
  const std::string leaf = path.substr(slash + 1);
  return levels_up(name) == 0 && name.find('/') == std::string::npos &&
         (leaf == "skill.toml" || leaf == "SKILL.md");
}

Status bad_manifest(const std::string& field, const std::string& expected) {
  return Status::missing_input("the run's inputs manifest: field '" + field + "': expected " +
                               expected);
}

// A {path: sha256} object of `field`; `valid` checks each path.
Status read_files(const json& j, const std::string& field,
                  const std::function<bool(const std::string&)>& valid,
                  const std::string& expected_path, std::map<std::string, std::string>& out) {
  if (!j.is_object() || j.empty()) {
    return bad_manifest(field, "a non-empty object of path -> SHA-256");
  }
  for (const auto& [path, hash] : j.items()) {
    std::string at = field;
    at.append("[\"").append(path).append("\"]");
    if (!valid(path)) return bad_manifest(at, expected_path);
    if (!hash.is_string() || !is_sha256_hex(hash.get<std::string>())) {
      return bad_manifest(at, "64 lowercase hex digits (SHA-256)");
    }
    out[path] = hash.get<std::string>();
  }
  return Status::ok();
}

// A string member of an object.
Status read_string(const json& j, const std::string& object, const std::string& key,
                   std::string& out) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
    return bad_manifest(object + "." + key, "a non-empty string");
  }
  out = j[key].get<std::string>();
  return Status::ok();
}

// An artifact by hash, as the named file of the run; any failure is a missing input.
Result<std::string> fetch(const ArtifactSource& artifacts, const std::string& hash,
                          const std::string& what) {
  if (!artifacts) {
    return Status::missing_input(what + " (artifact " + hash + "): no artifact store to read");
  }
  auto blob = artifacts(hash);
  if (!blob) {
    return Status::missing_input(what + " (artifact " + hash +
                                 ") cannot be read from the log: " + blob.status().message());
  }
  if (sha256_hex(blob.value()) != hash) {
    return Status::missing_input(what + " (artifact " + hash + "): its bytes hash otherwise");
  }
  return blob;
}

// The log's copy of the problem, written under `root` (problem/problem_copy.h). Returns the
// problem folder.
Result<fs::path> write_problem_copy(const RunInputsManifest& m, const fs::path& root,
                                    const ArtifactSource& artifacts) {
  std::map<std::string, std::string> files;
  for (const auto& [path, hash] : m.problem_files) {
    auto bytes =
        fetch(artifacts, hash, "problem file " + (fs::path(m.problem_dir) / path).string());
    if (!bytes) return bytes.status();
    files[path] = std::move(bytes.value());
  }
  return problem::write_problem_files(root, m.problem_dir, files);
}

Result<fs::path> write_skills_copy(const RunInputsManifest& m, const fs::path& root,
                                   const ArtifactSource& artifacts) {
  const fs::path dir = root / "skills";
  for (const auto& [path, hash] : m.skill_files) {
    auto bytes = fetch(artifacts, hash, "skill file " + (fs::path(m.skills_dir) / path).string());
    if (!bytes) return bytes.status();
    if (auto s = problem::write_file_bytes(dir / path, bytes.value()); !s) return s;
  }
  return dir;
}

std::string short_hash(const std::string& h) { return h.substr(0, 12); }

const char kNoCopy[] =
    "; the log keeps no copy of the run's inputs (it was written before runs kept them), so the "
    "run can only be replayed where its files are as they were";

// The manifest `started` names; none for a log without one, or without an artifact store.
Result<std::optional<RunInputsManifest>> read_manifest(const fb::CampaignStartedT& started,
                                                       const ArtifactSource& artifacts) {
  if (started.inputs_ref.empty() || !artifacts) return std::optional<RunInputsManifest>();
  auto text = fetch(artifacts, started.inputs_ref, "the run's inputs manifest");
  if (!text) return text.status();
  auto manifest = parse_manifest(text.value());
  if (!manifest) return manifest.status();
  if (manifest->problem_hash != started.problem_hash) {
    return bad_manifest("problem.hash",
                        "the hash CampaignStarted logged, " + short_hash(started.problem_hash));
  }
  return std::optional<RunInputsManifest>(std::move(manifest.value()));
}

// in.restored, created on first use.
Status ensure_private_folder(RunInputs& in) {
  if (in.restored) return Status::ok();
  auto folder = problem::make_private_folder();
  if (!folder) return folder.status();
  in.restored = std::move(folder.value());
  return Status::ok();
}

// The problem into `in`: the folder the log names when it holds what the run read, else the
// manifest's copy (with a warning or a note), else (no manifest) a missing input.
Status restore_problem(const fb::CampaignStartedT& started, const RunInputsManifest* m,
                       const ArtifactSource& artifacts, RunInputs& in) {
  auto named = problem::load_problem(started.problem_dir);
  if (named && named->hash == started.problem_hash) {
    in.problem = std::move(named.value());
    in.problem_path = started.problem_dir;
    return Status::ok();
  }
  if (m == nullptr) {
    if (!named) {
      return Status::missing_input("problem " + started.problem_dir + ": " +
                                   named.status().message() + kNoCopy);
    }
    return Status::missing_input(
        "problem " + started.problem_dir + ": its files changed since the run (hash " +
        short_hash(named->hash) + ", logged " + short_hash(started.problem_hash) + ")" + kNoCopy);
  }
  std::error_code ec;
  const std::string copy = "; using the copy in the run's log";
  if (named) {
    in.warnings.push_back("problem " + started.problem_dir +
                          ": its files changed since the run (hash " + short_hash(named->hash) +
                          ", logged " + short_hash(started.problem_hash) + ")" + copy);
  } else if (fs::exists(started.problem_dir, ec)) {
    in.notes.push_back("problem " + started.problem_dir + ": no longer loads (" +
                       named.status().message() + ")" + copy);
  } else {
    in.notes.push_back("problem " + started.problem_dir + ": not found" + copy);
  }
  if (auto s = ensure_private_folder(in); !s) return s;
  auto problem_copy = write_problem_copy(*m, *in.restored, artifacts);
  if (!problem_copy) return problem_copy.status();
  auto restored = problem::load_problem(problem_copy.value());
  if (!restored) {
    return Status::missing_input("the log's copy of problem " + started.problem_dir +
                                 " does not load: " + restored.status().message());
  }
  if (restored->hash != started.problem_hash) {
    return Status::missing_input("the log's copy of problem " + started.problem_dir +
                                 " hashes to " + short_hash(restored->hash) + ", logged " +
                                 short_hash(started.problem_hash) +
                                 " (the manifest lacks a file the run read)");
  }
  in.problem = std::move(restored.value());
  in.problem_path = problem_copy.value();
  return Status::ok();
}

// The skills into `in`: the manifest's copy, else (no manifest) the folder `skills_dir`.
Status restore_skills(const RunInputsManifest* m, const fs::path& skills_dir,
                      const ArtifactSource& artifacts, RunInputs& in) {
  fs::path dir = skills_dir;
  if (m != nullptr) {
    if (auto s = ensure_private_folder(in); !s) return s;
    auto copy = write_skills_copy(*m, *in.restored, artifacts);
    if (!copy) return copy.status();
    dir = copy.value();
  }
  auto skills = skills::load_skills(dir);
  if (!skills) {
    return Status::missing_input(
        (m != nullptr ? "the log's copy of skills " + m->skills_dir + " does not load: "
                      : "skills " + skills_dir.string() + ": ") +
        skills.status().message() + (m != nullptr ? "" : kNoCopy));
  }
  in.skills = std::move(skills.value());
  in.skills_path = dir;
  return Status::ok();
}

}  // namespace

std::string manifest_text(const RunInputsManifest& m) {
  json j = {
      {"format", kFormat},
      {"campaign", {{"path", m.campaign_path}, {"sha256", m.campaign_sha256}}},
      {"problem", {{"dir", m.problem_dir}, {"hash", m.problem_hash}, {"files", m.problem_files}}},
      {"skills", {{"dir", m.skills_dir}, {"files", m.skill_files}}}};
  return j.dump(1);
}

Result<RunInputsManifest> parse_manifest(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad_manifest("(top)", "a JSON object");
  if (!j.contains("format") || j["format"] != kFormat) {
    return bad_manifest("format", std::string("\"") + kFormat + "\"");
  }
  RunInputsManifest m;
  for (const char* key : {"campaign", "problem", "skills"}) {
    if (!j.contains(key) || !j[key].is_object()) return bad_manifest(key, "an object");
  }
  const json& c = j["campaign"];
  const json& p = j["problem"];
  const json& s = j["skills"];
  if (auto st = read_string(c, "campaign", "path", m.campaign_path); !st) return st;
  if (auto st = read_string(c, "campaign", "sha256", m.campaign_sha256); !st) return st;
  if (!is_sha256_hex(m.campaign_sha256)) {
    return bad_manifest("campaign.sha256", "64 lowercase hex digits (SHA-256)");
  }
  if (auto st = read_string(p, "problem", "dir", m.problem_dir); !st) return st;
  if (auto st = read_string(p, "problem", "hash", m.problem_hash); !st) return st;
  if (auto st = read_string(s, "skills", "dir", m.skills_dir); !st) return st;
  const auto problem_path = [](const std::string& path) {
    const int up = levels_up(path);
    return up >= 0 && up <= problem::kMaxProblemLevelsUp;
  };
  if (!p.contains("files")) return bad_manifest("problem.files", "an object");
  if (auto st = read_files(p["files"], "problem.files", problem_path,
                           "a path relative to the problem folder", m.problem_files);
      !st) {
    return st;
  }
  if (m.problem_files.count("problem.toml") == 0) {
    return bad_manifest("problem.files", "an entry for problem.toml");
  }
  if (!s.contains("files")) return bad_manifest("skills.files", "an object");
  if (auto st = read_files(s["files"], "skills.files", is_skill_file,
                           "\"<skill>/skill.toml\" or \"<skill>/SKILL.md\"", m.skill_files);
      !st) {
    return st;
  }
  return m;
}

Result<std::string> store_run_inputs(storage::Journal& journal, const CampaignConfig& config,
                                     const problem::Problem& problem,
                                     const std::vector<skills::Skill>& skills) {
  RunInputsManifest m;
  m.campaign_path = config.file.string();
  m.problem_dir = problem.dir.string();
  m.problem_hash = problem.hash;
  m.skills_dir = config.skills.string();
  auto put = [&journal](const std::string& bytes) { return journal.put_artifact(bytes); };
  auto h = put(config.text);
  if (!h) return h.status();
  m.campaign_sha256 = h.value();
  for (const auto& [path, bytes] : problem.files) {
    auto ph = put(bytes);
    if (!ph) return ph.status();
    m.problem_files[path] = ph.value();
  }
  for (const auto& s : skills) {
    auto th = put(s.definition);
    if (!th) return th.status();
    auto gh = put(s.guidance);
    if (!gh) return gh.status();
    m.skill_files[s.name + "/skill.toml"] = th.value();
    m.skill_files[s.name + "/SKILL.md"] = gh.value();
  }
  return put(manifest_text(m));
}

Result<RunInputs> restore_run_problem(const fb::CampaignStartedT& started,
                                      const ArtifactSource& artifacts) {
  auto manifest = read_manifest(started, artifacts);
  if (!manifest) return manifest.status();
  const RunInputsManifest* m = manifest->has_value() ? &**manifest : nullptr;
  RunInputs in;
  if (auto s = restore_problem(started, m, artifacts, in); !s) return s;
  return in;
}

Result<RunInputs> restore_run_inputs(const fb::CampaignStartedT& started,
                                     const fs::path& skills_dir, const ArtifactSource& artifacts) {
  auto manifest = read_manifest(started, artifacts);
  if (!manifest) return manifest.status();
  const RunInputsManifest* m = manifest->has_value() ? &**manifest : nullptr;
  RunInputs in;
  if (auto s = restore_problem(started, m, artifacts, in); !s) return s;
  if (auto s = restore_skills(m, skills_dir, artifacts, in); !s) return s;
  return in;
}

}  // namespace arc::actors
