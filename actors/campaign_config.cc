#include "actors/campaign_config.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_toml.h"
#include "actors/guard_core.h"
#include "actors/worker_spec.h"
#include "base/arc_home.h"

namespace arc::actors {
namespace {

constexpr const char* kTimingValues = "\"auto\", \"cuda_events\" or \"cupti\"";
constexpr const char* kMarginScopeValues = "\"changed\" or \"all\"";
constexpr const char* kSlowerWorkloadsValues = "\"revert\" or \"allow\"";

std::string where(const std::filesystem::path& file, const std::string& field) {
  return file.string() + ": field '" + field + "'";
}

bool valid_agent_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s == "campaign" || s == "guard") return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

// The root's tables: the campaign's own and every backend's section.
std::set<std::string> known_tables() {
  std::set<std::string> known = {"campaign", "evaluation", "guard",  "memory",
                                 "plateau",  "agents",     "workers"};
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section != nullptr) known.insert(k->section);
  }
  return known;
}

// One [[agents]] entry, `t`: its name, skill and backend, and the backend's own fields (a field
// another backend owns is an error).
AgentConfig read_agent_entry(CampaignReader& r, const CampaignTable& t) {
  std::set<std::string> known = {"name", "skill", "backend"};
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    for (const AgentField& f : k->agent_fields) known.insert(f.key);
  }
  r.known_fields(t, known);
  AgentConfig a;
  r.get(t, "name", a.name, true, "an agent name (letters, digits, '-', '_')");
  r.get(t, "skill", a.skill, true, "the name of a folder under skills/");
  r.get(t, "backend", a.backend, false, agent_backend_choices());
  if (r.failed()) return a;
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (a.backend == k->name) continue;
    for (const AgentField& f : k->agent_fields) {
      if (t.table->get(f.key) != nullptr) {
        r.fail(t.field(f.key), f.expected,
               "a " + std::string(f.key) + " on backend " + in_quotes(a.backend));
        return a;
      }
    }
  }
  if (const AgentBackendKind* k = find_agent_backend(a.backend);
      k != nullptr && k->read_agent != nullptr) {
    a.fields = k->read_agent(r, t);
  }
  return a;
}

// Every backend's section: checked whenever present, required when an agent needs it.
void read_sections(CampaignReader& r, CampaignConfig& c) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section == nullptr || r.failed()) continue;
    bool required = false;
    for (const auto& a : c.agents) {
      required |= a.backend == k->name && (k->needs_section == nullptr || k->needs_section(a));
    }
    const CampaignTable t = r.table(k->section, required);
    if (t.table == nullptr) continue;
    auto section = k->read_section(r, t, required);
    if (!r.failed()) c.sections[k->section] = std::move(section);
  }
}

}  // namespace

const char* to_string(Mode m) { return m == Mode::kAsync ? "async" : "lockstep"; }

Result<CampaignConfig> parse_campaign(const std::string& text, const std::filesystem::path& file,
                                      bool require_inputs) {
  auto parsed = parse_toml(text, file.string());
  if (!parsed) return parsed.status();
  toml::table root = std::move(parsed.value());
  CampaignConfig c;
  std::error_code abs_ec;
  c.file = std::filesystem::absolute(file, abs_ec);
  if (abs_ec) c.file = file;
  c.text = text;
  CampaignReader r(root, c.file);
  r.known_fields(r.root(), known_tables());

  const CampaignTable camp = r.table("campaign", true);
  r.known_fields(camp, {"name", "problem", "skills", "seed", "budget", "mode", "global_plateau",
                        "durability"});
  std::string problem, skills, mode = "lockstep";
  r.get(camp, "name", c.name, true, "a string");
  r.get(camp, "problem", problem, true, "a path to problem.toml or its folder");
  r.get(camp, "skills", skills, false, "a path to the skills folder");
  r.integer(camp, "seed", c.seed, kSeedRange);
  r.integer(camp, "budget", c.budget, kBudgetRange);
  r.get(camp, "mode", mode, false, "\"async\" or \"lockstep\"");
  r.integer(camp, "global_plateau", c.global_plateau, kGlobalPlateauRange);
  r.get(camp, "durability", c.durability, false, "\"sync\" or \"batch\"");
  if (r.failed()) return r.status();
  if (mode == "async") {
    c.mode = Mode::kAsync;
  } else if (mode == "lockstep") {
    c.mode = Mode::kLockstep;
  } else {
    r.fail("campaign.mode", "\"async\" or \"lockstep\"", in_quotes(mode));
  }
  if (c.durability != "sync" && c.durability != "batch") {
    r.fail("campaign.durability", "\"sync\" or \"batch\"", in_quotes(c.durability));
  }
  if (c.name.empty()) r.fail("campaign.name", "a non-empty string", "\"\"");
  if (r.failed()) return r.status();
  c.problem = r.resolve(problem);
  std::error_code fs_ec;
  auto problem_file =
      std::filesystem::is_directory(c.problem, fs_ec) ? c.problem / "problem.toml" : c.problem;
  if (require_inputs && !std::filesystem::exists(problem_file, fs_ec)) {
    return Status::invalid_argument(where(c.file, "campaign.problem") +
                                    ": expected an existing problem.toml or folder, got \"" +
                                    problem + "\" (" + problem_file.string() + " not found)");
  }
  c.skills = skills.empty() ? arc_home() / "skills" : r.resolve(skills);

  const CampaignTable ev = r.table("evaluation", false);
  r.known_fields(ev, {"rounds", "warmup", "repetitions", "buffer_sets", "timeout_s",
                      "memory_limit_mb", "flush_cache", "timing"});
  auto& s = c.evaluation;
  r.integer(ev, "rounds", s.rounds, kRoundsRange);
  r.integer(ev, "warmup", s.warmup, kWarmupRange);
  r.integer(ev, "repetitions", s.repetitions, kRepetitionsRange);
  r.integer(ev, "buffer_sets", s.buffer_sets, kBufferSetsRange);
  // A watchdog that never fires (inf, 1e300) or fires before any candidate can run is no
  // watchdog.
  r.number(ev, "timeout_s", s.timeout_s, kTimeoutRange);
  r.integer(ev, "memory_limit_mb", s.memory_limit_mb, kMemoryLimitMbRange);
  r.get(ev, "flush_cache", s.flush_cache, false, "a boolean");
  r.get(ev, "timing", s.timing, false, kTimingValues);
  if (r.failed()) return r.status();
  if (s.timing != "auto" && s.timing != "cuda_events" && s.timing != "cupti") {
    r.fail("evaluation.timing", kTimingValues, in_quotes(s.timing));
  }

  const CampaignTable guard = r.table("guard", false);
  r.known_fields(guard, {"margin", "sol_margin", "pairs", "pair_band", "pair_confidence",
                         "pair_repetitions", "margin_scope", "slower_workloads"});
  r.number(guard, "margin", c.margin, kMarginRange);
  r.integer(guard, "pairs", c.pairs, kPairsRange);
  r.number(guard, "pair_band", c.pair_band, kPairBandRange);
  r.number(guard, "pair_confidence", c.pair_confidence, kPairConfidenceRange);
  r.get(guard, "margin_scope", c.margin_scope, false, kMarginScopeValues);
  if (!r.failed() && c.margin_scope != kScopeChanged && c.margin_scope != kScopeAll) {
    r.fail("guard.margin_scope", kMarginScopeValues, in_quotes(c.margin_scope));
  }
  r.get(guard, "slower_workloads", c.slower_workloads, false, kSlowerWorkloadsValues);
  if (!r.failed() && c.slower_workloads != kSlowerRevert && c.slower_workloads != kSlowerAllow) {
    r.fail("guard.slower_workloads", kSlowerWorkloadsValues, in_quotes(c.slower_workloads));
  }
  if (guard.table != nullptr && guard.table->contains("pair_repetitions")) {
    uint32_t n = 0;
    r.integer(guard, "pair_repetitions", n, kRepetitionsRange);
    c.pair_repetitions = n;
  }
  if (guard.table != nullptr && guard.table->contains("sol_margin")) {
    double sol_margin = 1;
    r.number(guard, "sol_margin", sol_margin, kSolMarginRange);
    c.sol_margin = sol_margin;
  }

  const CampaignTable mem = r.table("memory", false);
  r.known_fields(mem, {"wins", "traps"});
  r.bound(mem, "wins", c.wins_bound, kMemoryBoundRange);
  r.bound(mem, "traps", c.traps_bound, kMemoryBoundRange);

  const CampaignTable pl = r.table("plateau", false);
  r.known_fields(pl, {"window", "drafting", "sibling_inspection"});
  r.integer(pl, "window", c.plateau_window, kPlateauWindowRange);
  r.get(pl, "drafting", c.drafting, false, "a boolean");
  r.get(pl, "sibling_inspection", c.sibling_inspection, false, "a boolean");
  if (r.failed()) return r.status();

  const toml::node* agents = root.get("agents");
  if (agents == nullptr) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected at least one [[agents]] entry, got nothing");
  }
  if (!agents->is_array_of_tables()) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected an array of tables [[agents]], got " +
                                    CampaignReader::type_name(*agents));
  }
  std::set<std::string> names;
  size_t i = 0;
  for (const auto& node : *agents->as_array()) {
    const CampaignTable t{node.as_table(), "agents[" + std::to_string(i++) + "]"};
    AgentConfig a = read_agent_entry(r, t);
    if (r.failed()) return r.status();
    if (!valid_agent_name(a.name)) {
      r.fail(t.field("name"), "1-64 letters, digits, '-' or '_' (not \"campaign\" or \"guard\")",
             in_quotes(a.name));
    } else if (!names.insert(a.name).second) {
      r.fail(t.field("name"), "a name no other agent has", in_quotes(a.name) + " again");
    } else if (find_agent_backend(a.backend) == nullptr) {
      r.fail(t.field("backend"), agent_backend_choices(), in_quotes(a.backend));
    } else if (std::error_code ec;
               require_inputs && !std::filesystem::exists(c.skills / a.skill / "skill.toml", ec)) {
      r.fail(t.field("skill"), "a skill folder under " + c.skills.string(), in_quotes(a.skill));
    }
    if (r.failed()) return r.status();
    c.agents.push_back(std::move(a));
  }
  if (c.agents.empty()) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected at least one [[agents]] entry, got none");
  }
  if (const toml::node* workers = root.get("workers"); workers != nullptr) {
    if (!workers->is_array_of_tables()) {
      return Status::invalid_argument(where(c.file, "workers") +
                                      ": expected an array of tables [[workers]], got " +
                                      CampaignReader::type_name(*workers));
    }
    size_t w = 0;
    std::set<std::string> seen;
    for (const auto& node : *workers->as_array()) {
      const CampaignTable t{node.as_table(), "workers[" + std::to_string(w++) + "]"};
      r.known_fields(t, {"address"});
      std::string address;
      r.get(t, "address", address, true, "local, local:N or HOST:PORT");
      if (r.failed()) return r.status();
      auto spec = parse_worker(address, where(c.file, t.field("address")));
      if (!spec) return spec.status();
      if (!seen.insert(spec->name).second) {
        r.fail(t.field("address"), "a worker no other entry names", in_quotes(address) + " again");
        return r.status();
      }
      c.workers.push_back(spec->name);
    }
  }
  read_sections(r, c);
  if (r.failed()) return r.status();
  return c;
}

std::string campaign_text(const CampaignConfig& c) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  auto bound = [](uint32_t b) { return b == 0 ? toml_string("unbounded") : std::to_string(b); };
  const auto& e = c.evaluation;
  std::ostringstream os;
  os << "[campaign]\nname = " << toml_string(c.name)
     << "\nproblem = " << toml_string(c.problem.string())
     << "\nskills = " << toml_string(c.skills.string()) << "\nseed = " << c.seed
     << "\nbudget = " << c.budget << "\nmode = " << toml_string(to_string(c.mode))
     << "\nglobal_plateau = " << c.global_plateau << "\ndurability = " << toml_string(c.durability)
     << "\n\n[evaluation]\nrounds = " << e.rounds << "\nwarmup = " << e.warmup
     << "\nrepetitions = " << e.repetitions << "\nbuffer_sets = " << e.buffer_sets
     << "\ntimeout_s = " << toml_number(e.timeout_s) << "\nmemory_limit_mb = " << e.memory_limit_mb
     << "\nflush_cache = " << flag(e.flush_cache) << "\ntiming = " << toml_string(e.timing)
     << "\n\n[guard]\nmargin = " << toml_number(c.margin)
     << (c.sol_margin ? "\nsol_margin = " + toml_number(*c.sol_margin) : std::string())
     << "\npairs = " << c.pairs << "\npair_band = " << toml_number(c.pair_band)
     << "\npair_confidence = " << toml_number(c.pair_confidence)
     << "\nmargin_scope = " << toml_string(c.margin_scope)
     << "\nslower_workloads = " << toml_string(c.slower_workloads)
     << (c.pair_repetitions ? "\npair_repetitions = " + std::to_string(*c.pair_repetitions)
                            : std::string())
     << "\n\n[memory]\nwins = " << bound(c.wins_bound) << "\ntraps = " << bound(c.traps_bound)
     << "\n\n[plateau]\nwindow = " << c.plateau_window << "\ndrafting = " << flag(c.drafting)
     << "\nsibling_inspection = " << flag(c.sibling_inspection) << "\n";
  for (const auto& [name, section] : c.sections) {
    os << "\n[" << name << "]\n" << section->text();
  }
  for (const auto& a : c.agents) {
    os << "\n[[agents]]\nname = " << toml_string(a.name) << "\nskill = " << toml_string(a.skill)
       << "\nbackend = " << toml_string(a.backend) << "\n";
    if (a.fields != nullptr) os << a.fields->text();
  }
  for (const auto& w : c.workers) os << "\n[[workers]]\naddress = " << toml_string(w) << "\n";
  return os.str();
}

Result<CampaignConfig> load_campaign(const std::filesystem::path& file) {
  // What the path is, said plainly: a folder or a symlink loop opens (or fails) with no word
  // of why.
  std::error_code ec;
  const auto st = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(st)) {
    return Status::invalid_argument(
        file.string() +
        ": cannot read the campaign file: " + (ec ? ec.message() : std::string("no such file")) +
        (ec == std::errc::too_many_symbolic_link_levels ? " (a symlink loop)" : ""));
  }
  if (std::filesystem::is_directory(st)) {
    const bool has_one = std::filesystem::is_regular_file(file / "campaign.toml", ec);
    return Status::invalid_argument(
        file.string() + ": expected a campaign file, got a directory" +
        (has_one ? " (did you mean " + (file / "campaign.toml").string() + "?)" : ""));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(file.string() +
                                    ": cannot read the campaign file: " + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_campaign(ss.str(), file);
}

}  // namespace arc::actors
