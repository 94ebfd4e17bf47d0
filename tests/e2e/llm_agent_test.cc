// llm and exec agents end to end: a real HTTP server on loopback, inside the test, speaks the
// chat-completions protocol with scripted replies (good code, wrong code, no code, slow, HTTP
// 429 and 500) to a campaign that mixes builtin and llm agents on the host softmax problem; an
// exec agent is a small shell script. The logs must verify without any model call, resume must
// never repeat a logged exchange, and arc-replay show must print the conversation.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <rocksdb/db.h>
#include <sys/wait.h>

#include "actors/campaign_runner.h"
#include "eval/evaluators.h"
#include "replay/conversation.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"
#include "replay/verifier.h"
#include "storage/journal.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path scratch(const std::string& name) { return testing::scratch_path("llm", name); }

const fs::path kSoftmax = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/problem.toml";

// Softmax storing exp once: correct, and faster than the naive seed (one exp per element).
std::string good_source(const std::string& note) {
  return "// " + note + R"(
#include <cmath>
#include <cstdint>
#include "eval/host_abi.h"
extern "C" int arc_kernel(const arc_host_args* a) {
  const int64_t rows = a->axes[0], cols = a->axes[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a->inputs[0] + r * cols;
    float* y = a->outputs[0] + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = x[c] > m ? x[c] : m;
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) { y[c] = std::exp(x[c] - m); s += y[c]; }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) y[c] *= inv;
  }
  return 0;
}
)";
}

// Compiles and runs, but forgets to normalize: fails the correctness check.
std::string wrong_source() {
  return R"(#include <cmath>
#include <cstdint>
#include "eval/host_abi.h"
extern "C" int arc_kernel(const arc_host_args* a) {
  const int64_t n = a->axes[0] * a->axes[1];
  for (int64_t i = 0; i < n; ++i) a->outputs[0][i] = std::exp(a->inputs[0][i]);
  return 0;
}
)";
}

// One scripted answer per request, in order; past the script, a reply with no code.
struct Answer {
  int status = 200;
  std::string content;  // the assistant message (status 200)
  int delay_ms = 0;
};

Answer good(const std::string& note) {
  return {200, "Here:\n```cpp\n" + good_source(note) + "```\n"};
}
Answer wrong() { return {200, "```cpp\n" + wrong_source() + "```"}; }
Answer no_code() { return {200, "I would unroll the loop, but I will not write code."}; }
Answer http(int status) { return {status, ""}; }
Answer slow(const std::string& note) { return {200, "```cpp\n" + good_source(note) + "```", 4500}; }

// A chat-completions server on 127.0.0.1 (an ephemeral port), answering from a script.
class ScriptedModel {
 public:
  explicit ScriptedModel(std::deque<Answer> script) : script_(std::move(script)) {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                httplib::Response& res) {
      Answer a = next(req.body, req.get_header_value("Authorization"));
      if (a.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.delay_ms));
      if (a.status != 200) {
        res.status = a.status;
        res.set_content("{\"error\": {\"message\": \"scripted " + std::to_string(a.status) + "\"}}",
                        "application/json");
        return;
      }
      json body = json::parse(req.body);
      json out = {
          {"id", "chatcmpl-test"},
          {"object", "chat.completion"},
          {"model", body["model"]},
          {"choices", json::array({{{"index", 0},
                                    {"message", {{"role", "assistant"}, {"content", a.content}}},
                                    {"finish_reason", "stop"}}})},
          {"usage",
           {{"prompt_tokens", req.body.size() / 4},
            {"completion_tokens", a.content.size() / 4},
            {"total_tokens", (req.body.size() + a.content.size()) / 4}}}};
      res.set_content(out.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedModel() {
    server_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  size_t requests() {
    std::lock_guard<std::mutex> l(mu_);
    return bodies_.size();
  }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> l(mu_);
    return bodies_;
  }

 private:
  Answer next(const std::string& body, const std::string& auth) {
    std::lock_guard<std::mutex> l(mu_);
    bodies_.push_back(body);
    auth_.push_back(auth);
    if (script_.empty()) return no_code();
    Answer a = script_.front();
    script_.pop_front();
    return a;
  }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::deque<Answer> script_;
  std::vector<std::string> bodies_;
  std::vector<std::string> auth_;

 public:
  std::vector<std::string> auth() {
    std::lock_guard<std::mutex> l(mu_);
    return auth_;
  }
};

std::string cheap_evaluation() {
  return "[evaluation]\nrounds = 2\nwarmup = 1\nrepetitions = 5\nbuffer_sets = 1\n"
         "flush_cache = false\ntimeout_s = 20\n";
}

int cli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(ARC_BINARY_DIR) + "/tools/" + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return WEXITSTATUS(pclose(p));
}

struct Ran {
  fs::path run_dir;
  std::vector<events::Event> log;
  replay::CampaignSummary summary;
};

Ran run(const fs::path& campaign, const std::string& name) {
  auto config = actors::load_campaign(campaign);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  actors::RunOptions o;
  o.run_dir = scratch(name);
  eval::EvaluatorChoice choice;
  o.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  auto prepared = actors::prepare_campaign(std::move(config.value()), o);
  EXPECT_TRUE(prepared.ok()) << prepared.status().to_string();
  auto r = actors::run_campaign(std::move(prepared.value()), o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  auto log = replay::read_run(o.run_dir);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  Ran out{o.run_dir, log.value(), replay::summarize(log.value())};
  EXPECT_TRUE(replay::write_run_outputs(o.run_dir, out.summary).is_ok());
  return out;
}

std::vector<const fb::AgentExchangeT*> exchanges(const std::vector<events::Event>& log,
                                                 const std::string& agent) {
  std::vector<const fb::AgentExchangeT*> out;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::AgentExchange &&
        e.payload.AsAgentExchange()->agent == agent) {
      out.push_back(e.payload.AsAgentExchange());
    }
  }
  return out;
}

const fb::DecisionT* decision_of(const std::vector<events::Event>& log, const std::string& hash) {
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::Decision && e.payload.AsDecision()->candidate_hash == hash) {
      return e.payload.AsDecision();
    }
  }
  return nullptr;
}

std::string artifact(const fs::path& run_dir, const std::string& hash) {
  auto j = replay::open_run_log(run_dir);
  EXPECT_TRUE(j.ok());
  auto b = j.value()->get_artifact(hash);
  EXPECT_TRUE(b.ok()) << hash;
  return b.ok() ? b.value() : "";
}

fs::path llm_campaign(const std::string& name, const std::string& base_url, uint32_t budget,
                      const std::string& mode, const std::string& agent_extra = "") {
  std::string text = "[campaign]\nname = \"" + name + "\"\nproblem = \"" + kSoftmax.string() +
                     "\"\nseed = 5\nbudget = " + std::to_string(budget) + "\nmode = \"" + mode +
                     "\"\nglobal_plateau = 0\n" + cheap_evaluation() + "[llm]\nbase_url = \"" +
                     base_url +
                     "\"\nmodel = \"scripted-1\"\napi_key_env = \"ARC_TEST_LLM_KEY\"\n"
                     "temperature = 0.0\nmax_tokens = 2048\ntimeout_s = 2\nretries = 1\n"
                     "backoff_s = 0.05\nconcurrency = 1\nmax_failures = 3\n"
                     "[[agents]]\nname = \"vectorizer\"\nskill = \"vectorize\"\n"
                     "[[agents]]\nname = \"model\"\nskill = \"fusion\"\nbackend = \"llm\"\n" +
                     agent_extra;
  fs::path file = scratch(name + ".toml");
  std::ofstream(file) << text;
  return file;
}

TEST(LlmAgent, ScriptedServerDrivesAMixedCampaignThatVerifiesWithoutTheModel) {
  ::setenv("ARC_TEST_LLM_KEY", "sk-local-test", 1);
  ScriptedModel model({good("first"), http(429), wrong(), no_code(), slow("late"), good("second"),
                       http(500), http(500)});
  Ran r = run(llm_campaign("llm-mixed", model.base_url(), 14, "lockstep"), "llm-mixed");
  ASSERT_TRUE(r.summary.stopped) << r.summary.stop_reason;

  auto x = exchanges(r.log, "model");
  // good; 429 then wrong; no code; slow (timed out) then good; 500, 500; no code x2 -> stops.
  ASSERT_EQ(x.size(), 7u);
  EXPECT_TRUE(x[0]->ok);
  EXPECT_EQ(x[0]->attempts, 1u);
  EXPECT_TRUE(x[1]->ok);
  EXPECT_EQ(x[1]->attempts, 2u);  // the 429 was retried
  EXPECT_FALSE(x[2]->ok);
  EXPECT_NE(x[2]->error.find("no fenced code block"), std::string::npos) << x[2]->error;
  EXPECT_FALSE(x[2]->response_ref.empty());  // the reply is kept even though it had no code
  EXPECT_TRUE(x[3]->ok);
  EXPECT_EQ(x[3]->attempts, 2u);  // the slow answer timed out and was retried
  EXPECT_FALSE(x[4]->ok);
  EXPECT_NE(x[4]->error.find("HTTP 500"), std::string::npos) << x[4]->error;
  EXPECT_EQ(x[4]->attempts, 2u);
  EXPECT_TRUE(x[4]->response_ref.empty());
  EXPECT_FALSE(x[5]->ok);
  EXPECT_FALSE(x[6]->ok);
  // The key from the environment went to the server, and nowhere into the log.
  for (const auto& a : model.auth()) EXPECT_EQ(a, "Bearer sk-local-test");
  for (const auto& e : r.log) {
    EXPECT_EQ(events::encode(e).find("sk-local-test"), std::string::npos) << e.seq;
  }
  for (const auto* e : x) {
    EXPECT_EQ(artifact(r.run_dir, e->prompt_ref).find("sk-local-test"), std::string::npos);
  }
  // Three consecutive failures (max_failures = 3): the agent asked nothing more.
  EXPECT_EQ(model.requests(), 1u + 2u + 1u + 2u + 2u + 1u + 1u);
  for (const auto* e : x) {
    EXPECT_EQ(e->model, "scripted-1");
    EXPECT_GT(e->latency_ms, 0.0);
    EXPECT_FALSE(e->prompt_ref.empty());
    if (!e->response_ref.empty()) {
      EXPECT_GT(e->tokens_in, 0u);
      EXPECT_GT(e->tokens_out, 0u);
    }
  }

  // The good reply passed every check and was timed (how fast it measured against the seed, and
  // so whether the guard kept it, depends on the load of the machine and is not asserted); the
  // wrong one was rejected for its results.
  const fb::DecisionT* d0 = decision_of(r.log, x[0]->candidate_hash);
  ASSERT_NE(d0, nullptr);
  EXPECT_NE(d0->verdict, fb::Verdict::REJECT) << d0->reason;
  EXPECT_GT(d0->score, 0.0);
  const fb::DecisionT* d1 = decision_of(r.log, x[1]->candidate_hash);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d1->verdict, fb::Verdict::REJECT);
  EXPECT_NE(d1->reason.find("WRONG_RESULT"), std::string::npos) << d1->reason;

  // The prompts: skill guidance, the problem, the incumbent's source; after the KEEP, the
  // incumbent is the model's own first answer.
  const std::string p0 = artifact(r.run_dir, x[0]->prompt_ref);
  EXPECT_EQ(p0, model.bodies()[0]);
  json b0 = json::parse(p0);
  EXPECT_EQ(b0["model"], "scripted-1");
  EXPECT_EQ(b0["max_tokens"], 2048);
  const std::string sys0 = b0["messages"][0]["content"];
  const std::string user0 = b0["messages"][1]["content"];
  EXPECT_NE(sys0.find("# Skill: fusion"), std::string::npos);
  EXPECT_NE(user0.find("softmax"), std::string::npos);
  EXPECT_NE(user0.find("Softmax, the obvious way"), std::string::npos);  // the seed's source
  EXPECT_NE(user0.find("Tolerance: |out - ref| <= 1e-06 + 0.0001 * |ref|"), std::string::npos)
      << user0;
  const std::string user1 =
      json::parse(artifact(r.run_dir, x[1]->prompt_ref))["messages"][1]["content"];
  EXPECT_NE(user1.find(d0->verdict == fb::Verdict::KEEP ? "// first" : "Softmax, the obvious way"),
            std::string::npos);

  // Builtin agents ran alongside.
  size_t builtin = 0;
  for (const auto& e : r.log) {
    if (e.payload.type == fb::Payload::CandidateProposed &&
        e.payload.AsCandidateProposed()->agent == "vectorizer") {
      ++builtin;
    }
  }
  EXPECT_GT(builtin, 3u);

  // The summary counts the exchanges and their tokens.
  uint64_t tokens_in = 0;
  for (const auto* e : x) tokens_in += e->tokens_in;
  bool summarized = false;
  for (const auto& a : r.summary.agents) {
    if (a.name != "model") continue;
    summarized = true;
    EXPECT_EQ(a.exchanges, 7u);
    EXPECT_EQ(a.failed_exchanges, 4u);
    EXPECT_EQ(a.tokens_in, tokens_in);
  }
  EXPECT_TRUE(summarized);
  EXPECT_NE(replay::report_markdown(r.summary).find("## Model and command exchanges"),
            std::string::npos);

  // Verification re-derives every exchange from the logged replies, without the model.
  const size_t before = model.requests();
  auto v = replay::verify_run(r.run_dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
  EXPECT_EQ(v.exchanges, 7u);
  EXPECT_EQ(model.requests(), before);

  // The conversation: prompts, replies and outcomes.
  auto j = replay::open_run_log(r.run_dir);
  ASSERT_TRUE(j.ok());
  const storage::Journal* jr = j.value().get();
  const std::string conv =
      replay::conversation_text(r.log, [jr](const std::string& h) { return jr->get_artifact(h); });
  EXPECT_NE(conv.find("--- system"), std::string::npos);
  EXPECT_NE(conv.find("I would unroll the loop"), std::string::npos);
  EXPECT_NE(conv.find("failed: the reply has no fenced code block"), std::string::npos);
  EXPECT_NE(conv.find("<<< no reply"), std::string::npos);
  EXPECT_NE(conv.find("=> candidate " + x[0]->candidate_hash.substr(0, 12)), std::string::npos);

  // The same through the command line; a host run has no CUDA kernel to export.
  std::string out;
  EXPECT_EQ(cli("arc-replay show " + r.run_dir.string() + " --conversation --agent model", &out),
            0);
  EXPECT_NE(out.find("--- user"), std::string::npos) << out.substr(0, 400);
  std::string verified;
  EXPECT_EQ(cli("arc-replay verify " + r.run_dir.string(), &verified), 0) << verified;
  EXPECT_NE(verified.find("7 exchanges re-derived"), std::string::npos) << verified;
  std::string exported;
  EXPECT_EQ(cli("arcd export " + r.run_dir.string() + " --format cuda", &exported), 2);
  EXPECT_NE(exported.find("expected a CUDA problem"), std::string::npos) << exported;
  EXPECT_EQ(model.requests(), before);
}

TEST(LlmAgent, TamperedReplyIsADivergence) {
  ScriptedModel model({good("only")});
  Ran r = run(llm_campaign("llm-tamper", model.base_url(), 3, "async", "model = \"override-7\"\n"),
              "llm-tamper");
  auto x = exchanges(r.log, "model");
  ASSERT_GE(x.size(), 1u);
  ASSERT_TRUE(x[0]->ok);
  // The agent's own model overrides [llm].model, in the request and in the log.
  EXPECT_EQ(x[0]->model, "override-7");
  EXPECT_EQ(json::parse(model.bodies()[0])["model"], "override-7");
  auto v = replay::verify_run(r.run_dir);
  ASSERT_TRUE(v.ok) << v.message;
  // The same log with the first reply swapped for a reply without code.
  std::vector<events::Event> log = r.log;
  uint64_t seq = 0;
  for (const auto& e : log) {
    if (e.payload.type == fb::Payload::AgentExchange) {
      seq = e.seq;
      break;
    }
  }
  auto lookup = [&r, &x](const std::string& h) -> Result<std::string> {
    if (h == x[0]->response_ref) {
      return std::string(R"({"choices":[{"message":{"role":"assistant","content":"no"}}]})");
    }
    return artifact(r.run_dir, h);
  };
  auto bad = replay::verify_events(log, lookup);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.divergence_seq, seq);
  EXPECT_NE(bad.message.find("no fenced code block"), std::string::npos) << bad.message;
}

// Copies the first `keep` events and every artifact they refer to into a new run directory.
void copy_prefix(const Ran& from, const fs::path& to, uint64_t keep) {
  auto src = replay::open_run_log(from.run_dir);
  ASSERT_TRUE(src.ok());
  fs::create_directories(to);
  auto dst = storage::Journal::open((to / "log").string(), {});
  ASSERT_TRUE(dst.ok()) << dst.status().to_string();
  ASSERT_TRUE(dst.value()->set_campaign(src.value()->campaign()).is_ok());
  std::vector<events::Event> prefix(from.log.begin(), from.log.begin() + static_cast<long>(keep));
  // Every artifact, as a run killed there leaves them: the exchanges' prompts and replies, and
  // the run's inputs (actors/run_inputs.h).
  std::unique_ptr<rocksdb::Iterator> it(src.value()->raw_db_for_testing()->NewIterator(
      rocksdb::ReadOptions(), src.value()->artifacts_cf_for_testing()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ASSERT_TRUE(dst.value()->put_artifact(it->value().ToString()).ok());
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_TRUE(dst.value()->append_all(prefix).ok());
}

TEST(LlmAgent, ResumeNeverRepeatsALoggedExchange) {
  ScriptedModel model({good("a"), good("b"), good("c"), good("d"), good("e"), good("f")});
  Ran r = run(llm_campaign("llm-resume", model.base_url(), 8, "lockstep"), "llm-resume");
  auto x = exchanges(r.log, "model");
  ASSERT_GE(x.size(), 3u);
  // Cut the log right after the second exchange and its proposal, before the decision.
  uint64_t cut = 0;
  int seen = 0;
  for (const auto& e : r.log) {
    if (e.payload.type == fb::Payload::CandidateProposed &&
        e.payload.AsCandidateProposed()->agent == "model" && ++seen == 2) {
      cut = e.seq;
      break;
    }
  }
  ASSERT_GT(cut, 0u);
  const fs::path dir = scratch("llm-resume-cut");
  copy_prefix(r, dir, cut);
  const size_t before = model.requests();

  auto rec = replay::reconstruct(*r.log.front().payload.AsCampaignStarted());
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  actors::RunOptions o;
  o.run_dir = dir;
  o.resume = true;
  eval::EvaluatorChoice choice;
  o.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  actors::PreparedCampaign prepared{std::move(rec->config), std::move(rec->problem),
                                    std::move(rec->skills)};
  auto res = actors::run_campaign(std::move(prepared), o);
  ASSERT_TRUE(res.ok()) << res.status().to_string();
  auto log = replay::read_run(dir);
  ASSERT_TRUE(log.ok());
  // Every request the resumed run made is an exchange it logged after the cut.
  uint32_t attempts_after = 0;
  for (const auto& e : log.value()) {
    if (e.seq > cut && e.payload.type == fb::Payload::AgentExchange) {
      attempts_after += e.payload.AsAgentExchange()->attempts;
    }
  }
  EXPECT_EQ(model.requests() - before, attempts_after);
  // The cut proposal was decided on resume, from the logged exchange.
  const auto* cut_proposal = log.value()[cut - 1].payload.AsCandidateProposed();
  ASSERT_NE(cut_proposal, nullptr);
  EXPECT_NE(decision_of(log.value(), cut_proposal->candidate_hash), nullptr);
  auto v = replay::verify_run(dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
}

// An exec agent: a shell script that reads the context and answers by call count: a good
// source (bare, without fences), then a failing exit, then output without an entry point,
// then good sources again.
TEST(ExecAgent, ScriptAnswersAreCandidatesOrRecordedFailures) {
  const fs::path dir = scratch("exec-agent");
  fs::create_directories(dir);
  const fs::path script = dir / "agent.sh";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\n"
         "# context JSON on stdin; a candidate on stdout\n"
         "ctx=$(cat)\n"
         "case \"$ctx\" in *'\"problem\"'*) ;; *) echo 'no context' >&2; exit 9;; esac\n"
         "n=$(cat \"$1\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \"$1\"\n"
         "if [ $n -eq 2 ]; then echo 'model server unreachable' >&2; exit 3; fi\n"
         "if [ $n -eq 3 ]; then echo 'int main() { return 0; }'; exit 0; fi\n"
         "cat <<EOF\n"
      << good_source("exec call $n") << "EOF\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  std::string text = "[campaign]\nname = \"exec\"\nproblem = \"" + kSoftmax.string() +
                     "\"\nseed = 2\nbudget = 6\nmode = \"async\"\nglobal_plateau = 0\n" +
                     cheap_evaluation() +
                     "[exec]\ntimeout_s = 30\nmax_failures = 4\n"
                     "[[agents]]\nname = \"script\"\nskill = \"fusion\"\nbackend = \"exec\"\n"
                     "command = [\"./agent.sh\", \"" +
                     (dir / "count").string() + "\"]\n";
  const fs::path campaign = dir / "campaign.toml";
  std::ofstream(campaign) << text;
  Ran r = run(campaign, "exec-run");
  auto x = exchanges(r.log, "script");
  ASSERT_GE(x.size(), 4u);
  EXPECT_TRUE(x[0]->ok);
  EXPECT_EQ(x[0]->backend, "exec");
  EXPECT_FALSE(x[1]->ok);
  EXPECT_NE(x[1]->error.find("exited with status 3"), std::string::npos) << x[1]->error;
  EXPECT_NE(x[1]->error.find("model server unreachable"), std::string::npos) << x[1]->error;
  EXPECT_FALSE(x[2]->ok);
  EXPECT_NE(x[2]->error.find("no arc_kernel"), std::string::npos) << x[2]->error;
  EXPECT_TRUE(x[3]->ok);
  const fb::DecisionT* d0 = decision_of(r.log, x[0]->candidate_hash);
  ASSERT_NE(d0, nullptr);
  EXPECT_NE(d0->verdict, fb::Verdict::REJECT) << d0->reason;
  EXPECT_GT(d0->score, 1.0);
  // The script saw the context JSON: the prompt artifact is that JSON.
  json ctx = json::parse(artifact(r.run_dir, x[0]->prompt_ref));
  EXPECT_EQ(ctx["problem"]["name"], "softmax");
  EXPECT_EQ(ctx["skill"]["name"], "fusion");
  EXPECT_FALSE(ctx["incumbent"]["source"].get<std::string>().empty());
  auto v = replay::verify_run(r.run_dir);
  EXPECT_TRUE(v.ok) << "divergence at seq " << v.divergence_seq << ": " << v.message;
  EXPECT_EQ(v.exchanges, x.size());
}

TEST(LlmAgent, BadBackendFieldsNameTheFieldAndWriteNothing) {
  const std::string head = "[campaign]\nname = \"bad\"\nproblem = \"" + kSoftmax.string() +
                           "\"\n[[agents]]\nname = \"m\"\nskill = \"fusion\"\nbackend = \"llm\"\n";
  struct Case {
    std::string extra, field;
  } cases[] = {
      {"", "'llm'"},
      {"[llm]\nbase_url = \"ftp://x\"\nmodel = \"m\"\n", "'llm.base_url'"},
      {"[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\n", "'llm.model'"},
      {"[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\ntemperature = 3.0\n",
       "'llm.temperature'"},
      {"[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nconcurrency = 0\n",
       "'llm.concurrency'"},
      {"[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nretries = \"3\"\n",
       "'llm.retries'"},
      {"[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\ncolour = 1\n", "'llm.colour'"},
  };
  for (const auto& c : cases) {
    auto cfg = actors::parse_campaign(head + c.extra, "/tmp/bad-campaign.toml");
    ASSERT_FALSE(cfg.ok()) << c.extra;
    EXPECT_NE(cfg.status().message().find("/tmp/bad-campaign.toml"), std::string::npos);
    EXPECT_NE(cfg.status().message().find(c.field), std::string::npos)
        << c.field << " in " << cfg.status().message();
  }
  auto exec = actors::parse_campaign(
      "[campaign]\nname = \"bad\"\nproblem = \"" + kSoftmax.string() +
          "\"\n[exec]\ncommand = []\n[[agents]]\nname = \"m\"\nskill = \"fusion\"\n"
          "backend = \"exec\"\n",
      "/tmp/bad-campaign.toml");
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.status().message().find("'exec.command'"), std::string::npos)
      << exec.status().message();
  struct AgentCase {
    std::string agent, field;
  } agent_cases[] = {
      {"backend = \"builtin\"\nmodel = \"m\"\n", "'agents[0].model'"},
      {"backend = \"llm\"\nmodel = \"\"\n", "'agents[0].model'"},
      {"backend = \"exec\"\ncommand = \"./x.sh\"\n", "'agents[0].command'"},
      {"backend = \"builtin\"\ncommand = [\"./x.sh\"]\n", "'agents[0].command'"},
      {"backend = \"exec\"\ncommand = [\"./x.sh\", 3]\n", "'agents[0].command'"},
  };
  for (const auto& c : agent_cases) {
    auto cfg = actors::parse_campaign(
        "[campaign]\nname = \"bad\"\nproblem = \"" + kSoftmax.string() +
            "\"\n[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n"
            "[[agents]]\nname = \"a\"\nskill = \"fusion\"\n" +
            c.agent,
        "/tmp/bad-campaign.toml");
    ASSERT_FALSE(cfg.ok()) << c.agent;
    EXPECT_NE(cfg.status().message().find(c.field), std::string::npos)
        << c.field << " in " << cfg.status().message();
  }
  // An exec agent with its own command needs no [exec]; its relative program is resolved
  // against the campaign file, and the whole round-trips.
  auto own = actors::parse_campaign(
      "[campaign]\nname = \"own\"\nproblem = \"" + kSoftmax.string() +
          "\"\n[[agents]]\nname = \"a\"\nskill = \"fusion\"\nbackend = \"exec\"\n"
          "command = [\"./bin/agent\", \"-v\"]\n",
      "/tmp/campaigns/own.toml");
  ASSERT_TRUE(own.ok()) << own.status().to_string();
  const std::string own_text = actors::campaign_text(own.value());
  EXPECT_NE(own_text.find("command = [\"/tmp/campaigns/bin/agent\", \"-v\"]"), std::string::npos)
      << own_text;
  auto own_again = actors::parse_campaign(own_text, "/tmp/x/own.toml");
  ASSERT_TRUE(own_again.ok()) << own_again.status().to_string();
  EXPECT_EQ(actors::campaign_text(own_again.value()), own_text);

  auto backend = actors::parse_campaign(
      "[campaign]\nname = \"bad\"\nproblem = \"" + kSoftmax.string() +
          "\"\n[[agents]]\nname = \"m\"\nskill = \"fusion\"\nbackend = \"gpt\"\n",
      "/tmp/bad-campaign.toml");
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("'agents[0].backend'"), std::string::npos);
  // A valid llm campaign round-trips through campaign_text.
  auto ok = actors::parse_campaign(
      head + "[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nretries = 0\n",
      "/tmp/ok-campaign.toml");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  const std::string ok_text = actors::campaign_text(ok.value());
  for (const char* line : {"\n[llm]\nbase_url = \"http://127.0.0.1:1/v1\"\n", "\nretries = 0\n",
                           "\nmax_tokens = 4096\n"}) {
    EXPECT_NE(ok_text.find(line), std::string::npos) << line << " in " << ok_text;
  }
  auto again = actors::parse_campaign(ok_text, "/tmp/ok-campaign.toml");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(actors::campaign_text(again.value()), ok_text);
}

}  // namespace
}  // namespace arc
