#pragma once
// The serving side of remote evaluation (DESIGN.md §9): `arc-eval --serve ADDR:PORT` publishes a
// worker actor over CAF's network layer (caf::io) for engines on other hosts
// (eval/remote_evaluator.h). The worker authenticates every peer by a challenge-response over
// the shared secret (eval/worker_secret.h; the protocol: eval/remote_protocol.h) and serves
// nothing before; it then takes problems (their files, written into a private folder and loaded
// there, the hash checked), and compiles, checks and times candidates with the same local
// evaluator an engine would use (eval/evaluators.h: the backend, the compile cache and the
// sandbox), so a candidate measured remotely runs in exactly the sandbox and isolated
// `arc-eval --worker` process a local one does.
//
// The worker actor is detached (a thread of its own, which blocks on evaluations) and serves one
// request at a time. Refused requests are printed to stderr with the peer's node.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/sandbox.h"

namespace arc::eval {

struct RemoteWorkerOptions {
  // Where to listen. 127.0.0.1 unless asked otherwise; 0.0.0.0 serves every interface.
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (the one chosen is printed)
  // The local backend: "host", "cuda", "replay" or "synthetic" (eval/evaluators.h).
  std::string backend = "host";
  // cuda: the ordinal of the GPU to serve (EvaluatorChoice::device, as arcd's local:N).
  int device = 0;
  std::vector<std::filesystem::path> replay_logs;  // replay: recorded run directories
  double synthetic_seconds = 0.5;     // synthetic: wall time per evaluation (arc-bench --workers)
  std::filesystem::path secret_file;  // empty: default_worker_secret_path()
  std::filesystem::path cache_dir;    // compile cache; empty: default_cache_dir()
  SandboxMode sandbox = SandboxMode::kAuto;  // kOn: refuse to serve without a sandbox
  size_t max_problems = 8;  // problems kept attached at once; the oldest goes first
};

// Reads the secret, detects the sandbox, starts an actor system with the io middleman, spawns
// and publishes the worker, prints exactly one line to stdout,
//   arc-eval: serving on HOST:PORT (device: ...)
// (flushed), then serves until SIGTERM or SIGINT. Environment that names or holds the secret
// (ARC_WORKER_SECRET_FILE, ARC_WORKER_SECRET) is removed before anything is started.
// Returns the exit status: 0 after a signal, 2 for a bad option or secret (the message, on
// stderr, names the flag or file), 1 when it cannot listen.
int serve_remote_worker(const RemoteWorkerOptions& options);

}  // namespace arc::eval
