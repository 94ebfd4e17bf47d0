#include "actors/external_agent_core.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace arc::actors {
namespace {

using json = nlohmann::json;

// Sources above this are refused: no kernel needs them, and they would bloat the log.
constexpr size_t kMaxSourceBytes = 256 * 1024;
// Faster siblings whose sources a plateau prompt shows.
constexpr size_t kMaxSiblings = 3;

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_define_value(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '+';
  });
}

struct Block {
  std::string info;  // the word after the opening fence, lowercased
  std::string text;
};

// Fenced blocks: a line starting with ``` opens one, the next line starting with ``` closes it.
std::vector<Block> fenced_blocks(const std::string& text) {
  std::vector<Block> out;
  size_t pos = 0;
  bool open = false;
  Block cur;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t lead = line.find_first_not_of(" \t");
    const bool fence = lead != std::string::npos && line.compare(lead, 3, "```") == 0;
    if (fence && !open) {
      open = true;
      cur = Block{};
      std::string info = line.substr(lead + 3);
      info.erase(0, info.find_first_not_of(" \t"));
      info = info.substr(0, info.find_first_of(" \t{"));
      for (char& c : info) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      cur.info = info;
    } else if (fence && open) {
      open = false;
      out.push_back(std::move(cur));
    } else if (open) {
      cur.text += line;
      cur.text += '\n';
    }
    pos = eol + 1;
  }
  return out;
}

// Builds and checks the candidate for `source` with an optional launch description.
ParsedReply make_candidate(std::string source, const json& launch, const problem::Problem& p,
                           const problem::Candidate& base) {
  ParsedReply r;
  if (source.find_first_not_of(" \t\r\n") == std::string::npos) {
    r.error = "the reply's code block is empty";
    return r;
  }
  if (source.size() > kMaxSourceBytes) {
    r.error = "the reply's source has " + std::to_string(source.size()) + " bytes; at most " +
              std::to_string(kMaxSourceBytes) + " are accepted";
    return r;
  }
  problem::Variant v;
  v.source = std::move(source);
  if (!launch.is_null()) {
    if (!launch.is_object()) {
      r.error = "the launch description is not a JSON object";
      return r;
    }
    for (const auto& [k, val] : launch.items()) {
      if (k == "family") {
        if (!val.is_string()) {
          r.error = "the launch description's 'family' is not a string";
          return r;
        }
        v.family = val.get<std::string>();
      } else if (k == "knobs") {
        if (!val.is_object()) {
          r.error = "the launch description's 'knobs' is not an object";
          return r;
        }
        for (const auto& [kn, kv] : val.items()) {
          std::string value = kv.is_string()           ? kv.get<std::string>()
                              : kv.is_number_integer() ? std::to_string(kv.get<int64_t>())
                                                       : "";
          if (!is_identifier(kn) || !is_define_value(value)) {
            r.error = "the launch description's knob '" + kn +
                      "' is not NAME = value (an "
                      "identifier and a number or word)";
            return r;
          }
          v.knobs[kn] = value;
        }
      } else {
        r.error = "the launch description has an unknown field '" + k +
                  "' (expected 'family' and 'knobs')";
        return r;
      }
    }
  }
  if (p.backend == "cuda") {
    // The launches come from a family: the one named, else the base's.
    if (v.family.empty()) {
      const problem::Family* bf = p.family(base.base.family);
      if (bf != nullptr && bf->library.empty()) v.family = bf->name;
    }
    if (v.family.empty()) {
      r.error = "the reply names no family for its launches (a ```json block with \"family\")";
      return r;
    }
  }
  if (!v.family.empty()) {
    const problem::Family* f = p.family(v.family);
    if (f == nullptr) {
      r.error =
          "the reply names family '" + v.family + "', which problem " + p.name + " does not have";
      return r;
    }
    if (!f->library.empty()) {
      r.error = "the reply names library family '" + v.family + "', which has no launches";
      return r;
    }
    for (const auto& [kn, kv] : v.knobs) {
      if (f->knob(kn) == nullptr) {
        r.error = "the reply sets knob '" + kn + "', which family " + f->name + " does not have";
        return r;
      }
    }
    for (const auto& l : f->launches) {
      if (v.source.find(l.kernel) == std::string::npos) {
        r.error = "the source defines no kernel '" + l.kernel + "', which family " + f->name +
                  " launches";
        return r;
      }
    }
  }
  if (p.backend != "cuda" && v.source.find("arc_kernel") == std::string::npos) {
    r.error = "the source defines no arc_kernel entry point";
    return r;
  }
  problem::Candidate c;
  c.base = std::move(v);
  r.candidate = std::move(c);
  return r;
}

}  // namespace

ParsedReply parse_reply_text(const std::string& text, const problem::Problem& problem,
                             const problem::Candidate& base) {
  ParsedReply r;
  const std::vector<Block> blocks = fenced_blocks(text);
  const Block* code = nullptr;
  const Block* launch = nullptr;
  for (const auto& b : blocks) {
    if (b.info == "json") {
      if (launch == nullptr) launch = &b;
    } else if (code == nullptr) {
      code = &b;
    }
  }
  if (code == nullptr) {
    r.error = "the reply has no fenced code block";
    return r;
  }
  json l;
  if (launch != nullptr) {
    l = json::parse(launch->text, nullptr, /*allow_exceptions=*/false);
    if (l.is_discarded()) {
      r.error = "the reply's ```json launch description is not valid JSON";
      return r;
    }
  }
  return make_candidate(code->text, l, problem, base);
}

ParsedReply parse_chat_response(const std::string& body, const problem::Problem& problem,
                                const problem::Candidate& base) {
  ParsedReply r;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    r.error = "the response body is not a JSON object";
    return r;
  }
  uint32_t in = 0, out = 0;
  if (j.contains("usage") && j["usage"].is_object()) {
    const json& u = j["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_unsigned()) {
      in = u["prompt_tokens"].get<uint32_t>();
    }
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_unsigned()) {
      out = u["completion_tokens"].get<uint32_t>();
    }
  }
  const json* content = nullptr;
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
    const json& c0 = j["choices"][0];
    if (c0.is_object() && c0.contains("message") && c0["message"].is_object() &&
        c0["message"].contains("content") && c0["message"]["content"].is_string()) {
      content = &c0["message"]["content"];
    }
  }
  if (content == nullptr) {
    r.error = "the response has no choices[0].message.content string";
  } else {
    r = parse_reply_text(content->get<std::string>(), problem, base);
    const json& c0 = j["choices"][0];
    if (!r.candidate && c0.contains("finish_reason") && c0["finish_reason"] == "length") {
      r.error += " (the reply was cut off at max_tokens: raise llm.max_tokens)";
    }
  }
  r.tokens_in = in;
  r.tokens_out = out;
  return r;
}

ParsedReply parse_exec_output(const std::string& out, const problem::Problem& problem,
                              const problem::Candidate& base) {
  const size_t first = out.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return ParsedReply{std::nullopt, "the command printed nothing"};
  if (out[first] == '{') {
    json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return ParsedReply{std::nullopt,
                         "the command's output starts with '{' but is not a JSON "
                         "object"};
    }
    if (j.contains("base")) {
      auto c = problem::Candidate::from_canonical(j.dump());
      if (!c) return ParsedReply{std::nullopt, "the command's candidate: " + c.status().message()};
      std::vector<const problem::Variant*> variants = {&c->base};
      for (const auto& [w, gv] : c->gates) {
        if (problem.workload(w) == nullptr) {
          return ParsedReply{std::nullopt, "the command's candidate gates workload '" + w +
                                               "', which problem " + problem.name +
                                               " does not have"};
        }
        variants.push_back(&gv);
      }
      for (const problem::Variant* v : variants) {
        if (!v->family.empty() && problem.family(v->family) == nullptr) {
          return ParsedReply{std::nullopt, "the command's candidate names family '" + v->family +
                                               "', which problem " + problem.name +
                                               " does not have"};
        }
      }
      ParsedReply r;
      r.candidate = std::move(c.value());
      return r;
    }
    if (!j.contains("source") || !j["source"].is_string()) {
      return ParsedReply{std::nullopt,
                         "the command's JSON has neither 'base' (a candidate) nor "
                         "a 'source' string"};
    }
    json launch = json::object();
    for (const auto& [k, v] : j.items()) {
      if (k != "source") launch[k] = v;
    }
    return make_candidate(j["source"].get<std::string>(), launch.empty() ? json() : launch, problem,
                          base);
  }
  if (out.find("```") != std::string::npos) return parse_reply_text(out, problem, base);
  return make_candidate(out, json(), problem, base);
}

ExternalAgentCore::ExternalAgentCore(ExternalSetup setup, const problem::Problem& problem,
                                     const std::vector<skills::Skill>& skills,
                                     const std::map<std::string, std::string>& family_sources)
    : setup_(std::move(setup)),
      problem_(&problem),
      skills_(&skills),
      family_sources_(&family_sources),
      draft_(setup_.agent.skill) {}

void ExternalAgentCore::apply(const events::Event& e) {
  const std::string& me = setup_.agent.name;
  switch (e.payload.type) {
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      if (p->agent == me) {
        proposed_.insert(p->candidate_hash);
        draft_.proposed();
      }
      break;
    }
    case fb::Payload::AgentExchange: {
      const auto* p = e.payload.AsAgentExchange();
      if (p->agent == me) failures_ = p->ok ? 0 : failures_ + 1;
      break;
    }
    default:
      break;
  }
  draft_.apply(e, me);
}

std::string ExternalAgentCore::source_of(const problem::Variant& v) const {
  std::string out;
  for (const auto& [k, val] : v.knobs) out += "#define " + k + " " + val + "\n";
  if (!v.source.empty()) return out + v.source;
  const problem::Family* f = problem_->family(v.family);
  if (f != nullptr && !f->library.empty()) {
    return out + "// library family " + f->name + " (" + f->library + "): " + f->description + "\n";
  }
  auto it = family_sources_->find(v.family);
  return out + (it == family_sources_->end() ? "// (source unavailable)\n" : it->second);
}

// The first eligible skill not used yet (name order), else the next eligible one after the
// current skill; never an opt-in skill (skills/skill.h).
std::string ExternalAgentCore::next_skill() const {
  std::vector<std::string> eligible;
  for (const auto& s : *skills_) {
    if (!s.opt_in && s.eligible_for(problem_->kernel_type)) eligible.push_back(s.name);
  }
  for (const auto& s : eligible) {
    if (!draft_.used(s)) return s;
  }
  auto it = std::find(eligible.begin(), eligible.end(), draft_.skill);
  if (it == eligible.end() || eligible.size() < 2) return "";
  ++it;
  return it == eligible.end() ? eligible.front() : *it;
}

Prepared ExternalAgentCore::prepare(const CampaignView& view, const Recall& recall) const {
  Prepared out;
  const std::string& me = setup_.agent.name;
  if (failures_ >= setup_.max_failures) {
    out.idle_reason = std::to_string(failures_) + " consecutive failed exchanges (" +
                      setup_.backend + ".max_failures)";
    return out;
  }
  const Incumbent* mine = view.incumbent(me);
  if (mine == nullptr) {
    out.idle_reason = "no incumbent yet (baseline not decided)";
    return out;
  }
  ExchangeRequest req;
  req.skill = draft_.skill;
  req.parent = mine->hash;
  req.base = mine->candidate;
  req.view_seq = view.last_seq();
  double base_score = mine->score;

  // Plateau: draft the next skill, adopt the fastest faster sibling, show faster siblings.
  std::vector<std::pair<std::string, const Incumbent*>> faster;
  if (draft_.pending) {
    for (const auto& [agent, sib] : view.incumbents()) {
      if (agent != me && sib.score > mine->score) faster.emplace_back(agent, &sib);
    }
    std::stable_sort(faster.begin(), faster.end(), [](const auto& a, const auto& b) {
      return a.second->score > b.second->score;
    });
    if (faster.size() > kMaxSiblings) faster.resize(kMaxSiblings);
    if (setup_.agent.drafting) {
      if (std::string to = next_skill(); !to.empty() && to != draft_.skill) {
        fb::StrategyDraftedT d;
        d.agent = me;
        d.from_skill = draft_.skill;
        d.to_skill = to;
        d.reason = "plateau: no KEEP in the last window";
        req.drafted = std::move(d);
        req.skill = to;
      }
      if (setup_.agent.sibling_inspection && !faster.empty()) {
        const auto& [agent, sib] = faster.front();
        fb::SiblingInspectedT s;
        s.agent = me;
        s.sibling = agent;
        s.sibling_incumbent = sib->hash;
        s.sibling_score = sib->score;
        s.adopted = true;
        req.inspected = std::move(s);
        req.parent = sib->hash;
        req.base = sib->candidate;
        base_score = sib->score;
      }
    }
  }

  const problem::Problem& p = *problem_;
  const skills::Skill* skill = nullptr;
  for (const auto& s : *skills_) {
    if (s.name == req.skill) skill = &s;
  }

  json ctx;
  ctx["agent"] = me;
  ctx["skill"] = {{"name", req.skill},
                  {"description", skill ? skill->description : ""},
                  {"guidance", skill ? skill->guidance : ""}};
  json tensors_in = json::array(), tensors_out = json::array();
  for (const auto& t : p.inputs) {
    tensors_in.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
  }
  for (const auto& t : p.outputs) {
    json o = {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}};
    if (!t.alias.empty()) o["alias"] = t.alias;
    tensors_out.push_back(o);
  }
  json workloads = json::array();
  for (const auto& w : p.workloads) {
    json axes = json::object();
    for (const auto& [a, v] : w.axes) axes[a] = v;
    workloads.push_back({{"name", w.name}, {"axes", axes}});
  }
  json families = json::array();
  for (const auto& f : p.families) {
    json fj = {{"name", f.name}, {"description", f.description}};
    json knobs = json::array();
    for (const auto& k : f.knobs) {
      knobs.push_back({{"name", k.name}, {"values", k.values}, {"default", k.default_value}});
    }
    fj["knobs"] = knobs;
    if (!f.library.empty()) fj["library"] = f.library;
    json launches = json::array();
    for (const auto& l : f.launches) {
      launches.push_back(
          {{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block}, {"shared", l.shared}});
    }
    if (!launches.empty()) fj["launches"] = launches;
    families.push_back(fj);
  }
  ctx["problem"] = {{"name", p.name},
                    {"kernel_type", p.kernel_type},
                    {"backend", p.backend},
                    {"description", p.description},
                    {"axes", p.axes},
                    {"inputs", tensors_in},
                    {"outputs", tensors_out},
                    {"workloads", workloads},
                    {"tolerance",
                     {{"atol", p.tolerance.atol},
                      {"rtol", p.tolerance.rtol},
                      {"matched_ratio", p.tolerance.matched_ratio}}},
                    {"cost", {{"flops", p.cost.flops}, {"bytes", p.cost.bytes}}},
                    {"families", families},
                    {"device", setup_.device}};

  auto evaluation = [&view](const std::string& hash) {
    json ev = json::array();
    const CandidateRecord* r = view.find(hash);
    if (r == nullptr) return ev;
    for (size_t i = 0; i < r->workloads.size() && i < view.workload_names().size(); ++i) {
      ev.push_back({{"workload", view.workload_names()[i]},
                    {"ok", r->workloads[i].ok},
                    {"median_ns", r->workloads[i].median_ns}});
    }
    return ev;
  };
  ctx["incumbent"] = {{"hash", req.parent},
                      {"score", base_score},
                      {"candidate", json::parse(req.base.canonical())},
                      {"source", source_of(req.base.base)},
                      {"evaluation", evaluation(req.parent)}};
  if (const CandidateRecord* b = view.baseline(); b != nullptr) {
    ctx["baseline_evaluation"] = evaluation(b->hash);
  }
  json wins = json::array(), traps = json::array();
  for (const auto& w : recall.wins) wins.push_back({{"move", w.move}, {"speedup", w.speedup}});
  for (const auto& t : recall.traps) traps.push_back({{"move", t.move}, {"why", t.why}});
  ctx["recall"] = {{"wins", wins}, {"traps", traps}};
  json sibs = json::array();
  for (const auto& [agent, sib] : faster) {
    sibs.push_back({{"agent", agent},
                    {"score", sib->score},
                    {"hash", sib->hash},
                    {"source", source_of(sib->candidate.base)}});
  }
  ctx["plateau"] = draft_.pending;
  ctx["siblings"] = sibs;
  ctx["reply_format"] =
      p.backend == "cuda"
          ? "One fenced code block (```cuda) with the complete CUDA source, defining the "
            "extern \"C\" __global__ kernels of the family whose launches it follows; then a "
            "```json block {\"family\": \"NAME\", \"knobs\": {\"KNOB\": \"VALUE\"}} naming that "
            "family and the knob values its launch expressions use."
          : "One fenced code block (```cpp) with the complete C++ source defining arc_kernel; "
            "optionally a ```json block {\"knobs\": {\"NAME\": \"VALUE\"}} of defines.";
  req.context = ctx.dump();

  std::vector<PromptInput::Sibling> siblings;
  for (const auto& [agent, sib] : faster) {
    siblings.push_back({agent, sib->score, source_of(sib->candidate.base)});
  }
  req.prompt = format().prompt(PromptInput{setup_, p, skill, req.skill, ctx, base_score,
                                           source_of(req.base.base), recall, std::move(siblings)});
  out.request = std::move(req);
  return out;
}

Proposal ExternalAgentCore::conclude(const ExchangeRequest& req, const ExchangeReply& reply) const {
  Proposal out;
  fb::AgentExchangeT x;
  x.agent = setup_.agent.name;
  x.backend = setup_.backend;
  x.model = setup_.model;
  x.prompt_ref = reply.prompt_ref;
  x.response_ref = reply.response_ref;
  x.latency_ms = reply.latency_ms;
  x.attempts = reply.attempts;
  x.view_seq = req.view_seq;
  if (!reply.delivered) {
    x.ok = false;
    x.error = reply.error;
    out.exchange = std::move(x);
    out.idle_reason = "exchange failed";
    return out;
  }
  ParsedReply parsed = format().parse(reply.body, *problem_, req.base);
  x.tokens_in = parsed.tokens_in;
  x.tokens_out = parsed.tokens_out;
  std::string hash;
  if (parsed.candidate) {
    hash = parsed.candidate->hash();
    if (hash == req.parent) {
      parsed.error = "the reply repeats its base candidate " + problem::short_hash(hash);
    } else if (proposed_.count(hash) != 0) {
      parsed.error = "the reply repeats candidate " + problem::short_hash(hash) +
                     ", which this agent proposed before";
    }
  } else if (parsed.error.empty()) {
    parsed.error = "the reply gave no candidate";
  }
  if (!parsed.error.empty()) {
    x.ok = false;
    x.error = parsed.error;
    out.exchange = std::move(x);
    out.idle_reason = "exchange failed";
    return out;
  }
  x.ok = true;
  x.candidate_hash = hash;
  out.exchange = std::move(x);
  out.drafted = req.drafted;
  out.inspected = req.inspected;
  fb::CandidateProposedT c;
  c.candidate_hash = hash;
  c.agent = setup_.agent.name;
  c.parent = req.parent;
  c.skill = req.skill;
  // The move names what was proposed: "llm:source:<sha256/12>{knobs}" for free source,
  // "exec:fused{VEC=8}" for a family variant (plus the number of gates, if any).
  c.move = setup_.backend + ":" + parsed.candidate->base.key();
  if (!parsed.candidate->gates.empty()) {
    c.move += "+" + std::to_string(parsed.candidate->gates.size()) + "_gates";
  }
  c.view_seq = req.view_seq;
  c.canonical = parsed.candidate->canonical();
  out.proposed = std::move(c);
  return out;
}

}  // namespace arc::actors
