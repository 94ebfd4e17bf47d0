// Every registered agent backend's campaign section and per-agent fields, through the generic
// campaign reader and writer: canonical text round-trips, a section is checked even when no agent
// uses it, and a field one backend owns is an error on another backend's agent.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_config.h"

namespace arc::actors {
namespace {

namespace fs = std::filesystem;

// A backend's section and agent fields in canonical form (as campaign_text writes them), and a
// section with one bad value.
struct Sample {
  std::string section;
  std::string agent_fields;
  std::string bad_section;
  std::string bad_field;  // as errors name it
};

// One entry per backend with a section; a backend added without one fails RegistryIsCovered.
const std::map<std::string, Sample>& samples() {
  static const std::map<std::string, Sample> kSamples = {
      {"llm",
       {"base_url = \"https://example.test/v1\"\nmodel = \"m\"\napi_key_env = \"KEY_VAR\"\n"
        "api_key = \"k\\\"1\"\ntemperature = 0.7\nmax_tokens = 99\ntimeout_s = 12.5\nretries = 0\n"
        "backoff_s = 0.25\nconcurrency = 1\nmax_failures = 2\n",
        "model = \"other\"\n", "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemperature = 3\n",
        "llm.temperature"}},
      {"exec",
       {"command = [\"/opt/agent\", \"--fast\"]\ntimeout_s = 7.5\nmax_failures = 3\n",
        "command = [\"tool\", \"-v\"]\n", "command = [\"/opt/agent\"]\ntimeout_s = 0\n",
        "exec.timeout_s"}},
  };
  return kSamples;
}

class BackendSectionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("arc-backends-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "skills" / "tiling");
    std::ofstream(dir_ / "skills" / "tiling" / "skill.toml") << "name = \"tiling\"\n";
    std::ofstream(dir_ / "problem.toml") << "name = \"p\"\n";
    file_ = dir_ / "campaign.toml";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string head() {
    return "[campaign]\nname = \"c\"\nproblem = \"problem.toml\"\nskills = \"skills\"\n";
  }
  static std::string agent(const std::string& name, const std::string& backend,
                           const std::string& fields = "") {
    return "\n[[agents]]\nname = \"" + name + "\"\nskill = \"tiling\"\nbackend = \"" + backend +
           "\"\n" + fields;
  }
  // Parses `text` and returns the error message ("" when it parsed).
  std::string error_of(const std::string& text) const {
    auto r = parse_campaign(text, file_);
    return r.ok() ? "" : r.status().message();
  }

  fs::path dir_, file_;
};

TEST_F(BackendSectionsTest, RegistryIsCovered) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section != nullptr) {
      EXPECT_EQ(samples().count(k->name), 1u) << k->name;
    }
  }
}

TEST_F(BackendSectionsTest, SectionsAndAgentFieldsRoundTrip) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section == nullptr || samples().count(k->name) == 0) continue;
    SCOPED_TRACE(k->name);
    const Sample& s = samples().at(k->name);
    const std::string section = "\n[" + std::string(k->section) + "]\n" + s.section;
    const std::string shared = agent("a", k->name), own = agent("b", k->name, s.agent_fields);
    auto first = parse_campaign(head() + section + shared + own, file_);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    const std::string text = campaign_text(*first);
    // Canonical in, the same out: every value survives, in its section and on its agent.
    EXPECT_NE(text.find(section), std::string::npos) << text;
    EXPECT_NE(text.find(shared), std::string::npos) << text;
    EXPECT_NE(text.find(own), std::string::npos) << text;
    auto again = parse_campaign(text, file_);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(campaign_text(*again), text);
    const CoreSettings a = core_settings(*first), b = core_settings(*again);
    ASSERT_EQ(a.agents.size(), b.agents.size());
    for (size_t i = 0; i < a.agents.size(); ++i) {
      EXPECT_EQ(a.agents[i].format, b.agents[i].format);
      EXPECT_EQ(a.agents[i].model, b.agents[i].model);
      EXPECT_EQ(a.agents[i].temperature, b.agents[i].temperature);
      EXPECT_EQ(a.agents[i].max_tokens, b.agents[i].max_tokens);
      EXPECT_EQ(a.agents[i].max_failures, b.agents[i].max_failures);
    }
  }
}

TEST_F(BackendSectionsTest, UnusedSectionIsCheckedAndKept) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section == nullptr || samples().count(k->name) == 0) continue;
    SCOPED_TRACE(k->name);
    const Sample& s = samples().at(k->name);
    const std::string name = k->section;
    const std::string builtin = agent("t", "builtin");
    std::string msg = error_of(head() + "\n[" + name + "]\n" + s.bad_section + builtin);
    EXPECT_NE(msg.find(file_.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + s.bad_field + "'"), std::string::npos) << msg;
    msg = error_of(head() + "\n[" + name + "]\n" + s.section + "colour = 1\n" + builtin);
    EXPECT_NE(msg.find(file_.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + name + ".colour': unknown field"), std::string::npos) << msg;
    msg = error_of(name + " = 1\n" + head() + builtin);
    EXPECT_NE(msg.find("'" + name + "': expected a table"), std::string::npos) << msg;
    // A valid unused section is kept, and round-trips.
    auto ok = parse_campaign(head() + "\n[" + name + "]\n" + s.section + builtin, file_);
    ASSERT_TRUE(ok.ok()) << ok.status().to_string();
    const std::string text = campaign_text(*ok);
    EXPECT_NE(text.find("\n[" + name + "]\n" + s.section), std::string::npos) << text;
    auto again = parse_campaign(text, file_);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(campaign_text(*again), text);
  }
}

TEST_F(BackendSectionsTest, SectionIsRequiredWhenAnAgentNeedsIt) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    if (k->section == nullptr) continue;
    SCOPED_TRACE(k->name);
    AgentConfig plain;
    plain.backend = k->name;
    if (k->needs_section != nullptr && !k->needs_section(plain)) continue;
    const std::string msg = error_of(head() + agent("a", k->name));
    EXPECT_NE(msg.find(file_.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + std::string(k->section) + "': expected a table"), std::string::npos)
        << msg;
  }
}

TEST_F(BackendSectionsTest, AFieldIsAnErrorOnAnotherBackendsAgent) {
  for (const AgentBackendKind* k : agent_backend_kinds()) {
    for (const AgentField& f : k->agent_fields) {
      SCOPED_TRACE(f.key);
      const std::string msg =
          error_of(head() + agent("t", "builtin", std::string(f.key) + " = 1\n"));
      EXPECT_NE(msg.find(file_.string()), std::string::npos) << msg;
      EXPECT_NE(msg.find("'agents[0]." + std::string(f.key) + "': expected " + f.expected),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("on backend \"builtin\""), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace arc::actors
