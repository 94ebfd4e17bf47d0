#include "problem/candidate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace arc::problem {
namespace {

Candidate sample() {
  Candidate c;
  c.base.family = "blocked";
  c.base.knobs = {{"TILE_M", "64"}, {"A\"q", "x\\y\n\t\x01"}};
  Variant g;
  g.source = "extern \"C\" int arc_kernel() { return 0; }\n";
  g.knobs = {{"UNROLL", "4"}};
  c.gates["w2"] = g;
  c.gates["w1"] = Variant{"naive", {}, ""};
  return c;
}

TEST(Candidate, CanonicalMatchesSortedJsonDump) {
  const Candidate c = sample();
  nlohmann::json j;
  j["base"] = {{"family", "blocked"}, {"knobs", c.base.knobs}};
  j["gates"]["w1"] = {{"family", "naive"}};
  j["gates"]["w2"] = {{"knobs", c.gates.at("w2").knobs}, {"source", c.gates.at("w2").source}};
  EXPECT_EQ(c.canonical(), j.dump());
  EXPECT_EQ(c.hash(), arc::sha256_hex(j.dump()));
}

TEST(Candidate, RoundTripsThroughCanonicalForm) {
  const Candidate c = sample();
  auto back = Candidate::from_canonical(c.canonical());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back.value() == c);
  EXPECT_EQ(back->hash(), c.hash());
}

TEST(Candidate, VariantForFallsBackToBase) {
  const Candidate c = sample();
  EXPECT_EQ(c.variant_for("w1").family, "naive");
  EXPECT_EQ(c.variant_for("other").family, "blocked");
}

TEST(Candidate, VariantKeysDistinguishKnobsOfFreeSource) {
  Variant a{"", {{"UNROLL", "2"}}, "int x;"};
  Variant b{"", {{"UNROLL", "4"}}, "int x;"};
  EXPECT_NE(a.key(), b.key());
  EXPECT_EQ(Variant({"blocked", {{"T", "8"}}, ""}).key(), "blocked{T=8}");
}

TEST(Candidate, FreeSourceMayNameTheFamilyWhoseLaunchesItKeeps) {
  auto c = Candidate::from_canonical(R"({"base":{"family":"warprow","source":"int x;"}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->base.family, "warprow");
  EXPECT_EQ(c->base.source, "int x;");
  EXPECT_EQ(Candidate::from_canonical(c->canonical()).value(), c.value());
  const std::string key = c->base.key();
  EXPECT_EQ(key.rfind("source:", 0), 0u);
  EXPECT_NE(key.find("@warprow{"), std::string::npos) << key;
  Variant bare{"", {}, "int x;"};
  EXPECT_NE(bare.key(), key);
}

TEST(Candidate, MalformedCanonicalFormsAreRejected) {
  EXPECT_FALSE(Candidate::from_canonical("not json").ok());
  EXPECT_FALSE(Candidate::from_canonical("{}").ok());
  EXPECT_FALSE(Candidate::from_canonical(R"({"base":{}})").ok());
  EXPECT_FALSE(Candidate::from_canonical(R"({"base":{"family":"a","knobs":{"K":1}}})").ok());
  EXPECT_FALSE(Candidate::from_canonical(R"({"base":{"family":"a"},"extra":1})").ok());
  auto bad = Candidate::from_canonical(R"({"base":{"family":"a"},"gates":{"w":{"x":1}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("candidate.gates.w"), std::string::npos);
}

TEST(Candidate, ReadsEveryJsonSpellingOfACandidateAlike) {
  Candidate plain;
  plain.base = Variant{"blocked", {{"TILE_K", "32"}, {"TILE_M", "64"}}, ""};
  plain.gates["big"] = Variant{"naive", {}, ""};
  plain.gates["small"] = Variant{"", {{"UNROLL", "2"}}, "int f();"};
  const std::string canonical = plain.canonical();
  auto read = Candidate::from_canonical(canonical);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_TRUE(read.value() == plain);
  // Other spellings of the same object: whitespace, unsorted keys, escapes.
  for (
      const char* text :
      {R"( {"base": {"family": "blocked", "knobs": {"TILE_K": "32", "TILE_M": "64"}},
            "gates": {"big": {"family": "naive"},
                      "small": {"knobs": {"UNROLL": "2"}, "source": "int f();"}}})",
       R"({"gates":{"small":{"source":"int f();","knobs":{"UNROLL":"2"}},"big":{"family":"naive"}},"base":{"knobs":{"TILE_M":"64","TILE_K":"32"},"family":"blocked"}})",
       R"({"base":{"family":"bl\u006fcked","knobs":{"TILE_K":"32","TILE_M":"64"}},"gates":{"big":{"family":"naive"},"small":{"knobs":{"UNROLL":"2"},"source":"int f();"}}})"}) {
    auto c = Candidate::from_canonical(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status().to_string();
    EXPECT_TRUE(c.value() == plain) << text;
    EXPECT_EQ(c->canonical(), canonical) << text;
  }
  // Strings outside plain ASCII round-trip too.
  Candidate odd = sample();
  odd.base.knobs["NAME"] = "caf\xc3\xa9";
  auto back = Candidate::from_canonical(odd.canonical());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back.value() == odd);
}

TEST(Candidate, NearCanonicalTextsAreJudgedAsJson) {
  // Each is close to a canonical form; none is a valid candidate.
  for (const char* text : {R"({"base":{"family":"a"}}x)", R"({"base":{"family":"a"})",
                           R"({"base":{"family":""}})", R"({"base":{"knobs":{"K":"1"}}})",
                           "{\"base\":{\"family\":\"\xff\"}}", R"({"base":{"source":""}})"}) {
    EXPECT_FALSE(Candidate::from_canonical(text).ok()) << text;
  }
  // A family with free source (an external agent's kernel under the family's launches) reads
  // back as written.
  Candidate both;
  both.base = Variant{"a", {{"K", "1"}}, "s"};
  auto b = Candidate::from_canonical(both.canonical());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_TRUE(b.value() == both);
  EXPECT_EQ(both.canonical(), R"({"base":{"family":"a","knobs":{"K":"1"},"source":"s"}})");
  // Valid JSON the canonical writer never produces is still read as JSON reads it.
  auto c = Candidate::from_canonical(R"({"base":{"family":"a","knobs":{}},"gates":{}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->base.family, "a");
  EXPECT_TRUE(c->base.knobs.empty());
  EXPECT_TRUE(c->gates.empty());
  EXPECT_EQ(c->canonical(), R"({"base":{"family":"a"}})");
}

}  // namespace
}  // namespace arc::problem
