// ExternalAgentCore and the reply readers: pure functions of the view and the reply text.
#include "actors/external_agent_core.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cores/fixtures.h"

namespace arc::actors {
namespace {

using json = nlohmann::json;
using testing::evaluation;
using testing::proposal;

// A CUDA-like problem: a launched family, a library family.
problem::Problem cuda_problem() {
  problem::Problem p = testing::toy_problem();
  p.backend = "cuda";
  p.families[0].launches = {{"alpha_main", {"n"}, {"TILE_M"}, "0"}};
  p.families[1].launches = {{"beta_pass1", {"n"}, {"128"}, "0"},
                            {"beta_pass2", {"1"}, {"32"}, "0"}};
  problem::Family lib;
  lib.name = "lib";
  lib.library = "cublaslt";
  p.families.push_back(lib);
  return p;
}

TEST(ReplyParsing, CudaReplyKeepsTheNamedFamilysLaunches) {
  const problem::Problem p = cuda_problem();
  const std::string reply =
      "Try this:\n```cuda\nARC_KERNEL beta_pass1(arc_args a) {}\nARC_KERNEL beta_pass2(arc_args "
      "a) {}\n```\nand\n```json\n{\"family\": \"beta\", \"knobs\": {\"UNROLL\": 4}}\n```\n";
  ParsedReply r = parse_reply_text(reply, p, p.seed);
  ASSERT_TRUE(r.candidate) << r.error;
  EXPECT_EQ(r.candidate->base.family, "beta");
  EXPECT_EQ(r.candidate->base.knobs.at("UNROLL"), "4");
  EXPECT_NE(r.candidate->base.source.find("beta_pass2"), std::string::npos);
  EXPECT_TRUE(r.candidate->gates.empty());

  // Without a launch description the base's family is used: its kernel must be defined.
  ParsedReply missing = parse_reply_text(reply.substr(0, reply.find("and")), p, p.seed);
  EXPECT_FALSE(missing.candidate);
  EXPECT_NE(missing.error.find("no kernel 'alpha_main'"), std::string::npos) << missing.error;

  struct Bad {
    std::string launch, error;
  } cases[] = {
      {R"({"family": "gamma"})", "does not have"},
      {R"({"family": "lib"})", "library family"},
      {R"({"family": "beta", "knobs": {"TILE_Q": "2"}})", "knob 'TILE_Q'"},
      {R"({"family": "beta", "knobs": {"UNROLL": "4; rm -rf"}})", "NAME = value"},
      {R"({"family": "beta", "grid": [1]})", "unknown field 'grid'"},
      {R"({"family": )", "not valid JSON"},
  };
  for (const auto& c : cases) {
    ParsedReply b = parse_reply_text(
        "```cuda\nARC_KERNEL beta_pass1(){} beta_pass2\n```\n```json\n" + c.launch + "\n```", p,
        p.seed);
    EXPECT_FALSE(b.candidate) << c.launch;
    EXPECT_NE(b.error.find(c.error), std::string::npos) << c.launch << ": " << b.error;
  }
}

TEST(ReplyParsing, HostRepliesNeedAnEntryPointAndACodeBlock) {
  const problem::Problem p = testing::toy_problem();
  EXPECT_NE(parse_reply_text("just prose", p, p.seed).error.find("no fenced code block"),
            std::string::npos);
  EXPECT_NE(parse_reply_text("```cpp\n   \n```", p, p.seed).error.find("empty"), std::string::npos);
  EXPECT_NE(parse_reply_text("```cpp\nint main() {}\n```", p, p.seed).error.find("arc_kernel"),
            std::string::npos);
  ParsedReply ok = parse_reply_text(
      "```json\n{\"knobs\": {\"VEC\": \"4\"}}\n```\n```c++\nextern \"C\" int arc_kernel() {}\n```",
      p, p.seed);
  ASSERT_TRUE(ok.candidate) << ok.error;
  EXPECT_EQ(ok.candidate->base.knobs.at("VEC"), "4");
  EXPECT_EQ(ok.candidate->base.source, "extern \"C\" int arc_kernel() {}\n");
  const std::string big = "```cpp\narc_kernel" + std::string(300 * 1024, ' ') + "x\n```";
  EXPECT_NE(parse_reply_text(big, p, p.seed).error.find("at most"), std::string::npos);
}

TEST(ReplyParsing, ChatResponsesAndExecOutputs) {
  const problem::Problem p = testing::toy_problem();
  json body = {
      {"choices",
       json::array(
           {{{"message", {{"role", "assistant"}, {"content", "```cpp\nint arc_kernel;\n```"}}}}})},
      {"usage", {{"prompt_tokens", 120}, {"completion_tokens", 30}}}};
  ParsedReply r = parse_chat_response(body.dump(), p, p.seed);
  ASSERT_TRUE(r.candidate) << r.error;
  EXPECT_EQ(r.tokens_in, 120u);
  EXPECT_EQ(r.tokens_out, 30u);
  json cut = {{"choices", json::array({{{"message", {{"content", "```cpp\nint arc_ker"}}},
                                        {"finish_reason", "length"}}})}};
  EXPECT_NE(parse_chat_response(cut.dump(), p, p.seed).error.find("raise llm.max_tokens"),
            std::string::npos);
  ParsedReply none = parse_chat_response(R"({"choices": []})", p, p.seed);
  EXPECT_NE(none.error.find("choices[0].message.content"), std::string::npos);
  EXPECT_NE(parse_chat_response("<html>", p, p.seed).error.find("not a JSON object"),
            std::string::npos);

  // exec: a family candidate with a gate, free source as JSON, fenced text, bare source.
  ParsedReply fam = parse_exec_output(
      R"({"base": {"family": "beta", "knobs": {"UNROLL": "2"}}, "gates": {"small": {"family": "alpha"}}})",
      p, p.seed);
  ASSERT_TRUE(fam.candidate) << fam.error;
  EXPECT_EQ(fam.candidate->base.family, "beta");
  EXPECT_EQ(fam.candidate->gates.at("small").family, "alpha");
  EXPECT_NE(parse_exec_output(R"({"base": {"family": "zeta"}})", p, p.seed).error.find("'zeta'"),
            std::string::npos);
  EXPECT_NE(parse_exec_output(
                R"({"base": {"family": "beta"}, "gates": {"huge": {"family": "beta"}}})", p, p.seed)
                .error.find("'huge'"),
            std::string::npos);
  ParsedReply src =
      parse_exec_output(R"({"source": "int arc_kernel;", "knobs": {"VEC": "2"}})", p, p.seed);
  ASSERT_TRUE(src.candidate) << src.error;
  EXPECT_EQ(src.candidate->base.knobs.at("VEC"), "2");
  EXPECT_TRUE(parse_exec_output("```cpp\nint arc_kernel;\n```", p, p.seed).candidate);
  EXPECT_TRUE(parse_exec_output("int arc_kernel;\n", p, p.seed).candidate);
  EXPECT_NE(parse_exec_output("\n\n", p, p.seed).error.find("printed nothing"), std::string::npos);
  EXPECT_NE(parse_exec_output("{oops", p, p.seed).error.find("not a JSON object"),
            std::string::npos);
}

class ExternalAgentCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = testing::toy_problem();
    skills_ = testing::toy_skills();
    sources_ = {{"alpha", "// alpha source\nint arc_kernel;\n"}, {"beta", "// beta source\n"}};
    view_ = CampaignView({"small", "large"});
    testing::open_campaign(log_, problem_, {"m", "b"},
                           [this](const events::Event& e) { apply(e); });
    ExternalSetup s;
    s.agent = AgentSetup{"m", 0, "tiling", 7, true, true, nullptr};
    s.model = "test-model";
    s.max_failures = 2;
    s.device = "host: test";
    core_ = std::make_unique<ExternalAgentCore>(s, problem_, skills_, sources_);
  }
  void apply(const events::Event& e) {
    view_.apply(e);
    memory_.apply(e);
    if (core_) core_->apply(e);
  }
  ExchangeReply reply(const std::string& content) {
    ExchangeReply r;
    r.delivered = true;
    r.body = json({{"choices", json::array({{{"message", {{"content", content}}}}})}}).dump();
    r.prompt_ref = "p";
    r.response_ref = "r";
    return r;
  }

  problem::Problem problem_;
  std::vector<skills::Skill> skills_;
  std::map<std::string, std::string> sources_;
  CampaignView view_;
  MemoryCore memory_;
  testing::LogBuilder log_;
  std::unique_ptr<ExternalAgentCore> core_;
};

TEST_F(ExternalAgentCoreTest, PromptIsAPureFunctionOfTheView) {
  Prepared a = core_->prepare(view_, memory_.recall("softmax"));
  Prepared b = core_->prepare(view_, memory_.recall("softmax"));
  ASSERT_TRUE(a.request);
  EXPECT_EQ(a.request->prompt, b.request->prompt);
  EXPECT_EQ(a.request->view_seq, view_.last_seq());
  json body = json::parse(a.request->prompt);
  EXPECT_EQ(body["model"], "test-model");
  const std::string user = body["messages"][1]["content"];
  EXPECT_NE(user.find("// alpha source"), std::string::npos);         // the incumbent's source
  EXPECT_NE(user.find("#define TILE_M"), std::string::npos) << user;  // ... with its knobs
  EXPECT_NE(user.find("small 1000 ns"), std::string::npos) << user;   // ... and evaluation
  json ctx = json::parse(a.request->context);
  EXPECT_EQ(ctx["skill"]["name"], "tiling");
  EXPECT_EQ(ctx["problem"]["device"], "host: test");
}

TEST_F(ExternalAgentCoreTest, CudaPromptsListEveryFamilysLaunches) {
  const problem::Problem cuda = cuda_problem();
  ExternalSetup s;
  s.agent = AgentSetup{"m", 0, "tiling", 7, true, true, nullptr};
  s.device = "cuda: NVIDIA H200";
  ExternalAgentCore core(s, cuda, skills_, sources_);
  Prepared pr = core.prepare(view_, memory_.recall("softmax"));
  ASSERT_TRUE(pr.request);
  const std::string user = json::parse(pr.request->prompt)["messages"][1]["content"];
  EXPECT_NE(user.find("- alpha: alpha_main<<<(n), (TILE_M), 0>>>; knobs: TILE_M VEC"),
            std::string::npos)
      << user;
  EXPECT_NE(user.find("beta_pass1<<<(n), (128), 0>>> beta_pass2<<<(1), (32), 0>>>"),
            std::string::npos);
  EXPECT_EQ(user.find("- lib:"), std::string::npos);  // a library family has no launches
  EXPECT_EQ(user.find("Host ABI"), std::string::npos);
  const std::string sys = json::parse(pr.request->prompt)["messages"][0]["content"];
  EXPECT_NE(sys.find("```json block {\"family\""), std::string::npos) << sys;
}

TEST_F(ExternalAgentCoreTest, RepliesGiveProposalsOrRecordedFailuresUntilItGivesUp) {
  Prepared pr = core_->prepare(view_, memory_.recall("softmax"));
  ASSERT_TRUE(pr.request);
  Proposal ok = core_->conclude(*pr.request, reply("```cpp\nint arc_kernel = 1;\n```"));
  ASSERT_TRUE(ok.exchange);
  EXPECT_TRUE(ok.exchange->ok);
  ASSERT_TRUE(ok.proposed);
  EXPECT_EQ(ok.exchange->candidate_hash, ok.proposed->candidate_hash);
  EXPECT_EQ(ok.proposed->parent, pr.request->parent);
  EXPECT_EQ(ok.proposed->move.rfind("llm:source:", 0), 0u);
  apply(log_.add("m", *ok.exchange));
  apply(log_.add("m", *ok.proposed));

  // The same candidate again: a failure, not a second proposal.
  Prepared again = core_->prepare(view_, memory_.recall("softmax"));
  Proposal dup = core_->conclude(*again.request, reply("```cpp\nint arc_kernel = 1;\n```"));
  EXPECT_FALSE(dup.proposed);
  EXPECT_NE(dup.exchange->error.find("proposed before"), std::string::npos);
  apply(log_.add("m", *dup.exchange));
  ExchangeReply lost;
  lost.error = "HTTP 503";
  Proposal down = core_->conclude(*core_->prepare(view_, memory_.recall("softmax")).request, lost);
  EXPECT_FALSE(down.exchange->ok);
  EXPECT_EQ(down.exchange->error, "HTTP 503");
  apply(log_.add("m", *down.exchange));
  // Two consecutive failures (max_failures = 2): nothing more to ask.
  Prepared idle = core_->prepare(view_, memory_.recall("softmax"));
  EXPECT_FALSE(idle.request);
  EXPECT_NE(idle.idle_reason.find("consecutive failed exchanges"), std::string::npos);
}

TEST_F(ExternalAgentCoreTest, PlateauDraftsAdoptsAndShowsFasterSiblings) {
  problem::Candidate fast = problem_.seed;
  fast.base.knobs["VEC"] = "4";
  auto fp = proposal("b", fast, "knob:VEC=4", view_.last_seq());
  apply(log_.add("b", fp));
  apply(log_.add(kGuardActor, evaluation(fp.candidate_hash, {300, 2600})));
  fb::DecisionT d;
  d.agent = "b";
  d.candidate_hash = fp.candidate_hash;
  d.verdict = fb::Verdict::KEEP;
  d.score = 3.0;
  apply(log_.add(kGuardActor, d));
  fb::PlateauDetectedT pl;
  pl.agent = "m";
  pl.scope = fb::PlateauScope::AGENT;
  apply(log_.add("plateau", pl));
  Prepared pr = core_->prepare(view_, memory_.recall("softmax"));
  ASSERT_TRUE(pr.request);
  ASSERT_TRUE(pr.request->drafted);
  EXPECT_EQ(pr.request->drafted->from_skill, "tiling");
  EXPECT_EQ(pr.request->skill, pr.request->drafted->to_skill);
  ASSERT_TRUE(pr.request->inspected);
  EXPECT_EQ(pr.request->inspected->sibling, "b");
  EXPECT_EQ(pr.request->parent, fp.candidate_hash);
  const std::string user = json::parse(pr.request->prompt)["messages"][1]["content"];
  EXPECT_NE(user.find("# Faster sibling b (score 3x)"), std::string::npos) << user;
  EXPECT_NE(user.find("#define VEC 4"), std::string::npos);
  Proposal p = core_->conclude(*pr.request, reply("```cpp\nint arc_kernel = 2;\n```"));
  ASSERT_TRUE(p.proposed);
  EXPECT_TRUE(p.drafted);
  EXPECT_TRUE(p.inspected);
  EXPECT_EQ(p.proposed->skill, pr.request->drafted->to_skill);
  // A failed exchange logs no draft: the next attempt drafts again.
  Proposal f = core_->conclude(*pr.request, reply("no code"));
  EXPECT_FALSE(f.proposed);
  EXPECT_FALSE(f.drafted);
}

}  // namespace
}  // namespace arc::actors
