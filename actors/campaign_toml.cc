#include "actors/campaign_toml.h"

#include <cstdio>
#include <system_error>

#include "base/string_literal.h"

namespace arc::actors {

CampaignReader::CampaignReader(const toml::table& root, std::filesystem::path file)
    : FieldErrors(file.string()), root_(root), file_(std::move(file)) {}

CampaignTable CampaignReader::table(const std::string& name, bool required) {
  const toml::node* n = root_.get(name);
  if (n == nullptr) {
    if (required) fail(name, "a table [" + name + "]", "nothing");
    return {nullptr, name};
  }
  if (!n->is_table()) {
    fail(name, "a table", type_name(*n));
    return {nullptr, name};
  }
  return {n->as_table(), name};
}

void CampaignReader::number(const CampaignTable& t, const std::string& key, double& out,
                            const NumberRange& range) {
  if (failed() || t.table == nullptr) return;
  const toml::node* n = t.table->get(key);
  if (n != nullptr) number_in(*n, t.field(key), range, out);
}

void CampaignReader::bound(const CampaignTable& t, const std::string& key, uint32_t& out,
                           const IntegerRange& range) {
  if (failed() || t.table == nullptr) return;
  const toml::node* n = t.table->get(key);
  if (n == nullptr) return;
  if (n->is_string() && n->as_string()->get() == "unbounded") {
    out = 0;
    return;
  }
  if (n->is_integer() && range.contains(n->as_integer()->get())) {
    out = static_cast<uint32_t>(n->as_integer()->get());
    return;
  }
  fail(t.field(key), range.text() + " or \"unbounded\"", toml_describe(*n));
}

void CampaignReader::strings(const CampaignTable& t, const std::string& key,
                             std::vector<std::string>& out, const std::string& expected) {
  if (failed() || t.table == nullptr) return;
  const toml::node* n = t.table->get(key);
  if (n == nullptr) return;
  if (!n->is_array() || n->as_array()->empty()) {
    fail(t.field(key), expected, type_name(*n));
    return;
  }
  std::vector<std::string> read;
  for (const auto& item : *n->as_array()) {
    if (!item.is_string() || item.as_string()->get().empty()) {
      fail(t.field(key), expected, "an element that is " + type_name(item));
      return;
    }
    read.push_back(item.as_string()->get());
  }
  out = std::move(read);
}

void CampaignReader::known_fields(const CampaignTable& t, const std::set<std::string>& known) {
  if (failed() || t.table == nullptr) return;
  for (const auto& [k, _] : *t.table) {
    if (known.count(std::string(k.str())) == 0) {
      std::string list;
      for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
      fail_raw(t.field(std::string(k.str())), "unknown field; expected one of: " + list);
      return;
    }
  }
}

std::filesystem::path CampaignReader::resolve(const std::filesystem::path& path) const {
  const std::filesystem::path p = file_.parent_path() / path;
  std::error_code ec;
  std::filesystem::path r = std::filesystem::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

std::string CampaignReader::type_name(const toml::node& n) { return toml_type_name(n); }

std::string toml_string(const std::string& s) { return string_literal(s, true); }

std::string toml_strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : ", ") + toml_string(v[i]);
  return out + "]";
}

std::string toml_number(double v) { return shortest_number_text(v); }

}  // namespace arc::actors
