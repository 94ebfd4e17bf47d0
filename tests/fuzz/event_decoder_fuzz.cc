// libFuzzer: the event decoder on arbitrary bytes. A frame that verifies must print, and its
// re-encoding must decode and re-encode to the same bytes (bytes, not ==: NaN != NaN).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "events/codec.h"
#include "events/printer.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (auto decoded : {arc::events::decode_frame(bytes), arc::events::decode_envelope(bytes)}) {
    if (!decoded) continue;
    (void)arc::events::to_text(decoded.value());
    (void)arc::events::dump_json(arc::events::to_json(decoded.value()));
    const std::string frame = arc::events::encode_frame(decoded.value());
    auto again = arc::events::decode_frame(frame);
    if (!again || arc::events::encode_frame(again.value()) != frame) __builtin_trap();
  }
  return 0;
}
