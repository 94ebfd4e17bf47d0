// libFuzzer: campaign.toml parsing on arbitrary text; errors are values, never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/campaign_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = arc::actors::parse_campaign(text, "/tmp/arc-fuzz/campaign.toml");
  if (c.ok()) {
    // What parses must print back to text that parses to the same agents and budget.
    auto again = arc::actors::parse_campaign(arc::actors::campaign_text(c.value()),
                                             "/tmp/arc-fuzz/campaign.toml");
    if (!again || again->budget != c->budget || again->agents.size() != c->agents.size()) {
      __builtin_trap();
    }
  } else if (c.status().message().empty()) {
    __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
