#pragma once
// The remote worker protocol's pure parts: what an engine (eval/remote_evaluator.h) and an
// `arc-eval --serve` worker (eval/remote_worker.h) say to each other over CAF's network layer,
// without CAF. Only CAF's builtin types cross the network: atoms (eval/remote_atoms.h),
// strings and integers; results travel as event frames (events/codec.h: CRC + FlatBuffers,
// verified on receipt).
//
// Messages (request -> reply; every failure is a caf::error whose context is one string):
//   (hello, client_nonce)            -> (worker_nonce, worker_proof)
//   (login, worker_nonce, client_proof) -> session token
//   (attach, token, attach JSON)     -> identity JSON {"name","device","device_model","device_key"}
//   (peaks, token, problem_hash)     -> frame of PeaksMeasured
//   (compile, token, problem_hash, candidate canonical text, candidate hash)
//                                    -> frame of CompileFinished
//   (evaluate, token, problem_hash, evaluate JSON) -> frame of CandidateEvaluated
// Authentication, both ways, before anything else: nonces are 32 random bytes as 64 hex
// digits, single-use; worker_proof = HMAC-SHA256(secret, "arc-worker" | client_nonce |
// worker_nonce), client_proof = HMAC-SHA256(secret, "arc-client" | worker_nonce |
// client_nonce), each part framed by append_key_part (base/sha256.h). The client checks the
// worker's proof before it proves anything itself, so a worker without the secret learns
// nothing and can inject no result; the worker answers the client's proof with a fresh random
// token that only the actor that logged in may present. Nothing else is served without one.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "eval/evaluator.h"
#include "problem/problem.h"

namespace arc::eval {

// A worker's address: "host:port".
struct RemoteEndpoint {
  std::string host;
  uint16_t port = 0;
  // "host:port" ("[v6]:port" for an IPv6 address).
  std::string text() const;
};

// "HOST:PORT" ("[V6ADDR]:PORT" too) with a port 1..65535; errors name the text and what was
// expected.
Result<RemoteEndpoint> parse_worker_endpoint(const std::string& text);
// `arc-eval --serve` ADDR:PORT, ":PORT" or "PORT" (ADDR defaults to 127.0.0.1); port 0 lets the
// system choose. Errors name --serve, the text and what was expected.
Result<RemoteEndpoint> parse_serve_address(const std::string& text);

// 64 lowercase hex digits: the form of nonces and session tokens.
bool is_remote_nonce(const std::string& text);
// The worker's proof of the secret, and the client's (the file comment says over what).
std::string remote_worker_proof(std::string_view secret, std::string_view client_nonce,
                                std::string_view worker_nonce);
std::string remote_client_proof(std::string_view secret, std::string_view worker_nonce,
                                std::string_view client_nonce);

// What a worker needs to rebuild a problem: its folder as the engine names it (for the copy's
// names), its hash, and every file load_problem read (problem::Problem::files).
struct AttachRequest {
  std::string problem_dir;
  std::string problem_hash;
  std::map<std::string, std::string> files;
};
// {"problem_dir","problem_hash","files":{path: bytes}}; fails naming a file that is not UTF-8.
Result<std::string> attach_json(const problem::Problem& problem);
Result<AttachRequest> parse_attach(std::string_view text);

// What the worker measures with, from its evaluator.
struct RemoteIdentity {
  std::string name;  // the backend: "host", "cuda", "replay"
  std::string device;
  std::string device_model;
  std::string device_key;
};
std::string identity_json(const RemoteIdentity& id);
Result<RemoteIdentity> parse_identity(std::string_view text);

// {"candidate": canonical text, "candidate_hash", "input_seed", "settings": {every EvalSettings
// field}}; parsing checks every field's type and that the hash is the candidate's.
std::string evaluate_request_json(const EvalRequest& request);
Result<EvalRequest> parse_evaluate_request(std::string_view text);
// The candidate in canonical text, checked against its claimed hash.
Result<problem::Candidate> parse_remote_candidate(std::string_view canonical,
                                                  const std::string& hash);

}  // namespace arc::eval
