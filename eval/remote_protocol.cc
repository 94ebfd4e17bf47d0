// The remote worker protocol's pure parts (eval/remote_protocol.h).
#include "eval/remote_protocol.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "base/hmac.h"
#include "base/sha256.h"

namespace arc::eval {

using nlohmann::json;

namespace {

constexpr char kWorkerRole[] = "arc-worker";
constexpr char kClientRole[] = "arc-client";

std::string proof(std::string_view secret, const char* role, std::string_view first,
                  std::string_view second) {
  std::string material;
  append_key_part(material, role);
  append_key_part(material, first);
  append_key_part(material, second);
  return hmac_sha256_hex(secret, material);
}

// host and port text of "host:port" / "[v6]:port"; false when there is no port separator.
bool split_host_port(const std::string& text, std::string* host, std::string* port) {
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return false;
    }
    *host = text.substr(1, close - 1);
    *port = text.substr(close + 2);
    return true;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  *host = text.substr(0, colon);
  if (host->find(':') != std::string::npos) return false;  // IPv6 needs brackets
  *port = text.substr(colon + 1);
  return true;
}

bool parse_port(const std::string& text, uint32_t* port) {
  if (text.empty() || text.size() > 5) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *port);
  return ec == std::errc() && end == text.data() + text.size() && *port <= 65535;
}

Status bad_field(const std::string& what, const std::string& field, const std::string& expected) {
  return Status::invalid_argument(what + ": field '" + field + "': expected " + expected);
}

// The string member `key` of `j`, or why not.
Status get_string(const json& j, const std::string& what, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return bad_field(what, key, "a string");
  *out = it->get<std::string>();
  return Status::ok();
}

template <class T>
Status get_number(const json& j, const std::string& what, const char* key, T* out) {
  auto it = j.find(key);
  bool ok =
      it != j.end() && (std::is_floating_point_v<T> ? it->is_number() : it->is_number_unsigned());
  if (ok && !std::is_floating_point_v<T>) {
    ok = it->template get<uint64_t>() <= std::numeric_limits<T>::max();
  }
  if (!ok) {
    return bad_field(what, key,
                     std::is_floating_point_v<T> ? "a number" : "a non-negative integer");
  }
  *out = it->get<T>();
  return Status::ok();
}

}  // namespace

std::string RemoteEndpoint::text() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<RemoteEndpoint> parse_worker_endpoint(const std::string& text) {
  std::string host, port_text;
  uint32_t port = 0;
  if (!split_host_port(text, &host, &port_text) || host.empty() || !parse_port(port_text, &port) ||
      port == 0) {
    return Status::invalid_argument("remote worker \"" + text +
                                    "\": expected HOST:PORT with a port 1..65535");
  }
  return RemoteEndpoint{host, static_cast<uint16_t>(port)};
}

Result<RemoteEndpoint> parse_serve_address(const std::string& text) {
  std::string host, port_text;
  if (!split_host_port(text, &host, &port_text)) port_text = text;  // "PORT"
  if (host.empty()) host = "127.0.0.1";
  uint32_t port = 0;
  if (!parse_port(port_text, &port)) {
    return Status::invalid_argument("--serve \"" + text +
                                    "\": expected [ADDR]:PORT with a port 0..65535 (0: any free "
                                    "port)");
  }
  return RemoteEndpoint{host, static_cast<uint16_t>(port)};
}

bool is_remote_nonce(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string remote_worker_proof(std::string_view secret, std::string_view client_nonce,
                                std::string_view worker_nonce) {
  return proof(secret, kWorkerRole, client_nonce, worker_nonce);
}

std::string remote_client_proof(std::string_view secret, std::string_view worker_nonce,
                                std::string_view client_nonce) {
  return proof(secret, kClientRole, worker_nonce, client_nonce);
}

Result<std::string> attach_json(const problem::Problem& problem) {
  json j = {{"problem_dir", problem.dir.string()},
            {"problem_hash", problem.hash},
            {"files", problem.files}};
  try {
    return j.dump();
  } catch (const json::exception& e) {
    return Status::invalid_argument("problem " + problem.dir.string() +
                                    ": a file is not UTF-8 text and cannot be sent to a remote "
                                    "worker (" +
                                    e.what() + ")");
  }
}

Result<AttachRequest> parse_attach(std::string_view text) {
  const std::string what = "attach request";
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::invalid_argument(what + ": expected a JSON object");
  AttachRequest r;
  if (auto s = get_string(j, what, "problem_dir", &r.problem_dir); !s) return s;
  if (auto s = get_string(j, what, "problem_hash", &r.problem_hash); !s) return s;
  auto files = j.find("files");
  if (files == j.end() || !files->is_object() || files->empty()) {
    return bad_field(what, "files", "a non-empty object of path -> text");
  }
  for (const auto& [path, bytes] : files->items()) {
    if (!bytes.is_string()) return bad_field(what, "files[\"" + path + "\"]", "a string");
    r.files[path] = bytes.get<std::string>();
  }
  if (r.files.count("problem.toml") == 0) {
    return bad_field(what, "files", "an entry for problem.toml");
  }
  return r;
}

std::string identity_json(const RemoteIdentity& id) {
  return json{{"name", id.name},
              {"device", id.device},
              {"device_model", id.device_model},
              {"device_key", id.device_key}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<RemoteIdentity> parse_identity(std::string_view text) {
  const std::string what = "the worker's attach reply";
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::invalid_argument(what + ": expected a JSON object");
  RemoteIdentity id;
  if (auto s = get_string(j, what, "name", &id.name); !s) return s;
  if (auto s = get_string(j, what, "device", &id.device); !s) return s;
  if (auto s = get_string(j, what, "device_model", &id.device_model); !s) return s;
  if (auto s = get_string(j, what, "device_key", &id.device_key); !s) return s;
  return id;
}

std::string evaluate_request_json(const EvalRequest& request) {
  const EvalSettings& s = request.settings;
  return json{{"candidate", request.candidate.canonical()},
              {"candidate_hash", request.candidate_hash},
              {"input_seed", request.input_seed},
              {"settings",
               {{"rounds", s.rounds},
                {"warmup", s.warmup},
                {"repetitions", s.repetitions},
                {"buffer_sets", s.buffer_sets},
                {"timeout_s", s.timeout_s},
                {"memory_limit_mb", s.memory_limit_mb},
                {"flush_cache", s.flush_cache},
                {"timing", s.timing}}}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<problem::Candidate> parse_remote_candidate(std::string_view canonical,
                                                  const std::string& hash) {
  auto c = problem::Candidate::from_canonical(canonical);
  if (!c) return c.status();
  const std::string actual = c->hash();
  if (actual != hash) {
    return Status::invalid_argument("candidate " + problem::short_hash(hash) +
                                    ": its canonical text hashes to " +
                                    problem::short_hash(actual));
  }
  return c;
}

Result<EvalRequest> parse_evaluate_request(std::string_view text) {
  const std::string what = "evaluate request";
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::invalid_argument(what + ": expected a JSON object");
  EvalRequest r;
  std::string canonical;
  if (auto s = get_string(j, what, "candidate", &canonical); !s) return s;
  if (auto s = get_string(j, what, "candidate_hash", &r.candidate_hash); !s) return s;
  if (auto s = get_number(j, what, "input_seed", &r.input_seed); !s) return s;
  auto c = parse_remote_candidate(canonical, r.candidate_hash);
  if (!c) return c.status();
  r.candidate = std::move(c.value());
  auto settings = j.find("settings");
  if (settings == j.end() || !settings->is_object()) {
    return bad_field(what, "settings", "an object");
  }
  const json& js = *settings;
  const std::string sw = what + " settings";
  EvalSettings& s = r.settings;
  if (auto st = get_number(js, sw, "rounds", &s.rounds); !st) return st;
  if (auto st = get_number(js, sw, "warmup", &s.warmup); !st) return st;
  if (auto st = get_number(js, sw, "repetitions", &s.repetitions); !st) return st;
  if (auto st = get_number(js, sw, "buffer_sets", &s.buffer_sets); !st) return st;
  if (auto st = get_number(js, sw, "timeout_s", &s.timeout_s); !st) return st;
  if (auto st = get_number(js, sw, "memory_limit_mb", &s.memory_limit_mb); !st) return st;
  if (auto st = get_string(js, sw, "timing", &s.timing); !st) return st;
  auto flush = js.find("flush_cache");
  if (flush == js.end() || !flush->is_boolean()) return bad_field(sw, "flush_cache", "a boolean");
  s.flush_cache = flush->get<bool>();
  if (!(s.timeout_s > 0)) return bad_field(sw, "timeout_s", "a number of seconds above 0");
  return r;
}

}  // namespace arc::eval
