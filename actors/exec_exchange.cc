// The exec backend's exchanges: the context JSON itself on the command's stdin, and its
// stdout read by parse_exec_output().
#include <nlohmann/json.hpp>

#include "actors/exchange_format.h"
#include "actors/external_agent_core.h"

namespace arc::actors {
namespace {

std::string context_json(const PromptInput& in) { return in.context.dump(); }

// An exec context as indented JSON.
std::string pretty(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return text;
  return j.dump(2);
}

std::string as_is(const std::string& text) { return text; }

}  // namespace

extern const ExchangeFormat kExecExchange{context_json, parse_exec_output, pretty, as_is};

}  // namespace arc::actors
