#pragma once
// The event codec. An Event is the object-API form of an arc.fb.Envelope. On disk and between
// processes an event is a frame: 4 bytes little-endian masked CRC32C of the envelope bytes,
// then the FlatBuffers envelope bytes (file identifier "ARCE"). Every decode checks the CRC,
// then runs the FlatBuffers verifier with bounded depth, table count and size, then checks
// that the payload type is one this build knows.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "events/events_generated.h"

namespace arc::events {

using Event = fb::EnvelopeT;

// Bounds applied by the verifier.
inline constexpr size_t kMaxEnvelopeBytes = 64u << 20;  // 64 MiB
inline constexpr uint32_t kMaxDepth = 16;
inline constexpr uint32_t kMaxTables = 1u << 20;

// CRC32C (Castagnoli) of data, continuing from `crc` (0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
// LevelDB-style masking so that CRCs of data containing CRCs stay well distributed.
uint32_t mask_crc(uint32_t crc);
uint32_t unmask_crc(uint32_t masked);

// FlatBuffers bytes of an envelope.
std::string encode(const Event& e);
// CRC + envelope bytes.
std::string frame(std::string_view envelope_bytes);
inline std::string encode_frame(const Event& e) { return frame(encode(e)); }
// As encode_frame(), but reuses the caller's builder and output string so that a hot loop
// (the journal's append) allocates nothing once they have grown. `out` is replaced.
void encode_frame_into(const Event& e, flatbuffers::FlatBufferBuilder& fbb, std::string& out);

// Verifies a frame and returns a pointer to the envelope inside it (zero copy; valid while
// `framed` lives). Corruption status names what failed (CRC, verifier, unknown payload).
// FlatBuffers reads scalars in place, so for accesses free of undefined behaviour the
// envelope (framed.data() + 4) should be 8-byte aligned; verification itself copies a
// misaligned envelope first, and decode_frame()/decode_envelope() accept any alignment.
Result<const fb::Envelope*> verify_frame(std::string_view framed);
// Verifies a frame and unpacks it.
Result<Event> decode_frame(std::string_view framed);
// Verifies bare envelope bytes (no CRC) and unpacks them.
Result<Event> decode_envelope(std::string_view envelope_bytes);

// Name of the payload type, e.g. "CandidateProposed".
const char* payload_name(fb::Payload type);

// Builds an event with the given payload (seq, campaign, wall time are set by the journal).
template <class PayloadT>
Event make_event(std::string actor, PayloadT payload) {
  Event e;
  e.actor = std::move(actor);
  e.payload.Set(std::move(payload));
  return e;
}

}  // namespace arc::events
