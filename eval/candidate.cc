#include "eval/candidate.h"

#include <nlohmann/json.hpp>

#include "storage/sha256.h"

namespace arc::eval {
namespace {

nlohmann::json variant_json(const Variant& v) {
  nlohmann::json j = nlohmann::json::object();
  if (!v.family.empty()) j["family"] = v.family;
  if (!v.knobs.empty()) j["knobs"] = v.knobs;
  if (!v.source.empty()) j["source"] = v.source;
  return j;
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
  if (v.family.empty() == v.source.empty()) {
    return Status::invalid_argument(where + ": expected exactly one of 'family' and 'source'");
  }
  return v;
}

}  // namespace

std::string Variant::key() const {
  std::string k = source.empty() ? family + "{"
                                  : "source:" + short_hash(storage::sha256_hex(source)) + "{";
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
  nlohmann::json j = nlohmann::json::object();
  j["base"] = variant_json(base);
  if (!gates.empty()) {
    nlohmann::json g = nlohmann::json::object();
    for (const auto& [w, v] : gates) g[w] = variant_json(v);
    j["gates"] = std::move(g);
  }
  return j.dump();  // nlohmann objects are std::map-ordered: keys come out sorted
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
