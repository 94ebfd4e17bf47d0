// The llm backend's exchanges: an OpenAI-compatible chat-completions request body (system:
// role, judging and the skill's guidance; user: the problem, the incumbent, what the campaign
// learned and, after a plateau, faster siblings' sources), and its response read by
// parse_chat_response().
#include <cstdio>

#include <nlohmann/json.hpp>

#include "actors/exchange_format.h"
#include "actors/external_agent_core.h"

namespace arc::actors {
namespace {

using json = nlohmann::json;

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string host_abi_text() {
  return "Host ABI: define `extern \"C\" int arc_kernel(const arc_host_args* a)` after "
         "`#include \"eval/host_abi.h\"`. arc_host_args has `const float* const* inputs; int32_t "
         "n_inputs; float* const* outputs; int32_t n_outputs; const int64_t* axes; int32_t "
         "n_axes;` Tensors are dense row-major float32 in the order listed below; axes[] holds "
         "the workload's axis values in the order listed. Return 0 on success.";
}

std::string chat_request(const PromptInput& in) {
  const problem::Problem& p = in.problem;
  std::string system =
      "You are a GPU and CPU performance engineer improving one kernel of the KernelArc "
      "problem below. A deterministic guard compiles your code, checks it against a "
      "high-precision reference on fresh random inputs and times it; only a correct and "
      "faster implementation is kept.\n\nStrategy (skill " +
      in.skill_name + "):\n" + (in.skill != nullptr ? in.skill->guidance : std::string()) +
      "\n\nReply format: " + in.context["reply_format"].get<std::string>();
  std::string user;
  user += "# Problem " + p.name + " (" + p.kernel_type + ", backend " + p.backend + ")\n" +
          p.description + "\nDevice: " + in.setup.device + "\nAxes: ";
  for (const auto& a : p.axes) user += a + " ";
  user += "\nInputs:";
  for (const auto& t : p.inputs) {
    user += " " + t.name + " " + t.dtype + "[";
    for (size_t i = 0; i < t.shape.size(); ++i) user += (i ? "," : "") + t.shape[i];
    user += "]";
  }
  user += "\nOutputs:";
  for (const auto& t : p.outputs) {
    user += " " + t.name + " " + t.dtype + "[";
    for (size_t i = 0; i < t.shape.size(); ++i) user += (i ? "," : "") + t.shape[i];
    user += "]" + (t.alias.empty() ? "" : " (in place over " + t.alias + ")");
  }
  user += "\nWorkloads:";
  for (const auto& w : p.workloads) {
    user += " " + w.name + " {";
    bool first = true;
    for (const auto& [a, v] : w.axes) {
      user += (first ? "" : ", ") + a + "=" + std::to_string(v);
      first = false;
    }
    user += "}";
  }
  user += "\nTolerance: |out - ref| <= " + fmt_double(p.tolerance.atol) + " + " +
          fmt_double(p.tolerance.rtol) + " * |ref| for a fraction " +
          fmt_double(p.tolerance.matched_ratio) +
          " of elements\nCost model: flops = " + p.cost.flops + ", bytes = " + p.cost.bytes + "\n";
  if (p.backend != "cuda") user += host_abi_text() + "\n";
  if (p.backend == "cuda") {
    user +=
        "Families and their launches (your source replaces a family's source and keeps "
        "its launches):\n";
    for (const auto& f : p.families) {
      if (!f.library.empty()) continue;
      user += "- " + f.name + ":";
      for (const auto& l : f.launches) {
        user += " " + l.kernel + "<<<(";
        for (size_t i = 0; i < l.grid.size(); ++i) user += (i ? ", " : "") + l.grid[i];
        user += "), (";
        for (size_t i = 0; i < l.block.size(); ++i) user += (i ? ", " : "") + l.block[i];
        user += "), " + l.shared + ">>>";
      }
      user += "; knobs:";
      for (const auto& k : f.knobs) user += " " + k.name;
      user += "\n";
    }
  }
  user += "\n# Incumbent (score " + fmt_double(in.base_score) + "x over the baseline)\n```\n" +
          in.base_source + "\n```\nEvaluation:";
  for (const auto& w : in.context["incumbent"]["evaluation"]) {
    user += " " + w["workload"].get<std::string>() + " " +
            (w["ok"].get<bool>() ? fmt_double(w["median_ns"].get<double>()) + " ns" : "FAILED");
  }
  user += "\n";
  if (!in.recall.wins.empty() || !in.recall.traps.empty()) {
    user += "\n# What the campaign learned\n";
    for (const auto& w : in.recall.wins) {
      user += "- win: " + w.move + " (" + fmt_double(w.speedup) + "x)\n";
    }
    for (const auto& t : in.recall.traps) user += "- trap: " + t.move + " (" + t.why + ")\n";
  }
  for (const auto& sib : in.siblings) {
    user += "\n# Faster sibling " + sib.agent + " (score " + fmt_double(sib.score) + "x)\n```\n" +
            sib.source + "\n```\n";
  }
  user += "\nWrite a faster correct implementation.";
  json body = {{"model", in.setup.model},
               {"messages", json::array({{{"role", "system"}, {"content", system}},
                                         {{"role", "user"}, {"content", user}}})},
               {"temperature", in.setup.temperature},
               {"max_tokens", in.setup.max_tokens}};
  return body.dump();
}

// The messages of a chat-completions request body, or the text itself when it is not one.
std::string prompt_text(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return body;
  if (!j.contains("messages") || !j["messages"].is_array()) return j.dump(2);
  std::string out;
  for (const auto& m : j["messages"]) {
    if (!m.is_object()) continue;
    out += "--- " +
           (m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>()
                                                        : std::string("?")) +
           "\n";
    if (m.contains("content") && m["content"].is_string()) out += m["content"].get<std::string>();
    out += "\n";
  }
  return out;
}

// The model's message of a chat-completions response, or the text itself.
std::string reply_text(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_object() && j.contains("choices") && j["choices"].is_array() &&
      !j["choices"].empty() && j["choices"][0].is_object() && j["choices"][0].contains("message") &&
      j["choices"][0]["message"].is_object() && j["choices"][0]["message"].contains("content") &&
      j["choices"][0]["message"]["content"].is_string()) {
    return j["choices"][0]["message"]["content"].get<std::string>();
  }
  return body;
}

}  // namespace

extern const ExchangeFormat kLlmExchange{chat_request, parse_chat_response, prompt_text,
                                         reply_text};

}  // namespace arc::actors
