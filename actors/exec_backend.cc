// The exec agent backend (docs/agents.md, "Pointing arcd at a command"): its [exec] section, an
// agent's own `command`, and its transport. Per exchange it runs the command once (through
// eval::run_subprocess, no shell) with the prompt (the context JSON, actors/exec_exchange.cc) on
// stdin; stdout is the reply. A non-zero exit, a signal or the timeout fails the exchange, the
// error carrying the end of stderr.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_toml.h"
#include "actors/shells.h"
#include "eval/subprocess.h"

namespace arc::actors {
namespace {

constexpr const char* kSection = "exec";
constexpr const char* kCommandExpected =
    "a non-empty array of strings (the program and its arguments)";

// [exec]: the command exec agents run once per proposal.
struct ExecSection : BackendSettings {
  std::vector<std::string> command;  // argv; required unless every exec agent has its own
  double timeout_s = 120;            // per run of the command
  uint32_t max_failures = 5;         // consecutive failed exchanges after which an agent stops

  std::string text() const override {
    return (command.empty() ? "" : "command = " + toml_strings(command) + "\n") +
           "timeout_s = " + toml_number(timeout_s) +
           "\nmax_failures = " + std::to_string(max_failures) + "\n";
  }
};

// An exec agent's own fields: the command it runs instead of [exec].command.
struct ExecAgentFields : BackendSettings {
  std::vector<std::string> command;
  std::string text() const override { return "command = " + toml_strings(command) + "\n"; }
};

constexpr AgentField kAgentFields[] = {
    {"command",
     "a non-empty array of strings (program and arguments), on an agent with backend = "
     "\"exec\""},
};

// Reads `t`'s command, its program resolved: with a '/' and relative, against the campaign
// file's folder; a bare name is left to the PATH search.
void read_command(CampaignReader& r, const CampaignTable& t, std::vector<std::string>& command,
                  const char* expected) {
  r.strings(t, "command", command, expected);
  if (r.failed() || command.empty()) return;
  std::string& program = command[0];
  if (program.find('/') != std::string::npos && !std::filesystem::path(program).is_absolute()) {
    program = r.resolve(program).string();
  }
}

std::shared_ptr<const BackendSettings> read_section(CampaignReader& r, const CampaignTable& t,
                                                    bool required) {
  r.known_fields(t, {"command", "timeout_s", "max_failures"});
  auto e = std::make_shared<ExecSection>();
  r.number(t, "timeout_s", e->timeout_s, kTimeoutRange);
  r.integer(t, "max_failures", e->max_failures, kMaxFailuresRange);
  if (r.failed()) return nullptr;
  if (t.table->get("command") == nullptr) {
    if (required) r.fail(t.field("command"), kCommandExpected, "nothing");
  } else {
    read_command(r, t, e->command, kCommandExpected);
  }
  return e;
}

// An agent that names its own command can do without [exec]: its other fields have defaults.
bool needs_section(const AgentConfig& a) { return a.fields == nullptr; }

std::shared_ptr<const BackendSettings> read_agent(CampaignReader& r, const CampaignTable& t) {
  if (t.table->get("command") == nullptr) return nullptr;
  auto f = std::make_shared<ExecAgentFields>();
  read_command(r, t, f->command, kAgentFields[0].expected);
  return f;
}

// The campaign's [exec], or its defaults (no command) when it has none.
const ExecSection& section_of(const CampaignConfig& c) {
  static const ExecSection kNone;
  const ExecSection* s = c.section<ExecSection>(kSection);
  return s != nullptr ? *s : kNone;
}

void core_spec(const CampaignConfig& c, const AgentConfig&, AgentSpec& spec) {
  spec.max_failures = section_of(c).max_failures;
}

// Runs the command once per exchange: the context on stdin, stdout and stderr read to EOF, all
// under one deadline.
class ExecBackend : public AgentBackend {
 public:
  ExecBackend(std::vector<std::string> command, double timeout_s)
      : command_(std::move(command)), timeout_s_(timeout_s) {}

  ExchangeReply exchange(const ExchangeRequest& request) override {
    ExchangeReply r;
    r.attempts = 1;
    const auto t0 = std::chrono::steady_clock::now();
    eval::SubprocessOptions o;
    o.timeout_s = timeout_s_;
    o.output_cap = 4u << 20;
    o.input = request.context;
    o.separate_stderr = true;
    o.error_cap = 16u << 10;
    auto run = eval::run_subprocess(command_, o);
    r.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!run) {
      r.error = run.status().message();
      return r;
    }
    if (run->ok()) {
      r.delivered = true;
      r.body = std::move(run->output);
      return r;
    }
    const std::string& err = run->error_output;
    const std::string tail =
        err.empty() ? "" : ": " + err.substr(err.size() - std::min<size_t>(err.size(), 2000));
    r.error = "'" + command_[0] + "' " +
              (run->timed_out ? "timed out after " + std::to_string(timeout_s_) + " s"
                              : run->describe()) +
              tail;
    return r;
  }

 private:
  std::vector<std::string> command_;
  double timeout_s_;
};

// Why `path` cannot be executed ("" when it can): it must be a file the user may execute.
std::string not_executable(const std::filesystem::path& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    return path.string() + ": " + (ec ? ec.message() : "no such file");
  }
  if (std::filesystem::is_directory(st)) return path.string() + " is a directory";
  if (::access(path.c_str(), X_OK) != 0) return path.string() + " is not executable";
  return "";
}

// Whether `program` can be run as run_subprocess (execvp) would run it: a path with a '/' as it
// stands (read_command made a relative one absolute), a bare name from PATH. Checked when the
// campaign starts, before anything is written, so that a typo does not wait for the first
// exchange. The error names the campaign file, the field and the program.
Status check_program(const CampaignConfig& c, const std::string& field,
                     const std::string& program) {
  std::string why;
  if (program.find('/') != std::string::npos) {
    why = not_executable(program);
  } else {
    const char* env = std::getenv("PATH");
    const std::string path = env != nullptr ? env : "/bin:/usr/bin";
    why = "not found in PATH";
    for (size_t start = 0; start <= path.size();) {
      const size_t end = std::min(path.find(':', start), path.size());
      const std::string dir = end == start ? "." : path.substr(start, end - start);
      if (not_executable(std::filesystem::path(dir) / program).empty()) {
        why.clear();
        break;
      }
      start = end + 1;
    }
  }
  if (why.empty()) return Status::ok();
  return Status::invalid_argument(c.file.string() + ": field '" + field +
                                  "': expected an executable program, got " + toml_string(program) +
                                  " (" + why + ")");
}

// Agent `a`'s own command, else [exec].command; its program must exist and be executable.
Result<std::shared_ptr<AgentBackend>> transport(const CampaignConfig& c, const AgentConfig& a,
                                                std::shared_ptr<AgentBackend>&) {
  const ExecSection& e = section_of(c);
  const auto* own = dynamic_cast<const ExecAgentFields*>(a.fields.get());
  const std::vector<std::string>& command = own != nullptr ? own->command : e.command;
  if (command.empty()) {
    return Status::invalid_argument(c.file.string() + ": agent " + a.name +
                                    ": exec.command: expected the program and its arguments, "
                                    "got nothing");
  }
  std::string field = std::string(kSection) + ".command";
  if (own != nullptr) {
    const auto it = std::find_if(c.agents.begin(), c.agents.end(),
                                 [&a](const AgentConfig& x) { return x.name == a.name; });
    field = "agents[" + std::to_string(it - c.agents.begin()) + "].command";
  }
  if (auto s = check_program(c, field, command[0]); !s) return s;
  return std::shared_ptr<AgentBackend>(std::make_shared<ExecBackend>(command, e.timeout_s));
}

}  // namespace

extern const AgentBackendKind kExecBackend{
    .name = "exec",
    .format = &kExecExchange,
    .section = kSection,
    .needs_section = needs_section,
    .read_section = read_section,
    .agent_fields = kAgentFields,
    .read_agent = read_agent,
    .core_spec = core_spec,
    .transport = transport,
    .spawn = spawn_external_agent,
};

}  // namespace arc::actors
