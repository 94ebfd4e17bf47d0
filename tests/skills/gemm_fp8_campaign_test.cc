// problems/gpu/gemm_fp8's campaign: every agent's skill is eligible for a gemm and has a knob of
// the cuBLASLt fp8 family in scope (or gates), and FAST_ACCUM, the fp8 precision trade,
// is moved by the library and the precision skills and by none of the structural ones.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "skills/skill.h"

namespace arc::skills {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = ARC_SOURCE_DIR;

TEST(GemmFp8Campaign, EveryAgentHasAKnobInScopeOrGates) {
  auto loaded = load_skills(kRoot / "skills");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const fs::path dir = kRoot / "problems/gpu/gemm_fp8";
  const toml::table problem = toml::parse_file((dir / "problem.toml").string());
  const toml::table campaign = toml::parse_file((dir / "campaign.toml").string());
  const std::string kernel_type = problem["kernel_type"].value_or(std::string());
  EXPECT_EQ(kernel_type, "gemm");
  std::vector<std::string> knobs;
  for (const auto& f : *problem["families"].as_array()) {
    if (const auto* ks = f.as_table()->get("knobs"); ks != nullptr) {
      for (const auto& k : *ks->as_array()) {
        knobs.push_back(k.as_table()->get("name")->value_or(std::string()));
      }
    }
  }
  ASSERT_NE(std::find(knobs.begin(), knobs.end(), "FAST_ACCUM"), knobs.end());
  const auto* agents = campaign["agents"].as_array();
  ASSERT_NE(agents, nullptr);
  std::vector<std::string> skills;
  for (const auto& a : *agents) {
    const std::string name = a.as_table()->get("skill")->value_or(std::string());
    skills.push_back(name);
    auto s = std::find_if(loaded->begin(), loaded->end(),
                          [&name](const Skill& k) { return k.name == name; });
    ASSERT_NE(s, loaded->end()) << name;
    EXPECT_TRUE(s->eligible_for(kernel_type)) << name;
    const bool knob_in_scope = std::any_of(knobs.begin(), knobs.end(),
                                           [&s](const auto& k) { return s->may_touch_knob(k); });
    EXPECT_TRUE(knob_in_scope || s->moves.count("shape_gate") != 0) << name;
  }
  for (const char* name : {"library", "precision"}) {
    EXPECT_NE(std::find(skills.begin(), skills.end(), name), skills.end()) << name;
  }
  for (const auto& s : *loaded) {
    if (s.name == "library" || s.name == "precision") {
      EXPECT_TRUE(s.may_touch_knob("FAST_ACCUM")) << s.name;
    } else if (s.name == "tiling" || s.name == "pipeline" || s.name == "launch" ||
               s.name == "vectorize" || s.name == "fusion") {
      EXPECT_FALSE(s.may_touch_knob("FAST_ACCUM")) << s.name;
    }
  }
}

}  // namespace
}  // namespace arc::skills
