#pragma once
// The shared secret of remote workers (eval/remote_worker.h, eval/remote_evaluator.h): a file
// that both the engine and every `arc-eval --serve` hold, never sent over the network (each side
// proves it knows the secret by an HMAC over fresh nonces, eval/remote_protocol.h). Only its
// owner may read it: a secret that others could read proves nothing.
#include <filesystem>
#include <string>

#include "base/status.h"

namespace arc::eval {

// Secrets shorter than this are refused (write_new_worker_secret() writes 64 hex digits).
inline constexpr size_t kMinWorkerSecretChars = 32;

// The secret in `path`, without a trailing newline. Fails, naming the file, when it is missing,
// not a regular file, readable or writable by group or others ("chmod 600 FILE"), or holds fewer
// than kMinWorkerSecretChars characters.
Result<std::string> read_worker_secret(const std::filesystem::path& path);

// Writes a new secret to `path`: 32 random bytes from /dev/urandom as 64 hex digits and a
// newline, in a file created with mode 0600 (its folder is created, mode 0700, if missing).
// Refuses to overwrite an existing file.
Status write_new_worker_secret(const std::filesystem::path& path);

// $ARC_WORKER_SECRET_FILE, else $XDG_CONFIG_HOME/kernelarc/worker.secret, else
// ~/.config/kernelarc/worker.secret (relative to the working folder when HOME is unset).
std::filesystem::path default_worker_secret_path();

}  // namespace arc::eval
