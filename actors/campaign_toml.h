#pragma once
// Reading and writing campaign files (docs/campaign-format.md), shared by the campaign's own
// sections (actors/campaign_config.cc) and each agent backend's section and per-agent fields
// (actors/<name>_backend.cc). Errors read "<file>: field '<field>': expected <what>, got <what
// was there>" (base/toml_text.h); the first one wins, later checks do nothing.
#include <cassert>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

#include "base/toml_text.h"

namespace arc::actors {

// One table of a campaign file and the name its fields are reported under: "campaign", "llm",
// "agents[2]", or "" for the root. `table` is null when the file has no such table.
struct CampaignTable {
  const toml::table* table = nullptr;
  std::string prefix;
  // The field `key` of this table as errors name it ("llm.model", "agents[2].command").
  std::string field(const std::string& key) const {
    return prefix.empty() ? key : prefix + "." + key;
  }
};

class CampaignReader : public FieldErrors {
 public:
  // `file`: the campaign file (absolute), named in errors and anchoring relative paths.
  CampaignReader(const toml::table& root, std::filesystem::path file);

  const std::filesystem::path& file() const { return file_; }
  CampaignTable root() const { return {&root_, ""}; }
  // The root's table `name`; absent is an error when `required`, a non-table always is.
  CampaignTable table(const std::string& name, bool required);

  // Reads `key` of `t` into `out` (left as is when absent and not `required`): a string or a
  // boolean. Nothing happens after an error or when `t` is absent.
  template <class T>
  void get(const CampaignTable& t, const std::string& key, T& out, bool required,
           const std::string& expected);
  // Numeric fields, each within its documented range (base/numeric_range.h;
  // docs/campaign-format.md): `out` is left as is when absent. An integer field into an
  // unsigned T that holds every value of `range`; a number (a float or an integer) field.
  template <class T>
  void integer(const CampaignTable& t, const std::string& key, T& out, const IntegerRange& range);
  void number(const CampaignTable& t, const std::string& key, double& out,
              const NumberRange& range);
  // A bound: an integer within `range` or the string "unbounded" (stored as 0).
  void bound(const CampaignTable& t, const std::string& key, uint32_t& out,
             const IntegerRange& range);
  // A non-empty array of non-empty strings (a command and its arguments), when present;
  // `out` is left as is when absent.
  void strings(const CampaignTable& t, const std::string& key, std::vector<std::string>& out,
               const std::string& expected);
  // Fails on the first field of `t` not in `known`, listing them.
  void known_fields(const CampaignTable& t, const std::set<std::string>& known);

  // `path` as written in the campaign file: relative to the file's folder, made canonical
  // where the system allows (else normalised as written; opening it later reports the error).
  std::filesystem::path resolve(const std::filesystem::path& path) const;

  // What a node is, as errors say it: "a string (\"x\")", "an integer (3)", "an array", ...
  static std::string type_name(const toml::node& n);

 private:
  const toml::table& root_;
  std::filesystem::path file_;
};

// Values as campaign_text writes them, so that parse_campaign reads back the same value.
std::string toml_string(const std::string& s);                // quoted, escaped
std::string toml_strings(const std::vector<std::string>& v);  // ["a", "b"]
std::string toml_number(double v);                            // shortest exact form

template <class T>
void CampaignReader::get(const CampaignTable& t, const std::string& key, T& out, bool required,
                         const std::string& expected) {
  if (failed() || t.table == nullptr) return;
  const std::string field = t.field(key);
  const toml::node* n = t.table->get(key);
  if (n == nullptr) {
    if (required) fail(field, expected, "nothing");
    return;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!n->is_string()) {
      fail(field, expected, type_name(*n));
      return;
    }
    out = n->as_string()->get();
  } else {
    static_assert(std::is_same_v<T, bool>, "numeric fields are read by integer() or number()");
    if (!n->is_boolean()) {
      fail(field, expected, type_name(*n));
      return;
    }
    out = n->as_boolean()->get();
  }
}

template <class T>
void CampaignReader::integer(const CampaignTable& t, const std::string& key, T& out,
                             const IntegerRange& range) {
  static_assert(std::is_unsigned_v<T>, "a campaign integer field is unsigned");
  if (failed() || t.table == nullptr) return;
  const toml::node* n = t.table->get(key);
  assert(range.lo >= 0 && range.hi <= std::numeric_limits<T>::max());
  int64_t v = 0;
  if (n == nullptr || !integer_in(*n, t.field(key), range, v)) return;
  out = static_cast<T>(v);
}

}  // namespace arc::actors
