// The shipped skills load and scope what they should; malformed skills fail with messages that
// name the file, the field and what was expected.
#include "skills/skill.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <toml++/toml.h>
#include <unistd.h>

namespace arc::skills {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = ARC_SOURCE_DIR;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

const Skill* find(const std::vector<Skill>& skills, const std::string& name) {
  for (const auto& s : skills) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(GlobMatch, StarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("TILE_*", "TILE_M"));
  EXPECT_TRUE(glob_match("TILE_*", "TILE_"));
  EXPECT_FALSE(glob_match("TILE_*", "TILE"));
  EXPECT_FALSE(glob_match("TILE_*", "XTILE_M"));
  EXPECT_TRUE(glob_match("VEC*", "VEC"));
  EXPECT_TRUE(glob_match("VEC*", "VEC_WIDTH"));
  EXPECT_TRUE(glob_match("?EC", "VEC"));
  EXPECT_FALSE(glob_match("?EC", "EC"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_TRUE(glob_match("a*b*c", "abc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
  EXPECT_TRUE(glob_match("**x", "x"));
  EXPECT_TRUE(glob_match("*a", "banana"));
  EXPECT_FALSE(glob_match("*b", "banana"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_FALSE(glob_match("abc", "ab"));
  EXPECT_TRUE(glob_match("lib*", "lib_cublaslt"));
  EXPECT_FALSE(glob_match("lib*", "naive"));
  // Many stars against a long non-matching text finishes (no exponential backtracking).
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", std::string(200, 'a')));
}

TEST(ShippedSkills, AllNineLoad) {
  auto skills = load_skills(kRoot / "skills");
  ASSERT_TRUE(skills.ok()) << skills.status().to_string();
  std::vector<std::string> names;
  for (const auto& s : *skills) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fusion", "launch", "library", "model", "pipeline",
                                             "precision", "shape-gate", "tiling", "vectorize"}));
  // Only the model skill is opt-in: campaigns that do not name it run as before it existed.
  for (const auto& s : *skills) EXPECT_EQ(s.opt_in, s.name == "model") << s.name;
  const Skill* model = find(*skills, "model");
  ASSERT_NE(model, nullptr);
  EXPECT_GT(model->moves.count("model"), 0u);
  EXPECT_TRUE(model->may_touch_knob("ANY_KNOB"));
  EXPECT_TRUE(model->may_use_family("any-family"));
  for (const auto& s : *skills) {
    SCOPED_TRACE(s.name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_FALSE(s.kernel_types.empty());
    EXPECT_FALSE(s.moves.empty());
    const auto lines = std::count(s.guidance.begin(), s.guidance.end(), '\n');
    EXPECT_GE(lines, 40) << "SKILL.md should be substantive guidance";
    EXPECT_LE(lines, 90);
    for (const auto& [kind, w] : s.moves) {
      EXPECT_GT(w, 0);
      EXPECT_NE(std::find(move_kinds().begin(), move_kinds().end(), kind), move_kinds().end());
    }
  }
}

TEST(ShippedSkills, EligibilityAndScope) {
  auto loaded = load_skills(kRoot / "skills");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const auto& skills = *loaded;
  const Skill* tiling = find(skills, "tiling");
  const Skill* vectorize = find(skills, "vectorize");
  const Skill* pipeline = find(skills, "pipeline");
  const Skill* launch = find(skills, "launch");
  const Skill* fusion = find(skills, "fusion");
  const Skill* precision = find(skills, "precision");
  const Skill* library = find(skills, "library");
  const Skill* gate = find(skills, "shape-gate");
  ASSERT_TRUE(tiling && vectorize && pipeline && launch && fusion && precision && library && gate);

  EXPECT_TRUE(tiling->eligible_for("gemm"));
  EXPECT_TRUE(tiling->eligible_for("attention"));
  EXPECT_TRUE(tiling->eligible_for("elementwise"));  // row tiles reusing a broadcast operand
  EXPECT_FALSE(tiling->eligible_for("some-new-kind"));
  EXPECT_TRUE(library->eligible_for("gemm"));
  EXPECT_FALSE(library->eligible_for("softmax"));
  EXPECT_TRUE(fusion->eligible_for("softmax"));
  for (const Skill* s : {vectorize, launch, precision, gate}) {
    EXPECT_TRUE(s->eligible_for("gemm")) << s->name;
    EXPECT_TRUE(s->eligible_for("some-new-kind")) << s->name;  // "*"
  }

  EXPECT_TRUE(tiling->may_touch_knob("TILE_M"));
  EXPECT_TRUE(tiling->may_touch_knob("BLOCK_ROWS"));
  EXPECT_FALSE(tiling->may_touch_knob("VEC"));
  EXPECT_TRUE(vectorize->may_touch_knob("VEC"));
  EXPECT_TRUE(vectorize->may_touch_knob("UNROLL_K"));
  EXPECT_FALSE(vectorize->may_touch_knob("TILE_K"));
  EXPECT_TRUE(pipeline->may_touch_knob("PREFETCH"));
  EXPECT_TRUE(pipeline->may_touch_knob("STAGES"));
  EXPECT_TRUE(launch->may_touch_knob("THREADS"));
  EXPECT_TRUE(launch->may_touch_knob("CHUNK_ROWS"));
  EXPECT_TRUE(launch->may_touch_knob("GRID_SPLIT"));
  EXPECT_TRUE(fusion->may_touch_knob("FUSE_PASSES"));
  EXPECT_FALSE(fusion->may_touch_knob("EXP"));
  EXPECT_TRUE(precision->may_touch_knob("EXP"));
  EXPECT_TRUE(precision->may_touch_knob("ACC"));
  EXPECT_TRUE(precision->may_touch_knob("PRECISION"));
  EXPECT_FALSE(precision->may_touch_knob("VEC"));
  EXPECT_TRUE(gate->may_touch_knob("ANYTHING"));
  EXPECT_TRUE(gate->moves.count("shape_gate"));

  EXPECT_TRUE(library->may_use_family("lib_cublaslt"));
  EXPECT_TRUE(library->may_use_family("library"));
  EXPECT_FALSE(library->may_use_family("naive"));
  EXPECT_TRUE(tiling->may_use_family("blocked"));
}

// Reads a TOML file the way a test may: toml++ throws on syntax errors, which fail the test.
toml::table parse(const fs::path& p) { return toml::parse_file(p.string()); }

// The shipped campaigns give every agent a skill that is eligible for the problem and has
// something to move there: a knob in scope in some family, or family switches / gating.
TEST(ShippedSkills, CampaignAgentsHaveWorkToDo) {
  auto loaded = load_skills(kRoot / "skills");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  for (const char* name : {"softmax", "matmul"}) {
    SCOPED_TRACE(name);
    const fs::path dir = kRoot / "problems/host" / name;
    const toml::table problem = parse(dir / "problem.toml");
    const toml::table campaign = parse(dir / "campaign.toml");
    const std::string kernel_type = problem["kernel_type"].value_or(std::string());
    std::vector<std::string> knobs, families;
    for (const auto& f : *problem["families"].as_array()) {
      families.push_back(f.as_table()->get("name")->value_or(std::string()));
      if (const auto* ks = f.as_table()->get("knobs"); ks != nullptr) {
        for (const auto& k : *ks->as_array()) {
          knobs.push_back(k.as_table()->get("name")->value_or(std::string()));
        }
      }
    }
    const auto* agents = campaign["agents"].as_array();
    ASSERT_NE(agents, nullptr);
    EXPECT_EQ(agents->size(), 4u);
    for (const auto& a : *agents) {
      const std::string skill_name = a.as_table()->get("skill")->value_or(std::string());
      const Skill* s = find(*loaded, skill_name);
      ASSERT_NE(s, nullptr) << skill_name;
      EXPECT_TRUE(s->eligible_for(kernel_type)) << skill_name;
      const bool knob_in_scope = std::any_of(knobs.begin(), knobs.end(),
                                             [&](const auto& k) { return s->may_touch_knob(k); });
      EXPECT_TRUE(knob_in_scope || s->moves.count("shape_gate") != 0) << skill_name;
    }
  }
}

// Every knob of every shipped family is in the scope of a focused skill (one that names its
// knobs rather than all of them, and may use the family), so the campaigns' specialised agents
// search it and not only the model and gating agents.
TEST(ShippedSkills, EveryShippedKnobHasAFocusedSkill) {
  auto loaded = load_skills(kRoot / "skills");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  int checked = 0;
  for (const char* backend : {"host", "gpu"}) {
    for (const auto& e : fs::directory_iterator(kRoot / "problems" / backend)) {
      if (!fs::exists(e.path() / "problem.toml")) continue;
      const toml::table problem = parse(e.path() / "problem.toml");
      const std::string kernel_type = problem["kernel_type"].value_or(std::string());
      for (const auto& f : *problem["families"].as_array()) {
        const std::string family = f.as_table()->get("name")->value_or(std::string());
        const auto* ks = f.as_table()->get("knobs");
        if (ks == nullptr) continue;
        for (const auto& k : *ks->as_array()) {
          const std::string knob = k.as_table()->get("name")->value_or(std::string());
          const bool focused = std::any_of(loaded->begin(), loaded->end(), [&](const Skill& s) {
            const bool all = std::find(s.knobs.begin(), s.knobs.end(), "*") != s.knobs.end();
            return !all && s.eligible_for(kernel_type) && s.may_use_family(family) &&
                   s.may_touch_knob(knob);
          });
          EXPECT_TRUE(focused) << e.path().filename().string() << " family " << family << " knob "
                               << knob << ": no skill but the catch-all ones names it";
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// ---------------------------------------------------------------------------------------------
// Malformed skills

const char* kValidSkill = R"(name = "probe"
description = "a test skill"
kernel_types = ["gemm", "softmax"]
knobs = ["TILE_*", "BLOCK_*"]
families = ["*"]

[moves]
neighbour = 4
jump = 1.5
)";

class TempSkill : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("arc_skill_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(root_);
    write_file(root_ / "probe/SKILL.md", "# Probe\nGuidance.\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  Result<Skill> load(const std::string& text) {
    write_file(root_ / "probe/skill.toml", text);
    return load_skill(root_ / "probe");
  }

  static std::string with(const std::string& from, const std::string& to) {
    std::string s = kValidSkill;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << "fixture text lacks: " << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  }

  void expect_error(const std::string& text, const std::vector<std::string>& parts,
                    const std::string& file = "skill.toml") {
    auto s = load(text);
    ASSERT_FALSE(s.ok()) << "loaded a malformed skill";
    const std::string& m = s.status().message();
    EXPECT_NE(m.find((root_ / "probe" / file).string()), std::string::npos) << m;
    size_t at = 0;
    for (const auto& part : parts) {
      const size_t found = m.find(part, at);
      EXPECT_NE(found, std::string::npos) << "missing '" << part << "' in: " << m;
      if (found != std::string::npos) at = found + part.size();
    }
  }

  fs::path root_;
};

TEST_F(TempSkill, ValidSkillLoads) {
  auto s = load(kValidSkill);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->name, "probe");
  EXPECT_EQ(s->kernel_types, (std::vector<std::string>{"gemm", "softmax"}));
  EXPECT_EQ(s->moves.at("neighbour"), 4.0);
  EXPECT_EQ(s->moves.at("jump"), 1.5);
  EXPECT_EQ(s->guidance, "# Probe\nGuidance.\n");
  EXPECT_TRUE(s->eligible_for("gemm"));
  EXPECT_FALSE(s->eligible_for("norm"));
  EXPECT_TRUE(s->may_touch_knob("BLOCK_ROWS"));
  EXPECT_FALSE(s->may_touch_knob("VEC"));
}

TEST_F(TempSkill, FamiliesDefaultToAll) {
  auto s = load(with("families = [\"*\"]\n", ""));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->may_use_family("anything"));
}

TEST_F(TempSkill, NameMustEqualFolder) {
  expect_error(with("name = \"probe\"", "name = \"other\""),
               {"field 'name'", "expected the folder's name \"probe\"", "got \"other\""});
}

TEST_F(TempSkill, UnknownMoveKindListsTheKnownOnes) {
  expect_error(with("jump = 1.5", "teleport = 1"),
               {"field 'moves.teleport'", "unknown move kind",
                "neighbour, jump, pair, family_switch, recall_win, shape_gate, model"});
}

TEST_F(TempSkill, WeightsMustBePositive) {
  expect_error(with("jump = 1.5", "jump = 0"),
               {"field 'moves.jump'", "expected a weight > 0", "got 0"});
  expect_error(with("jump = 1.5", "jump = -2.5"),
               {"field 'moves.jump'", "expected a weight > 0", "got -2.5"});
  expect_error(with("jump = 1.5", "jump = \"often\""),
               {"field 'moves.jump'", "expected a weight > 0", "got \"often\""});
}

TEST_F(TempSkill, MovesRequired) {
  std::string text = kValidSkill;
  text = text.substr(0, text.find("[moves]"));
  expect_error(text, {"field 'moves'", "expected a table [moves]", "got nothing"});
  expect_error(text + "[moves]\n", {"field 'moves'", "got an empty table"});
}

TEST_F(TempSkill, KernelTypesRequiredAndNonEmpty) {
  expect_error(
      with("kernel_types = [\"gemm\", \"softmax\"]\n", ""),
      {"field 'kernel_types'", "expected a non-empty array of kernel types", "got nothing"});
  expect_error(with("[\"gemm\", \"softmax\"]", "[]"), {"field 'kernel_types'", "got []"});
  expect_error(with("[\"gemm\", \"softmax\"]", "[\"gemm\", 3]"),
               {"field 'kernel_types[1]'", "expected a non-empty string", "got 3"});
}

TEST_F(TempSkill, KnobMovesNeedKnobs) {
  expect_error(with("knobs = [\"TILE_*\", \"BLOCK_*\"]", "knobs = []"),
               {"field 'knobs'", "expected at least one knob pattern", "got none"});
  expect_error(with("knobs = [\"TILE_*\", \"BLOCK_*\"]", "knobs = \"TILE_*\""),
               {"field 'knobs'", "expected an array of glob patterns", "got \"TILE_*\""});
}

TEST_F(TempSkill, OptInIsABooleanThatDefaultsToFalse) {
  auto plain = load(kValidSkill);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_FALSE(plain->opt_in);
  auto opted = load(with("families = [\"*\"]\n", "families = [\"*\"]\nopt_in = true\n"));
  ASSERT_TRUE(opted.ok()) << opted.status().to_string();
  EXPECT_TRUE(opted->opt_in);
  expect_error(with("families = [\"*\"]\n", "families = [\"*\"]\nopt_in = \"yes\"\n"),
               {"field 'opt_in'", "expected true or false", "got \"yes\""});
}

TEST_F(TempSkill, ModelMoveIsKnownAndNeedsKnobs) {
  auto s = load(with("jump = 1.5", "model = 3"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->moves.at("model"), 3.0);
  std::string no_knobs = with("knobs = [\"TILE_*\", \"BLOCK_*\"]", "knobs = []");
  const std::string moves = "neighbour = 4\njump = 1.5";
  no_knobs.replace(no_knobs.find(moves), moves.size(), "model = 3");
  expect_error(no_knobs, {"field 'knobs'", "at least one knob pattern (move 'model'", "got none"});
}

TEST_F(TempSkill, UnknownFieldIsRejected) {
  expect_error(std::string("kernel_type = \"gemm\"\n") + kValidSkill,
               {"field 'kernel_type'", "unknown field", "kernel_types"});
}

TEST_F(TempSkill, DescriptionRequired) {
  expect_error(with("description = \"a test skill\"\n", ""),
               {"field 'description'", "expected a one-line description", "got nothing"});
}

TEST_F(TempSkill, TomlSyntaxError) {
  expect_error(with("neighbour = 4", "neighbour = "), {"skill.toml:", "TOML syntax error"});
}

TEST_F(TempSkill, GuidanceRequired) {
  fs::remove(root_ / "probe/SKILL.md");
  expect_error(kValidSkill, {"no such file", "SKILL.md"}, "SKILL.md");
  write_file(root_ / "probe/SKILL.md", "  \n\n");
  expect_error(kValidSkill, {"expected guidance text", "empty"}, "SKILL.md");
}

TEST_F(TempSkill, MissingSkillToml) {
  auto s = load_skill(root_ / "nothing-here");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kNotFound);
  fs::create_directories(root_ / "empty");
  auto e = load_skill(root_ / "empty");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("skill.toml"), std::string::npos);
}

TEST_F(TempSkill, LoadSkillsSortsAndReportsTheBrokenOne) {
  write_file(root_ / "probe/skill.toml", kValidSkill);
  std::string other = kValidSkill;
  other.replace(other.find("\"probe\""), 7, "\"alpha\"");
  write_file(root_ / "alpha/skill.toml", other);
  write_file(root_ / "alpha/SKILL.md", "Alpha guidance.\n");
  write_file(root_ / "README.md", "files beside the folders are ignored\n");
  auto all = load_skills(root_);
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "alpha");
  EXPECT_EQ((*all)[1].name, "probe");

  write_file(root_ / "broken/skill.toml", with("name = \"probe\"", "name = \"wrong\""));
  write_file(root_ / "broken/SKILL.md", "x\n");
  auto bad = load_skills(root_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("broken/skill.toml"), std::string::npos)
      << bad.status().message();

  auto none = load_skills(root_ / "missing");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace arc::skills
