#include "eval/candidate.h"

#include <nlohmann/json.hpp>

#include "storage/sha256.h"

namespace arc::eval {
namespace {

// JSON string literal, escaped exactly as nlohmann::json::dump() does.
void put_string(std::string& out, const std::string& s) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  bool plain = true;
  for (unsigned char c : s) plain &= c >= 0x20 && c != '"' && c != '\\';
  if (plain) {
    out += s;
    out += '"';
    return;
  }
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// Keys in sorted order: family < knobs < source.
void put_variant(std::string& out, const Variant& v) {
  out += '{';
  bool first = true;
  auto key = [&out, &first](const char* k) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += k;
    out += "\":";
  };
  if (!v.family.empty()) {
    key("family");
    put_string(out, v.family);
  }
  if (!v.knobs.empty()) {
    key("knobs");
    out += '{';
    bool first_knob = true;
    for (const auto& [n, val] : v.knobs) {
      if (!first_knob) out += ',';
      first_knob = false;
      put_string(out, n);
      out += ':';
      put_string(out, val);
    }
    out += '}';
  }
  if (!v.source.empty()) {
    key("source");
    put_string(out, v.source);
  }
  out += '}';
}

Result<Variant> variant_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Status::invalid_argument(where + ": expected an object");
  Variant v;
  for (const auto& [k, val] : j.items()) {
    if (k == "family") {
      if (!val.is_string()) return Status::invalid_argument(where + ".family: expected a string");
      v.family = val.get<std::string>();
    } else if (k == "source") {
      if (!val.is_string()) return Status::invalid_argument(where + ".source: expected a string");
      v.source = val.get<std::string>();
    } else if (k == "knobs") {
      if (!val.is_object()) return Status::invalid_argument(where + ".knobs: expected an object");
      for (const auto& [kn, kv] : val.items()) {
        if (!kv.is_string()) {
          return Status::invalid_argument(where + ".knobs." + kn + ": expected a string");
        }
        v.knobs[kn] = kv.get<std::string>();
      }
    } else {
      return Status::invalid_argument(where + ": unknown field '" + k + "'");
    }
  }
  if (v.family.empty() && v.source.empty()) {
    return Status::invalid_argument(where + ": expected 'family', 'source' or both");
  }
  return v;
}

}  // namespace

std::string Variant::key() const {
  std::string k = source.empty() ? family + "{"
                                 : "source:" + short_hash(storage::sha256_hex(source)) +
                                       (family.empty() ? "" : "@" + family) + "{";
  bool first = true;
  for (const auto& [n, v] : knobs) {
    if (!first) k += ",";
    first = false;
    k += n + "=" + v;
  }
  return k + "}";
}

const Variant& Candidate::variant_for(const std::string& workload) const {
  auto it = gates.find(workload);
  return it == gates.end() ? base : it->second;
}

std::string Candidate::canonical() const {
  // Written by hand (it is on the agents' hot path); byte-identical to nlohmann's dump() of
  // the same object with sorted keys, which the tests check.
  std::string out;
  out.reserve(128);
  out += "{\"base\":";
  put_variant(out, base);
  if (!gates.empty()) {
    out += ",\"gates\":{";
    bool first = true;
    for (const auto& [w, v] : gates) {
      if (!first) out += ',';
      first = false;
      put_string(out, w);
      out += ':';
      put_variant(out, v);
    }
    out += '}';
  }
  out += '}';
  return out;
}

std::string Candidate::hash() const { return storage::sha256_hex(canonical()); }

Result<Candidate> Candidate::from_canonical(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::invalid_argument("candidate: expected a JSON object");
  }
  Candidate c;
  if (!j.contains("base")) return Status::invalid_argument("candidate.base: missing");
  auto base = variant_from(j["base"], "candidate.base");
  if (!base) return base.status();
  c.base = std::move(base.value());
  if (j.contains("gates")) {
    if (!j["gates"].is_object()) {
      return Status::invalid_argument("candidate.gates: expected an object");
    }
    for (const auto& [w, vj] : j["gates"].items()) {
      auto v = variant_from(vj, "candidate.gates." + w);
      if (!v) return v.status();
      c.gates[w] = std::move(v.value());
    }
  }
  for (const auto& [k, _] : j.items()) {
    if (k != "base" && k != "gates") {
      return Status::invalid_argument("candidate: unknown field '" + k + "'");
    }
  }
  return c;
}

std::string short_hash(std::string_view hash) { return std::string(hash.substr(0, 12)); }

}  // namespace arc::eval
