// Loading skills/<name>/skill.toml + SKILL.md, and the glob matching that scopes a skill.
// Errors name the file, the field and what was expected; nothing here throws.
#include "skills/skill.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

#include <toml++/toml.h>

#include "base/toml_text.h"

namespace arc::skills {
namespace {

namespace fs = std::filesystem;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool any_match(const std::vector<std::string>& patterns, const std::string& text) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return glob_match(p, text); });
}

bool is_skill_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!(c < 128 && (std::isalnum(c) || c == '_' || c == '-'))) return false;
  }
  return true;
}

class Reader : public FieldErrors {
 public:
  explicit Reader(std::string shown) : FieldErrors(std::move(shown)) {}

  bool string(const toml::table& t, const std::string& key, std::string& out, bool required,
              const std::string& expected) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    if (n == nullptr) return required ? fail(key, expected, "nothing") : true;
    if (!n->is_string()) return fail(key, expected, toml_describe(*n));
    out = n->as_string()->get();
    return true;
  }

  // A list of glob patterns (or kernel types); each entry a non-empty string.
  bool patterns(const toml::table& t, const std::string& key, std::vector<std::string>& out,
                bool required, const std::string& expected) {
    if (failed()) return false;
    const toml::node* n = t.get(key);
    if (n == nullptr) return required ? fail(key, expected, "nothing") : true;
    if (!n->is_array()) return fail(key, expected, toml_describe(*n));
    out.clear();
    size_t i = 0;
    for (const toml::node& e : *n->as_array()) {
      const std::string field = key + "[" + std::to_string(i++) + "]";
      if (!e.is_string()) return fail(field, "a non-empty string", toml_describe(e));
      const std::string& s = e.as_string()->get();
      if (s.empty()) return fail(field, "a non-empty string", "\"\"");
      out.push_back(s);
    }
    return true;
  }
};

Result<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::io_error(p.string() + ": cannot read the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::io_error(p.string() + ": error reading the file");
  return ss.str();
}

Result<Skill> load_skill_impl(const fs::path& folder) {
  std::error_code ec;
  const fs::path file = folder / "skill.toml";
  const std::string shown = file.lexically_normal().string();
  if (!fs::is_directory(folder, ec)) {
    return Status::not_found(folder.string() + ": no such skill folder");
  }
  if (!fs::is_regular_file(file, ec)) {
    return Status::not_found(shown + ": no such file (every skill folder holds a skill.toml)");
  }
  auto text = read_text(file);
  if (!text) return text.status();

  auto parsed_root = parse_toml(*text, shown);
  if (!parsed_root) return parsed_root.status();
  toml::table root = std::move(parsed_root.value());

  Reader r(shown);
  const std::vector<std::string> known = {"name",     "description", "kernel_types", "knobs",
                                          "families", "opt_in",      "moves"};
  for (const auto& [k, _] : root) {
    const std::string key(k.str());
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Status::invalid_argument(shown + ": field '" + key +
                                      "': unknown field; expected one of: " + join(known));
    }
  }

  Skill s;
  s.definition = *text;
  // The folder's own name, even when `folder` ends in a separator.
  const fs::path norm = folder.lexically_normal();
  const std::string folder_name =
      norm.has_filename() ? norm.filename().string() : norm.parent_path().filename().string();
  r.string(root, "name", s.name, true,
           "the skill's name (its folder's name, \"" + folder_name + "\")");
  if (!r.failed() && s.name != folder_name) {
    r.fail("name", "the folder's name \"" + folder_name + "\"", in_quotes(s.name));
  }
  if (!r.failed() && !is_skill_name(s.name)) {
    r.fail("name", "1-64 letters, digits, '-' or '_'", in_quotes(s.name));
  }
  r.string(root, "description", s.description, true, "a one-line description");
  if (!r.failed() && s.description.empty()) {
    r.fail("description", "a one-line description", "\"\"");
  }
  r.patterns(root, "kernel_types", s.kernel_types, true,
             "a non-empty array of kernel types (e.g. [\"gemm\", \"softmax\"]; [\"*\"] for all)");
  if (!r.failed() && s.kernel_types.empty()) {
    r.fail("kernel_types",
           "a non-empty array of kernel types (e.g. [\"gemm\", \"softmax\"]; [\"*\"] for all)",
           "[]");
  }
  r.patterns(root, "knobs", s.knobs, false,
             "an array of glob patterns over knob names (e.g. [\"TILE_*\"])");
  s.families = {"*"};  // documented default: every family
  r.patterns(root, "families", s.families, false,
             "an array of glob patterns over family names (e.g. [\"*\"])");
  if (const toml::node* n = root.get("opt_in"); n != nullptr && !r.failed()) {
    if (!n->is_boolean()) {
      r.fail("opt_in", "true or false", toml_describe(*n));
    } else {
      s.opt_in = n->as_boolean()->get();
    }
  }
  if (r.failed()) return r.status();

  const toml::node* moves = root.get("moves");
  const std::string moves_expected =
      "a table [moves] of move kind = weight (kinds: " + join(move_kinds()) + ")";
  if (moves == nullptr) {
    r.fail("moves", moves_expected, "nothing");
  } else if (!moves->is_table()) {
    r.fail("moves", moves_expected, toml_describe(*moves));
  } else if (moves->as_table()->empty()) {
    r.fail("moves", moves_expected, "an empty table");
  } else {
    for (const auto& [k, v] : *moves->as_table()) {
      const std::string kind(k.str());
      const std::string field = "moves." + kind;
      const auto& kinds = move_kinds();
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        r.fail_raw(field, "unknown move kind; expected one of: " + join(kinds));
        break;
      }
      double w = 0;
      if (v.is_integer()) {
        w = static_cast<double>(v.as_integer()->get());
      } else if (v.is_floating_point()) {
        w = v.as_floating_point()->get();
      } else {
        r.fail(field, "a weight > 0", toml_describe(v));
        break;
      }
      if (!(w > 0) || !std::isfinite(w)) {
        r.fail(field, "a weight > 0", toml_describe(v));
        break;
      }
      s.moves[kind] = w;
    }
  }
  if (r.failed()) return r.status();

  // Moves that change knobs are dead without knobs in scope, family switches without families.
  for (const char* kind : {"neighbour", "jump", "pair", "model"}) {
    if (s.moves.count(kind) != 0 && s.knobs.empty()) {
      r.fail("knobs", std::string("at least one knob pattern (move '") + kind + "' changes knobs)",
             "none");
    }
  }
  if (s.moves.count("family_switch") != 0 && s.families.empty()) {
    r.fail("families", "at least one family pattern (move 'family_switch' switches families)",
           "none");
  }
  if (r.failed()) return r.status();

  const fs::path guidance = folder / "SKILL.md";
  const std::string guidance_shown = guidance.lexically_normal().string();
  if (!fs::is_regular_file(guidance, ec)) {
    return Status::not_found(guidance_shown +
                             ": no such file (every skill folder holds its SKILL.md guidance)");
  }
  auto md = read_text(guidance);
  if (!md) return md.status();
  if (std::all_of(md->begin(), md->end(),
                  [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; })) {
    return Status::invalid_argument(guidance_shown +
                                    ": expected guidance text for the skill, got an empty file");
  }
  s.guidance = std::move(*md);
  return s;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point (the last '*'): linear in practice, and no
  // recursion for patterns with many stars.
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool Skill::eligible_for(const std::string& kernel_type) const {
  return any_match(kernel_types, kernel_type);
}

bool Skill::may_touch_knob(const std::string& knob) const { return any_match(knobs, knob); }

bool Skill::may_use_family(const std::string& family) const { return any_match(families, family); }

Result<Skill> load_skill(const std::filesystem::path& folder) {
  try {
    return load_skill_impl(folder);
  } catch (const std::exception& e) {
    return Status::internal(folder.string() + ": loading the skill failed: " + e.what());
  }
}

Result<std::vector<Skill>> load_skills(const std::filesystem::path& root) {
  try {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      return Status::not_found(root.string() + ": no such skills folder");
    }
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.') continue;  // editor and VCS folders
      if (it->is_directory(ec)) folders.push_back(it->path());
    }
    if (ec) return Status::io_error(root.string() + ": cannot list the folder: " + ec.message());
    if (folders.empty()) {
      return Status::not_found(root.string() +
                               ": expected one folder per skill (skill.toml + SKILL.md), got none");
    }
    std::sort(folders.begin(), folders.end());
    std::vector<Skill> skills;
    for (const auto& f : folders) {
      auto s = load_skill(f);
      if (!s) return s.status();
      skills.push_back(std::move(*s));
    }
    std::sort(skills.begin(), skills.end(),
              [](const Skill& a, const Skill& b) { return a.name < b.name; });
    return skills;
  } catch (const std::exception& e) {
    return Status::internal(root.string() + ": loading skills failed: " + e.what());
  }
}

}  // namespace arc::skills
