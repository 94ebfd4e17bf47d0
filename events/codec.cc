// The event codec: envelope <-> FlatBuffers bytes <-> CRC frame, with every decode verified.
#include "events/codec.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace arc::events {
namespace {

constexpr size_t kCrcBytes = 4;
// FlatBuffers places every scalar at an offset aligned to its size relative to the buffer's
// start; the widest scalars in events.fbs are 8 bytes.
constexpr uintptr_t kEnvelopeAlign = 8;

inline uint32_t load_le32(const char* p) {
  uint8_t b[4];
  std::memcpy(b, p, 4);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

inline void store_le32(char* p, uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  std::memcpy(p, b, 4);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}

// Calls f(pointer to 8-aligned copy-or-original of bytes). Reading FlatBuffers in place at a
// misaligned address is undefined behaviour (and trips UBSan), so misaligned input is copied.
template <class F>
auto with_aligned(std::string_view bytes, F&& f) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kEnvelopeAlign == 0) {
    return f(reinterpret_cast<const uint8_t*>(bytes.data()));
  }
  std::vector<uint64_t> scratch((bytes.size() + 7) / 8);
  std::memcpy(scratch.data(), bytes.data(), bytes.size());
  return f(reinterpret_cast<const uint8_t*>(scratch.data()));
}

// Verifies envelope bytes at an 8-aligned address.
Status verify_aligned(const uint8_t* data, size_t n) {
  // Below 8 bytes there is no room for the root offset and the identifier.
  if (n < 8) {
    return Status::corruption("flatbuffers verifier failed: envelope of " + std::to_string(n) +
                              " bytes is too short");
  }
  if (!fb::EnvelopeBufferHasIdentifier(data)) {
    return Status::corruption("flatbuffers verifier failed: file identifier is not \"ARCE\"");
  }
  flatbuffers::Verifier::Options opts;
  opts.max_depth = kMaxDepth;
  opts.max_tables = kMaxTables;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(data, n, opts);
  if (!fb::VerifyEnvelopeBuffer(verifier)) {
    return Status::corruption("flatbuffers verifier failed on an envelope of " + std::to_string(n) +
                              " bytes");
  }
  const fb::Envelope* env = fb::GetEnvelope(data);
  const auto type = env->payload_type();
  // The generated verifier accepts union types it does not know; replay must not guess.
  if (type == fb::Payload::NONE ||
      static_cast<uint8_t>(type) > static_cast<uint8_t>(fb::Payload::MAX)) {
    return Status::corruption("unknown payload type " +
                              std::to_string(static_cast<unsigned>(type)));
  }
  if (env->payload() == nullptr) {
    return Status::corruption(std::string("payload of type ") + payload_name(type) + " is missing");
  }
  return Status::ok();
}

Status check_envelope_size(size_t n) {
  if (n > kMaxEnvelopeBytes) {
    return Status::corruption("envelope of " + std::to_string(n) + " bytes exceeds the limit of " +
                              std::to_string(kMaxEnvelopeBytes));
  }
  return Status::ok();
}

// Checks length and CRC of a frame; returns the envelope bytes inside it.
Result<std::string_view> check_frame(std::string_view framed) {
  if (framed.size() < kCrcBytes) {
    return Status::corruption("frame of " + std::to_string(framed.size()) +
                              " bytes is shorter than its 4-byte CRC");
  }
  std::string_view env = framed.substr(kCrcBytes);
  if (auto s = check_envelope_size(env.size()); !s) return s;
  const uint32_t stored = unmask_crc(load_le32(framed.data()));
  const uint32_t actual = crc32c(env.data(), env.size());
  if (stored != actual) {
    return Status::corruption("crc mismatch: stored " + hex32(stored) + ", computed " +
                              hex32(actual) + " over " + std::to_string(env.size()) + " bytes");
  }
  return env;
}

Result<Event> unpack_verified(std::string_view env) {
  return with_aligned(env, [&env](const uint8_t* data) -> Result<Event> {
    if (auto s = verify_aligned(data, env.size()); !s) return s;
    Event e;
    fb::GetEnvelope(data)->UnPackTo(&e);
    return e;
  });
}

}  // namespace

std::string encode(const Event& e) {
  flatbuffers::FlatBufferBuilder fbb(256);
  fbb.Finish(fb::Envelope::Pack(fbb, &e), fb::EnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

std::string frame(std::string_view envelope_bytes) {
  std::string out(kCrcBytes + envelope_bytes.size(), '\0');
  store_le32(out.data(), mask_crc(crc32c(envelope_bytes.data(), envelope_bytes.size())));
  std::memcpy(out.data() + kCrcBytes, envelope_bytes.data(), envelope_bytes.size());
  return out;
}

void encode_frame_into(const Event& e, flatbuffers::FlatBufferBuilder& fbb, std::string& out) {
  fbb.Clear();
  fbb.Finish(fb::Envelope::Pack(fbb, &e), fb::EnvelopeIdentifier());
  const char* env = reinterpret_cast<const char*>(fbb.GetBufferPointer());
  const size_t n = fbb.GetSize();
  out.resize(kCrcBytes + n);
  store_le32(out.data(), mask_crc(crc32c(env, n)));
  std::memcpy(out.data() + kCrcBytes, env, n);
}

Result<const fb::Envelope*> verify_frame(std::string_view framed) {
  auto env = check_frame(framed);
  if (!env.ok()) return env.status();
  Status s =
      with_aligned(*env, [&env](const uint8_t* data) { return verify_aligned(data, env->size()); });
  if (!s) return s;
  // GetEnvelope() would load the root offset in place, which is undefined at a misaligned
  // address; the caller may still use the pointer where its platform tolerates that.
  flatbuffers::uoffset_t root;
  std::memcpy(&root, env->data(), sizeof root);
  root = flatbuffers::EndianScalar(root);
  return reinterpret_cast<const fb::Envelope*>(env->data() + root);
}

Result<Event> decode_frame(std::string_view framed) {
  auto env = check_frame(framed);
  if (!env.ok()) return env.status();
  return unpack_verified(*env);
}

Result<Event> decode_envelope(std::string_view envelope_bytes) {
  if (auto s = check_envelope_size(envelope_bytes.size()); !s) return s;
  return unpack_verified(envelope_bytes);
}

const char* payload_name(fb::Payload type) {
  const char* name = fb::EnumNamePayload(type);
  return (name == nullptr || *name == '\0') ? "Unknown" : name;
}

}  // namespace arc::events
