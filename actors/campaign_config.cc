#include "actors/campaign_config.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "actors/agent_backend_registry.h"
#include "base/arc_home.h"
#include "base/toml_text.h"

namespace arc::actors {
namespace {

constexpr const char* kTimingValues = "\"auto\", \"cuda_events\" or \"cupti\"";

std::string where(const std::filesystem::path& file, const std::string& field) {
  return file.string() + ": field '" + field + "'";
}

class Reader : public FieldErrors {
 public:
  Reader(const toml::table& root, const std::filesystem::path& file)
      : FieldErrors(file.string()), root_(root) {}

  const toml::table* table(const std::string& name, bool required) {
    const toml::node* n = root_.get(name);
    if (n == nullptr) {
      if (required) fail(name, "a table [" + name + "]", "nothing");
      return nullptr;
    }
    if (!n->is_table()) {
      fail(name, "a table", type_name(*n));
      return nullptr;
    }
    return n->as_table();
  }

  template <class T>
  void get(const toml::table* t, const std::string& prefix, const std::string& key, T& out,
           bool required, const char* expected) {
    if (failed() || t == nullptr) return;
    const std::string field = prefix.empty() ? key : prefix + "." + key;
    const toml::node* n = t->get(key);
    if (n == nullptr) {
      if (required) fail(field, expected, "nothing");
      return;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (!n->is_string()) {
        fail(field, expected, type_name(*n));
        return;
      }
      out = n->as_string()->get();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!n->is_boolean()) {
        fail(field, expected, type_name(*n));
        return;
      }
      out = n->as_boolean()->get();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (n->is_integer()) {
        out = static_cast<T>(n->as_integer()->get());
      } else if (n->is_floating_point()) {
        out = static_cast<T>(n->as_floating_point()->get());
      } else {
        {
          fail(field, expected, type_name(*n));
          return;
        }
      }
    } else {
      if (!n->is_integer()) {
        fail(field, expected, type_name(*n));
        return;
      }
      int64_t v = n->as_integer()->get();
      if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max()) {
        {
          fail(field, expected, std::to_string(v));
          return;
        }
      }
      out = static_cast<T>(v);
    }
  }

  // A bound: a non-negative integer or the string "unbounded" (stored as 0).
  void bound(const toml::table* t, const std::string& prefix, const std::string& key,
             uint32_t& out) {
    if (failed() || t == nullptr) return;
    const toml::node* n = t->get(key);
    if (n == nullptr) return;
    const std::string field = prefix + "." + key;
    if (n->is_string() && n->as_string()->get() == "unbounded") {
      out = 0;
      return;
    }
    if (n->is_integer() && n->as_integer()->get() > 0 && n->as_integer()->get() <= (1 << 30)) {
      out = static_cast<uint32_t>(n->as_integer()->get());
      return;
    }
    fail(field, "a positive integer or \"unbounded\"", describe(*n));
  }

  static std::string type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string:
        return "a string (" + describe(n) + ")";
      case toml::node_type::integer:
        return "an integer (" + describe(n) + ")";
      case toml::node_type::floating_point:
        return "a float (" + describe(n) + ")";
      case toml::node_type::boolean:
        return "a boolean";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::table:
        return "a table";
      default:
        return "a date/time";
    }
  }
  static std::string describe(const toml::node& n) { return toml_describe(n); }

 private:
  const toml::table& root_;
};

void check_unknown(Reader& r, const toml::table* t, const std::string& prefix,
                   const std::set<std::string>& known) {
  if (t == nullptr || r.failed()) return;
  for (const auto& [k, _] : *t) {
    if (known.count(std::string(k.str())) == 0) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      r.fail_raw(prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str()),
                 "unknown field; expected one of: " + list);
      return;
    }
  }
}

bool valid_agent_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s == "campaign" || s == "guard") return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

// weakly_canonical that never throws: a path the system refuses (too long, say) stays as
// written, normalised, and the later open of it reports the error with the path.
std::filesystem::path resolved(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path r = std::filesystem::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

// A program named with a '/' and relative is relative to the campaign file; a bare name is
// searched in PATH.
std::string command_path(const std::string& program, const std::filesystem::path& file) {
  if (program.find('/') == std::string::npos || std::filesystem::path(program).is_absolute()) {
    return program;
  }
  return resolved(file.parent_path() / program).string();
}

// [llm] and [exec]: checked whenever present, required when an agent uses them.
Status parse_backends(Reader& r, const toml::table& root, CampaignConfig& c, bool uses_llm,
                      bool uses_exec) {
  const toml::table* llm = r.table("llm", uses_llm);
  check_unknown(r, llm, "llm",
                {"base_url", "model", "api_key_env", "api_key", "temperature", "max_tokens",
                 "timeout_s", "retries", "backoff_s", "concurrency", "max_failures"});
  auto& l = c.llm;
  r.get(llm, "llm", "base_url", l.base_url, true, "an http:// or https:// URL");
  r.get(llm, "llm", "model", l.model, true, "a model name");
  r.get(llm, "llm", "api_key_env", l.api_key_env, false, "an environment variable name");
  r.get(llm, "llm", "api_key", l.api_key, false, "a string");
  r.get(llm, "llm", "temperature", l.temperature, false, "a number in [0, 2]");
  r.get(llm, "llm", "max_tokens", l.max_tokens, false, "a positive integer");
  r.get(llm, "llm", "timeout_s", l.timeout_s, false, "a positive number of seconds");
  r.get(llm, "llm", "retries", l.retries, false, "a non-negative integer");
  r.get(llm, "llm", "backoff_s", l.backoff_s, false, "a non-negative number of seconds");
  r.get(llm, "llm", "concurrency", l.concurrency, false, "a positive integer");
  r.get(llm, "llm", "max_failures", l.max_failures, false, "a positive integer");
  if (r.failed()) return r.status();
  if (llm != nullptr) {
    if (l.base_url.rfind("http://", 0) != 0 && l.base_url.rfind("https://", 0) != 0) {
      r.fail("llm.base_url", "an http:// or https:// URL", "\"" + l.base_url + "\"");
    } else if (l.model.empty()) {
      r.fail("llm.model", "a model name", "\"\"");
    } else if (!(l.temperature >= 0 && l.temperature <= 2)) {
      r.fail("llm.temperature", "a number in [0, 2]", std::to_string(l.temperature));
    } else if (l.max_tokens == 0) {
      r.fail("llm.max_tokens", "a positive integer", "0");
    } else if (!(l.timeout_s > 0)) {
      r.fail("llm.timeout_s", "a positive number of seconds", std::to_string(l.timeout_s));
    } else if (!(l.backoff_s >= 0 && l.backoff_s <= 600)) {
      r.fail("llm.backoff_s", "a number of seconds in [0, 600]", std::to_string(l.backoff_s));
    } else if (l.retries > 20) {
      r.fail("llm.retries", "an integer in [0, 20]", std::to_string(l.retries));
    } else if (l.concurrency == 0) {
      r.fail("llm.concurrency", "a positive integer", "0");
    } else if (l.max_failures == 0) {
      r.fail("llm.max_failures", "a positive integer", "0");
    }
  }
  if (r.failed()) return r.status();

  const toml::table* ex = r.table("exec", uses_exec);
  check_unknown(r, ex, "exec", {"command", "timeout_s", "max_failures"});
  auto& e = c.exec;
  r.get(ex, "exec", "timeout_s", e.timeout_s, false, "a positive number of seconds");
  r.get(ex, "exec", "max_failures", e.max_failures, false, "a positive integer");
  if (r.failed()) return r.status();
  if (ex != nullptr) {
    const toml::node* cmd = ex->get("command");
    const char* expected = "a non-empty array of strings (the program and its arguments)";
    if (cmd == nullptr) {
      // Optional when every exec agent names its own command.
      if (uses_exec) r.fail("exec.command", expected, "nothing");
    } else if (!cmd->is_array() || cmd->as_array()->empty()) {
      r.fail("exec.command", expected, Reader::type_name(*cmd));
    } else {
      for (const auto& item : *cmd->as_array()) {
        if (!item.is_string() || item.as_string()->get().empty()) {
          r.fail("exec.command", expected, "an element that is " + Reader::type_name(item));
          break;
        }
        e.command.push_back(item.as_string()->get());
      }
    }
    if (!r.failed() && !(e.timeout_s > 0)) {
      r.fail("exec.timeout_s", "a positive number of seconds", std::to_string(e.timeout_s));
    }
    if (!r.failed() && e.max_failures == 0) r.fail("exec.max_failures", "a positive integer", "0");
    if (!r.failed() && !e.command.empty()) e.command[0] = command_path(e.command[0], c.file);
  }
  return r.failed() ? r.status() : Status::ok();
}

}  // namespace

const char* to_string(Mode m) { return m == Mode::kAsync ? "async" : "lockstep"; }

Result<CampaignConfig> parse_campaign(const std::string& text, const std::filesystem::path& file) {
  auto parsed = parse_toml(text, file.string());
  if (!parsed) return parsed.status();
  toml::table root = std::move(parsed.value());
  CampaignConfig c;
  std::error_code abs_ec;
  c.file = std::filesystem::absolute(file, abs_ec);
  if (abs_ec) c.file = file;
  c.text = text;
  Reader r(root, c.file);
  check_unknown(r, &root, "",
                {"campaign", "evaluation", "guard", "memory", "plateau", "agents", "llm", "exec"});

  const toml::table* camp = r.table("campaign", true);
  check_unknown(
      r, camp, "campaign",
      {"name", "problem", "skills", "seed", "budget", "mode", "global_plateau", "durability"});
  std::string problem, skills, mode = "lockstep";
  r.get(camp, "campaign", "name", c.name, true, "a string");
  r.get(camp, "campaign", "problem", problem, true, "a path to problem.toml or its folder");
  r.get(camp, "campaign", "skills", skills, false, "a path to the skills folder");
  r.get(camp, "campaign", "seed", c.seed, false, "a non-negative integer");
  r.get(camp, "campaign", "budget", c.budget, false, "a positive integer");
  r.get(camp, "campaign", "mode", mode, false, "\"async\" or \"lockstep\"");
  r.get(camp, "campaign", "global_plateau", c.global_plateau, false, "a non-negative integer");
  r.get(camp, "campaign", "durability", c.durability, false, "\"sync\" or \"batch\"");
  if (r.failed()) return r.status();
  if (mode == "async") {
    c.mode = Mode::kAsync;
  } else if (mode == "lockstep") {
    c.mode = Mode::kLockstep;
  } else {
    r.fail("campaign.mode", "\"async\" or \"lockstep\"", "\"" + mode + "\"");
  }
  if (c.durability != "sync" && c.durability != "batch") {
    r.fail("campaign.durability", "\"sync\" or \"batch\"", "\"" + c.durability + "\"");
  }
  if (c.budget == 0) r.fail("campaign.budget", "a positive integer", "0");
  if (c.name.empty()) r.fail("campaign.name", "a non-empty string", "\"\"");
  if (r.failed()) return r.status();
  const auto base = c.file.parent_path();
  c.problem = resolved(base / problem);
  std::error_code fs_ec;
  auto problem_file =
      std::filesystem::is_directory(c.problem, fs_ec) ? c.problem / "problem.toml" : c.problem;
  if (!std::filesystem::exists(problem_file, fs_ec)) {
    return Status::invalid_argument(where(c.file, "campaign.problem") +
                                    ": expected an existing problem.toml or folder, got \"" +
                                    problem + "\" (" + problem_file.string() + " not found)");
  }
  c.skills = skills.empty() ? arc_home() / "skills" : resolved(base / skills);

  const toml::table* ev = r.table("evaluation", false);
  check_unknown(r, ev, "evaluation",
                {"rounds", "warmup", "repetitions", "buffer_sets", "timeout_s", "memory_limit_mb",
                 "flush_cache", "timing"});
  auto& s = c.evaluation;
  r.get(ev, "evaluation", "rounds", s.rounds, false, "a positive integer");
  r.get(ev, "evaluation", "warmup", s.warmup, false, "a non-negative integer");
  r.get(ev, "evaluation", "repetitions", s.repetitions, false, "a positive integer");
  r.get(ev, "evaluation", "buffer_sets", s.buffer_sets, false, "a positive integer");
  r.get(ev, "evaluation", "timeout_s", s.timeout_s, false, "a positive number of seconds");
  r.get(ev, "evaluation", "memory_limit_mb", s.memory_limit_mb, false, "a positive integer");
  r.get(ev, "evaluation", "flush_cache", s.flush_cache, false, "a boolean");
  r.get(ev, "evaluation", "timing", s.timing, false, kTimingValues);
  if (r.failed()) return r.status();
  if (s.timing != "auto" && s.timing != "cuda_events" && s.timing != "cupti") {
    r.fail("evaluation.timing", kTimingValues, "\"" + s.timing + "\"");
  }
  if (s.rounds == 0) r.fail("evaluation.rounds", "a positive integer", "0");
  if (s.repetitions < 3) {
    r.fail("evaluation.repetitions", "an integer >= 3", std::to_string(s.repetitions));
  }
  if (s.buffer_sets == 0) r.fail("evaluation.buffer_sets", "a positive integer", "0");
  if (!(s.timeout_s > 0)) {
    r.fail("evaluation.timeout_s", "a positive number of seconds", std::to_string(s.timeout_s));
  }
  if (s.memory_limit_mb != 0 && s.memory_limit_mb < 64) {
    r.fail("evaluation.memory_limit_mb", "0 (no limit) or an integer >= 64",
           std::to_string(s.memory_limit_mb));
  }

  const toml::table* guard = r.table("guard", false);
  check_unknown(r, guard, "guard", {"margin", "sol_margin"});
  r.get(guard, "guard", "margin", c.margin, false, "a number in [0, 1)");
  if (!r.failed() && !(c.margin >= 0 && c.margin < 1)) {
    r.fail("guard.margin", "a number in [0, 1)", std::to_string(c.margin));
  }
  if (guard != nullptr && guard->contains("sol_margin")) {
    double sol_margin = 0;
    r.get(guard, "guard", "sol_margin", sol_margin, true, "a number in (0, 1]");
    if (!r.failed() && !(sol_margin > 0 && sol_margin <= 1)) {
      r.fail("guard.sol_margin", "a number in (0, 1]", std::to_string(sol_margin));
    }
    c.sol_margin = sol_margin;
  }

  const toml::table* mem = r.table("memory", false);
  check_unknown(r, mem, "memory", {"wins", "traps"});
  r.bound(mem, "memory", "wins", c.wins_bound);
  r.bound(mem, "memory", "traps", c.traps_bound);

  const toml::table* pl = r.table("plateau", false);
  check_unknown(r, pl, "plateau", {"window", "drafting", "sibling_inspection"});
  r.get(pl, "plateau", "window", c.plateau_window, false, "a positive integer");
  r.get(pl, "plateau", "drafting", c.drafting, false, "a boolean");
  r.get(pl, "plateau", "sibling_inspection", c.sibling_inspection, false, "a boolean");
  if (!r.failed() && c.plateau_window == 0) r.fail("plateau.window", "a positive integer", "0");
  if (r.failed()) return r.status();

  const toml::node* agents = root.get("agents");
  if (agents == nullptr) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected at least one [[agents]] entry, got nothing");
  }
  if (!agents->is_array_of_tables()) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected an array of tables [[agents]], got " +
                                    Reader::type_name(*agents));
  }
  std::set<std::string> names;
  size_t i = 0;
  for (const auto& node : *agents->as_array()) {
    const auto* t = node.as_table();
    const std::string prefix = "agents[" + std::to_string(i++) + "]";
    check_unknown(r, t, prefix, {"name", "skill", "backend", "model", "command"});
    AgentConfig a;
    r.get(t, prefix, "name", a.name, true, "an agent name (letters, digits, '-', '_')");
    r.get(t, prefix, "skill", a.skill, true, "the name of a folder under skills/");
    r.get(t, prefix, "backend", a.backend, false, agent_backend_choices().c_str());
    r.get(t, prefix, "model", a.model, false, "a model name");
    if (r.failed()) return r.status();
    if (t->get("model") != nullptr && (a.backend != "llm" || a.model.empty())) {
      r.fail(prefix + ".model", "a non-empty model name, on an agent with backend = \"llm\"",
             a.model.empty() ? "\"\"" : "a model on backend \"" + a.backend + "\"");
    }
    if (const toml::node* cmd = t->get("command"); cmd != nullptr && !r.failed()) {
      const char* expected =
          "a non-empty array of strings (program and arguments), on an agent with backend = "
          "\"exec\"";
      if (a.backend != "exec" || !cmd->is_array() || cmd->as_array()->empty()) {
        r.fail(prefix + ".command", expected,
               a.backend != "exec" ? "a command on backend \"" + a.backend + "\""
                                   : Reader::type_name(*cmd));
      } else {
        for (const auto& item : *cmd->as_array()) {
          if (!item.is_string() || item.as_string()->get().empty()) {
            r.fail(prefix + ".command", expected, "an element that is " + Reader::type_name(item));
            break;
          }
          a.command.push_back(item.as_string()->get());
        }
        if (!r.failed()) a.command[0] = command_path(a.command[0], c.file);
      }
    }
    if (r.failed()) return r.status();
    if (!valid_agent_name(a.name)) {
      r.fail(prefix + ".name", "1-64 letters, digits, '-' or '_' (not \"campaign\" or \"guard\")",
             "\"" + a.name + "\"");
    } else if (!names.insert(a.name).second) {
      r.fail(prefix + ".name", "a name no other agent has", "\"" + a.name + "\" again");
    } else if (find_agent_backend(a.backend) == nullptr) {
      r.fail(prefix + ".backend", agent_backend_choices(), "\"" + a.backend + "\"");
    } else if (std::error_code ec;
               !std::filesystem::exists(c.skills / a.skill / "skill.toml", ec)) {
      r.fail(prefix + ".skill", "a skill folder under " + c.skills.string(), "\"" + a.skill + "\"");
    }
    if (r.failed()) return r.status();
    c.agents.push_back(std::move(a));
  }
  if (c.agents.empty()) {
    return Status::invalid_argument(where(c.file, "agents") +
                                    ": expected at least one [[agents]] entry, got none");
  }
  bool uses_llm = false, uses_exec = false;
  for (const auto& a : c.agents) {
    uses_llm |= a.backend == "llm";
    uses_exec |= a.backend == "exec" && a.command.empty();
  }
  if (auto s = parse_backends(r, root, c, uses_llm, uses_exec); !s) return s;
  return c;
}

std::string campaign_text(const CampaignConfig& c) {
  auto q = [](const std::string& v) { return "\"" + v + "\""; };
  auto bound = [&q](uint32_t b) { return b == 0 ? q("unbounded") : std::to_string(b); };
  std::ostringstream os;
  os << "[campaign]\nname = " << q(c.name) << "\nproblem = " << q(c.problem.string())
     << "\nskills = " << q(c.skills.string()) << "\nseed = " << c.seed << "\nbudget = " << c.budget
     << "\nmode = " << q(to_string(c.mode)) << "\nglobal_plateau = " << c.global_plateau
     << "\ndurability = " << q(c.durability) << "\n\n[evaluation]\nrounds = " << c.evaluation.rounds
     << "\nwarmup = " << c.evaluation.warmup << "\nrepetitions = " << c.evaluation.repetitions
     << "\nbuffer_sets = " << c.evaluation.buffer_sets << "\ntimeout_s = " << c.evaluation.timeout_s
     << "\nmemory_limit_mb = " << c.evaluation.memory_limit_mb
     << "\nflush_cache = " << (c.evaluation.flush_cache ? "true" : "false")
     << "\ntiming = " << q(c.evaluation.timing) << "\n\n[guard]\nmargin = " << c.margin
     << (c.sol_margin ? "\nsol_margin = " + std::to_string(*c.sol_margin) : std::string())
     << "\n\n[memory]\nwins = " << bound(c.wins_bound) << "\ntraps = " << bound(c.traps_bound)
     << "\n\n[plateau]\nwindow = " << c.plateau_window
     << "\ndrafting = " << (c.drafting ? "true" : "false")
     << "\nsibling_inspection = " << (c.sibling_inspection ? "true" : "false") << "\n";
  bool uses_llm = false, uses_exec = false;
  for (const auto& a : c.agents) {
    uses_llm |= a.backend == "llm";
    uses_exec |= a.backend == "exec";
  }
  uses_exec = uses_exec && !c.exec.command.empty();
  if (uses_llm) {
    const auto& l = c.llm;
    os << "\n[llm]\nbase_url = " << q(l.base_url) << "\nmodel = " << q(l.model)
       << "\napi_key_env = " << q(l.api_key_env);
    if (!l.api_key.empty()) os << "\napi_key = " << q(l.api_key);
    os << "\ntemperature = " << l.temperature << "\nmax_tokens = " << l.max_tokens
       << "\ntimeout_s = " << l.timeout_s << "\nretries = " << l.retries
       << "\nbackoff_s = " << l.backoff_s << "\nconcurrency = " << l.concurrency
       << "\nmax_failures = " << l.max_failures << "\n";
  }
  if (uses_exec) {
    os << "\n[exec]\ncommand = [";
    for (size_t i = 0; i < c.exec.command.size(); ++i) {
      os << (i == 0 ? "" : ", ") << q(c.exec.command[i]);
    }
    os << "]\ntimeout_s = " << c.exec.timeout_s << "\nmax_failures = " << c.exec.max_failures
       << "\n";
  }
  for (const auto& a : c.agents) {
    os << "\n[[agents]]\nname = " << q(a.name) << "\nskill = " << q(a.skill)
       << "\nbackend = " << q(a.backend) << "\n";
    if (!a.model.empty()) os << "model = " << q(a.model) << "\n";
    if (!a.command.empty()) {
      os << "command = [";
      for (size_t i = 0; i < a.command.size(); ++i) os << (i == 0 ? "" : ", ") << q(a.command[i]);
      os << "]\n";
    }
  }
  return os.str();
}

Result<CampaignConfig> load_campaign(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Status::invalid_argument(file.string() + ": cannot read the campaign file");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_campaign(ss.str(), file);
}

}  // namespace arc::actors
