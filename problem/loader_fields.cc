// Loader: reading typed fields from TOML tables, each failure worded by FieldErrors.
#include <algorithm>
#include <system_error>

#include "problem/loader.h"

namespace arc::problem {

std::string Loader::at(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

bool Loader::known_fields(const toml::table& t, const std::string& prefix,
                          const std::vector<std::string>& known) {
  for (const auto& [k, _] : t) {
    const std::string key(k.str());
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return fail_raw(at(prefix, key), "unknown field; expected one of: " + join(known, false));
    }
  }
  return !failed();
}

bool Loader::string(const toml::table& t, const std::string& prefix, const std::string& key,
                    std::string& out, bool required, const std::string& expected) {
  if (failed()) return false;
  const toml::node* n = t.get(key);
  if (n == nullptr) return required ? fail(at(prefix, key), expected, "nothing") : true;
  if (!n->is_string()) return fail(at(prefix, key), expected, toml_describe(*n));
  out = n->as_string()->get();
  return true;
}

bool Loader::number(const toml::table& t, const std::string& prefix, const std::string& key,
                    double& out, const NumberRange& range) {
  if (failed()) return false;
  const toml::node* n = t.get(key);
  return n == nullptr || number_in(*n, at(prefix, key), range, out);
}

bool Loader::string_array(const toml::table& t, const std::string& prefix, const std::string& key,
                          std::vector<std::string>& out, bool required,
                          const std::string& expected) {
  if (failed()) return false;
  const toml::node* n = t.get(key);
  const std::string field = at(prefix, key);
  if (n == nullptr) return required ? fail(field, expected, "nothing") : true;
  if (!n->is_array()) return fail(field, expected, toml_describe(*n));
  out.clear();
  size_t i = 0;
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_string()) {
      return fail(field + "[" + std::to_string(i) + "]", "a string", toml_describe(e));
    }
    out.push_back(e.as_string()->get());
    ++i;
  }
  return true;
}

bool Loader::define_text(const toml::node& n, const std::string& field, std::string& out) {
  if (n.is_string()) {
    out = n.as_string()->get();
  } else if (n.is_integer()) {
    out = std::to_string(n.as_integer()->get());
  } else {
    return fail(field, "a string or an integer (the text of a -D define)", toml_describe(n));
  }
  if (!is_define_value(out)) {
    return fail(field, "a non-empty value without spaces or control characters", in_quotes(out));
  }
  return true;
}

const toml::table* Loader::table(const toml::table& t, const std::string& prefix,
                                 const std::string& key, bool required) {
  if (failed()) return nullptr;
  const toml::node* n = t.get(key);
  if (n == nullptr) {
    if (required) fail(at(prefix, key), "a table [" + at(prefix, key) + "]", "nothing");
    return nullptr;
  }
  if (!n->is_table()) {
    fail(at(prefix, key), "a table", toml_describe(*n));
    return nullptr;
  }
  return n->as_table();
}

const toml::array* Loader::tables(const toml::table& t, const std::string& prefix,
                                  const std::string& key, bool required) {
  if (failed()) return nullptr;
  const std::string field = at(prefix, key);
  const toml::node* n = t.get(key);
  const std::string expected = "an array of tables [[" + field + "]]";
  if (n == nullptr) {
    if (required) fail(field, "at least one [[" + field + "]] entry", "nothing");
    return nullptr;
  }
  if (!n->is_array()) {
    fail(field, expected, toml_describe(*n));
    return nullptr;
  }
  const toml::array* a = n->as_array();
  if (a->empty() && required) {
    fail(field, "at least one [[" + field + "]] entry", "none");
    return nullptr;
  }
  size_t i = 0;
  for (const toml::node& e : *a) {
    if (!e.is_table()) {
      fail(field + "[" + std::to_string(i) + "]", "a table", toml_describe(e));
      return nullptr;
    }
    ++i;
  }
  return a;
}

bool Loader::file(const std::string& field, const std::string& rel, fs::path& out) {
  if (failed()) return false;
  if (rel.empty()) return fail(field, "a path relative to the problem folder", "\"\"");
  const fs::path p = (dir_ / rel).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    return fail(field, "an existing file relative to " + dir_.string(),
                in_quotes(rel) + " (" + p.string() + " not found)");
  }
  out = p;
  referenced_[fs::path(rel).lexically_normal().generic_string()] = p;
  return true;
}

}  // namespace arc::problem
