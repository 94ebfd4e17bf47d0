// The exec agent backend (docs/agents.md, "Pointing arcd at a command"): its [exec] section, an
// agent's own `command`, and its transport. Per exchange it runs the command once (through
// eval::run_subprocess, no shell) with the prompt (the context JSON, actors/exec_exchange.cc) on
// stdin; stdout is the reply. A non-zero exit, a signal or the timeout fails the exchange, the
// error carrying the end of stderr.
#include <algorithm>
#include <chrono>

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
  r.get(t, "timeout_s", e->timeout_s, false, "a positive number of seconds");
  r.get(t, "max_failures", e->max_failures, false, "a positive integer");
  if (r.failed()) return nullptr;
  if (t.table->get("command") == nullptr) {
    if (required) r.fail(t.field("command"), kCommandExpected, "nothing");
  } else {
    read_command(r, t, e->command, kCommandExpected);
  }
  if (!r.failed() && !(e->timeout_s > 0)) {
    r.fail(t.field("timeout_s"), "a positive number of seconds", std::to_string(e->timeout_s));
  }
  if (!r.failed() && e->max_failures == 0) {
    r.fail(t.field("max_failures"), "a positive integer", "0");
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

// Agent `a`'s own command, else [exec].command.
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
