#include "problem/candidate.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "base/string_literal.h"

namespace arc::problem {
namespace {

// JSON string literal, escaped exactly as nlohmann::json::dump() does.
void put_string(std::string& out, const std::string& s) { out += string_literal(s); }

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

// A reader of exactly the text canonical() writes: sorted, unique keys, no whitespace, plain
// ASCII strings without escapes, no empty fields. It answers nothing (nullopt) for any other
// text, which the JSON parser then reads and judges, so both give the same candidate for every
// text this one accepts. Logs hold canonical forms, and every view and the guard read each one.
class CanonicalReader {
 public:
  explicit CanonicalReader(std::string_view t) : t_(t) {}

  std::optional<Candidate> read() {
    Candidate c;
    if (!literal("{\"base\":") || !variant(c.base)) return std::nullopt;
    if (literal(",\"gates\":{")) {
      std::string last;
      do {
        std::string w;
        if (!string(w) || (!c.gates.empty() && w <= last) || !literal(":")) return std::nullopt;
        Variant v;
        if (!variant(v)) return std::nullopt;
        last = w;
        c.gates.emplace_hint(c.gates.end(), std::move(w), std::move(v));
      } while (literal(","));
      if (!literal("}")) return std::nullopt;
    }
    if (!literal("}") || pos_ != t_.size()) return std::nullopt;
    return c;
  }

 private:
  bool literal(std::string_view l) {
    if (t_.substr(pos_, l.size()) != l) return false;
    pos_ += l.size();
    return true;
  }

  // A non-empty string of printable ASCII without quotes or backslashes.
  bool string(std::string& out) {
    if (!literal("\"")) return false;
    const size_t start = pos_;
    while (pos_ < t_.size()) {
      const unsigned char c = static_cast<unsigned char>(t_[pos_]);
      if (c == '"') break;
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;
      ++pos_;
    }
    if (pos_ >= t_.size() || pos_ == start) return false;
    out.assign(t_.substr(start, pos_ - start));
    ++pos_;
    return true;
  }

  bool variant(Variant& v) {
    if (!literal("{")) return false;
    bool any = false;
    if (literal("\"family\":")) {
      if (!string(v.family)) return false;
      any = true;
    }
    if (literal(any ? ",\"knobs\":{" : "\"knobs\":{")) {
      std::string last;
      do {
        std::string n, val;
        if (!string(n) || (!v.knobs.empty() && n <= last) || !literal(":") || !string(val)) {
          return false;
        }
        last = n;
        v.knobs.emplace_hint(v.knobs.end(), std::move(n), std::move(val));
      } while (literal(","));
      if (!literal("}")) return false;
      any = true;
    }
    if (literal(any ? ",\"source\":" : "\"source\":")) {
      if (!string(v.source)) return false;
    }
    // A family, a source or both (free source with the family's launches), as variant_from()
    // demands.
    return literal("}") && !(v.family.empty() && v.source.empty());
  }

  std::string_view t_;
  size_t pos_ = 0;
};

}  // namespace

std::string Variant::key() const {
  std::string k = source.empty() ? family + "{"
                                 : "source:" + short_hash(arc::sha256_hex(source)) +
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

std::string Candidate::hash() const { return arc::sha256_hex(canonical()); }

Result<Candidate> Candidate::from_canonical(std::string_view text) {
  if (auto c = CanonicalReader(text).read()) return std::move(*c);
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

}  // namespace arc::problem
