#include "actors/check.h"

#include <gtest/gtest.h>

namespace arc::actors {
namespace {

problem::Family family_with(std::vector<problem::Knob> knobs) {
  problem::Family f;
  f.name = "f";
  f.knobs = std::move(knobs);
  return f;
}

TEST(ExtremeVariants, FamilyWithoutKnobsHasOneVariant) {
  auto vs = extreme_variants(family_with({}));
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].family, "f");
  EXPECT_TRUE(vs[0].knobs.empty());
}

TEST(ExtremeVariants, DefaultsThenEachKnobAtItsEndsThenAllFirstAndAllLast) {
  auto vs = extreme_variants(family_with({{"A", {"1", "2", "4"}, "2"}, {"B", {"x", "y"}, "x"}}));
  using K = std::map<std::string, std::string>;
  const std::vector<K> expected = {
      {{"A", "2"}, {"B", "x"}},  // defaults
      {{"A", "1"}, {"B", "x"}},  // A first (also all-first)
      {{"A", "4"}, {"B", "x"}},  // A last
      {{"A", "2"}, {"B", "y"}},  // B last (B first is the default)
      {{"A", "4"}, {"B", "y"}},  // all last
  };
  ASSERT_EQ(vs.size(), expected.size());
  for (size_t i = 0; i < vs.size(); ++i) EXPECT_EQ(vs[i].knobs, expected[i]) << i;
}

TEST(ExtremeVariants, CountGrowsLinearlyWithKnobs) {
  std::vector<problem::Knob> knobs;
  for (int i = 0; i < 8; ++i) knobs.push_back({"K" + std::to_string(i), {"a", "b", "c"}, "b"});
  EXPECT_EQ(extreme_variants(family_with(knobs)).size(), 2u * 8 + 3);
}

TEST(FirstErrorLine, SkipsTheWrapperHeaderAndFindsTheCompilersError) {
  EXPECT_EQ(first_error_line("compile error (g++ exited with 1):\n"
                             "In file included from x.cpp:1:\n"
                             "x.cpp:3:1: error: static assertion failed: no\n"
                             "x.cpp:4:1: error: second\n"),
            "x.cpp:3:1: error: static assertion failed: no");
  EXPECT_EQ(first_error_line("/p/naive.cu: NVRTC_ERROR_COMPILATION\n"
                             "/p/naive.cu(12): error: this declaration has no storage class\n"),
            "/p/naive.cu(12): error: this declaration has no storage class");
  EXPECT_EQ(first_error_line("\n  cannot read /p/naive.cu  \n"), "cannot read /p/naive.cu");
  EXPECT_EQ(first_error_line(""), "");
}

TEST(DeliberateRejection, StaticAssertionsAndErrorDirectivesOnly) {
  EXPECT_TRUE(is_deliberate_rejection("x.cpp:3:1: error: static assertion failed: VEC"));
  EXPECT_TRUE(is_deliberate_rejection("t.cu(80): error: static assertion failed with \"tile\""));
  EXPECT_TRUE(is_deliberate_rejection("x.cpp:3:2: error: #error \"no\""));
  EXPECT_FALSE(is_deliberate_rejection("x.cpp:3:1: error: 'y' was not declared in this scope"));
  EXPECT_FALSE(is_deliberate_rejection("n.cu(2): error: this declaration has no storage class"));
}

TEST(KnobText, InTheFamilysKnobOrder) {
  auto f = family_with({{"VEC", {"1", "16"}, "1"}, {"ACC", {"float", "double"}, "float"}});
  problem::Variant v{"f", {{"ACC", "double"}, {"VEC", "16"}}, ""};
  EXPECT_EQ(knob_text(f, v), "VEC=16 ACC=double");
  EXPECT_EQ(knob_text(family_with({}), problem::Variant{"f", {}, ""}), "(no knobs)");
}

}  // namespace
}  // namespace arc::actors
