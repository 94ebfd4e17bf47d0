#include "events/codec.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/events/sample_events.h"

namespace arc::events {
namespace {

using testing::all_payload_types;
using testing::sample_event;

Event stamped(fb::Payload type, uint64_t seq) {
  Event e = sample_event(type, static_cast<int>(seq));
  e.seq = seq;
  e.campaign = "c0ffee";
  e.wall_time_ns = 1'700'000'000'000'000'000 + static_cast<int64_t>(seq);
  return e;
}

TEST(CodecTest, SampleCoversEveryPayloadType) {
  const auto types = all_payload_types();
  ASSERT_EQ(types.size(), static_cast<size_t>(fb::Payload::MAX));
  for (auto t : types) EXPECT_EQ(sample_event(t).payload.type, t) << payload_name(t);
}

TEST(CodecTest, RoundTripEveryPayloadType) {
  uint64_t seq = 1;
  for (auto t : all_payload_types()) {
    const Event e = stamped(t, seq++);
    const std::string bytes = encode(e);
    ASSERT_TRUE(fb::EnvelopeBufferHasIdentifier(bytes.data())) << payload_name(t);

    auto via_frame = decode_frame(frame(bytes));
    ASSERT_TRUE(via_frame.ok()) << payload_name(t) << ": " << via_frame.status().to_string();
    EXPECT_TRUE(*via_frame == e) << payload_name(t);
    EXPECT_EQ(via_frame->payload.type, t);

    auto via_envelope = decode_envelope(bytes);
    ASSERT_TRUE(via_envelope.ok()) << via_envelope.status().to_string();
    EXPECT_TRUE(*via_envelope == e) << payload_name(t);

    EXPECT_EQ(encode_frame(e), frame(bytes));
  }
}

TEST(CodecTest, EncodeFrameIntoMatchesEncodeFrameAcrossReuse) {
  flatbuffers::FlatBufferBuilder fbb;
  std::string out;
  uint64_t seq = 1;
  // Big then small: a reused builder/string must not leak bytes of the previous event.
  for (auto t : {fb::Payload::CampaignStarted, fb::Payload::PlateauDetected,
                 fb::Payload::CandidateEvaluated, fb::Payload::AgentSpawned}) {
    const Event e = stamped(t, seq++);
    encode_frame_into(e, fbb, out);
    EXPECT_EQ(out, encode_frame(e)) << payload_name(t);
    auto d = decode_frame(out);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_TRUE(*d == e);
  }
}

TEST(CodecTest, VerifyFrameIsZeroCopy) {
  const std::string f = encode_frame(stamped(fb::Payload::Decision, 7));
  auto env = verify_frame(f);
  ASSERT_TRUE(env.ok()) << env.status().to_string();
  EXPECT_EQ((*env)->seq(), 7u);
  EXPECT_EQ((*env)->payload_type(), fb::Payload::Decision);
  EXPECT_EQ(reinterpret_cast<const char*>(*env) >= f.data() &&
                reinterpret_cast<const char*>(*env) < f.data() + f.size(),
            true);
  EXPECT_EQ((*env)->payload_as_Decision()->reason()->str(), "slower than incumbent");
}

TEST(CodecTest, DecodesAtAnyAlignment) {
  const Event e = stamped(fb::Payload::CandidateEvaluated, 3);
  const std::string f = encode_frame(e);
  std::vector<char> buf(f.size() + 16);
  for (size_t off = 0; off < 8; ++off) {
    std::memcpy(buf.data() + off, f.data(), f.size());
    auto d = decode_frame(std::string_view(buf.data() + off, f.size()));
    ASSERT_TRUE(d.ok()) << "offset " << off << ": " << d.status().to_string();
    EXPECT_TRUE(*d == e);
    EXPECT_TRUE(verify_frame(std::string_view(buf.data() + off, f.size())).ok());
    auto de = decode_envelope(std::string_view(buf.data() + off + 4, f.size() - 4));
    ASSERT_TRUE(de.ok()) << de.status().to_string();
  }
}

// Every single-bit flip at every position of a frame is caught, and by the CRC.
TEST(CodecTest, FlippedByteAnywhereIsDetected) {
  for (auto t : {fb::Payload::CandidateProposed, fb::Payload::CandidateEvaluated}) {
    const std::string f = encode_frame(stamped(t, 11));
    for (size_t i = 0; i < f.size(); ++i) {
      for (uint8_t bit : {0x01, 0x10, 0x80}) {
        std::string bad = f;
        bad[i] = static_cast<char>(bad[i] ^ bit);
        auto d = decode_frame(bad);
        ASSERT_FALSE(d.ok()) << "flip at " << i;
        EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
        EXPECT_NE(d.status().message().find("crc mismatch"), std::string::npos)
            << d.status().message();
        EXPECT_FALSE(verify_frame(bad).ok());
      }
    }
  }
}

TEST(CodecTest, TruncatedFrameIsCorruption) {
  const std::string f = encode_frame(stamped(fb::Payload::AgentSpawned, 1));
  for (size_t n = 0; n < f.size(); ++n) {
    auto d = decode_frame(std::string_view(f.data(), n));
    ASSERT_FALSE(d.ok()) << "length " << n;
    EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
  }
  EXPECT_NE(decode_frame("abc").status().message().find("shorter than its 4-byte CRC"),
            std::string::npos);
}

// The CRC guards integrity; the verifier guards memory safety against bytes that were bad
// before they were framed.
TEST(CodecTest, ValidCrcOverGarbageFailsVerifier) {
  const std::vector<std::string> garbage = {
      std::string("this is not a flatbuffer at all, not even close"),
      std::string(64, '\xff'),
      std::string("\x08\x00\x00\x00"
                  "ARCE"
                  "\xff\xff\xff\x7f"
                  "\x01\x02\x03\x04",
                  16),
      std::string("\x04\x00\x00\x00"
                  "ARCE",
                  8),
      std::string("tiny"),
  };
  for (const auto& g : garbage) {
    auto d = decode_frame(frame(g));
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
    EXPECT_NE(d.status().message().find("flatbuffers verifier failed"), std::string::npos)
        << d.status().message();
    EXPECT_FALSE(decode_envelope(g).ok());
  }
  // A real envelope cut short, re-framed with a correct CRC.
  const std::string bytes = encode(stamped(fb::Payload::CampaignStarted, 1));
  auto cut = decode_frame(frame(bytes.substr(0, bytes.size() - 5)));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("flatbuffers verifier failed"), std::string::npos);
}

TEST(CodecTest, WrongFileIdentifierIsRejected) {
  const Event e = stamped(fb::Payload::PeaksMeasured, 1);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::Envelope::Pack(fbb, &e), "XXXX");
  std::string bytes(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  auto d = decode_frame(frame(bytes));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("flatbuffers verifier failed"), std::string::npos);
  EXPECT_NE(d.status().message().find("identifier"), std::string::npos);
}

std::string envelope_with_type(uint8_t type, bool with_payload) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::PeaksMeasuredT peaks;
  peaks.device = "dev";
  auto payload = fb::PeaksMeasured::Pack(fbb, &peaks);
  auto campaign = fbb.CreateString("c");
  fb::EnvelopeBuilder b(fbb);
  b.add_seq(5);
  b.add_campaign(campaign);
  b.add_payload_type(static_cast<fb::Payload>(type));
  if (with_payload) b.add_payload(payload.Union());
  fbb.Finish(b.Finish(), fb::EnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

TEST(CodecTest, UnknownPayloadTypeIsRejected) {
  for (unsigned type : {0u, static_cast<unsigned>(fb::Payload::MAX) + 1, 200u, 255u}) {
    auto d = decode_frame(frame(envelope_with_type(static_cast<uint8_t>(type), true)));
    ASSERT_FALSE(d.ok()) << type;
    EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
    EXPECT_NE(d.status().message().find("unknown payload type " + std::to_string(type)),
              std::string::npos)
        << d.status().message();
    EXPECT_FALSE(verify_frame(frame(envelope_with_type(static_cast<uint8_t>(type), true))).ok());
  }
  // The same hand-built envelope with a known type is accepted: the check is on the type.
  auto ok = decode_frame(
      frame(envelope_with_type(static_cast<uint8_t>(fb::Payload::PeaksMeasured), true)));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->payload.AsPeaksMeasured()->device, "dev");
}

TEST(CodecTest, KnownTypeWithoutPayloadTableIsRejected) {
  auto d =
      decode_frame(frame(envelope_with_type(static_cast<uint8_t>(fb::Payload::Decision), false)));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
  EXPECT_NE(d.status().message().find("Decision"), std::string::npos) << d.status().message();
}

TEST(CodecTest, OversizedEnvelopeIsRejectedBeforeVerifying) {
  const std::string huge(kMaxEnvelopeBytes + 1, 'x');
  auto d = decode_envelope(huge);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("exceeds the limit"), std::string::npos);
  auto f = decode_frame(frame(huge));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(CodecTest, PayloadNames) {
  EXPECT_STREQ(payload_name(fb::Payload::CandidateProposed), "CandidateProposed");
  EXPECT_STREQ(payload_name(fb::Payload::PeaksMeasured), "PeaksMeasured");
  EXPECT_STREQ(payload_name(fb::Payload::NONE), "NONE");
  EXPECT_STREQ(payload_name(static_cast<fb::Payload>(200)), "Unknown");
}

}  // namespace
}  // namespace arc::events
