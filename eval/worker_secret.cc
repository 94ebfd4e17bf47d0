// Reading and writing the workers' shared secret (eval/worker_secret.h).
#include "eval/worker_secret.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/secure_random.h"

namespace arc::eval {

namespace fs = std::filesystem;

Result<std::string> read_worker_secret(const fs::path& path) {
  const std::string name = path.string();
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0) {
    return Status::not_found("worker secret file " + name + ": " + strerror(errno) +
                             " (create one with arc-eval --new-secret " + name + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::invalid_argument("worker secret file " + name + ": expected a regular file");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return Status::invalid_argument("worker secret file " + name + ": mode " + mode +
                                    " lets group or others read or write it; run chmod 600 " +
                                    name);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status::io_error("worker secret file " + name + ": cannot read it");
  std::string secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < kMinWorkerSecretChars) {
    return Status::invalid_argument("worker secret file " + name + ": expected at least " +
                                    std::to_string(kMinWorkerSecretChars) +
                                    " characters of secret, got " + std::to_string(secret.size()));
  }
  return secret;
}

Status write_new_worker_secret(const fs::path& path) {
  const std::string name = path.string();
  auto secret = secure_random_hex(32);
  if (!secret) return secret.status();
  if (path.has_parent_path()) {
    std::error_code ec;
    if (!fs::exists(path.parent_path(), ec)) {
      fs::create_directories(path.parent_path(), ec);
      if (ec) {
        return Status::io_error("worker secret file " + name +
                                ": cannot create its folder: " + ec.message());
      }
      fs::permissions(path.parent_path(), fs::perms::owner_all, ec);
    }
  }
  // O_EXCL: an existing secret (or a link planted in its place) is never overwritten.
  const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return Status::invalid_argument("worker secret file " + name +
                                      ": already exists; refusing to overwrite it");
    }
    return Status::io_error("worker secret file " + name + ": " + strerror(errno));
  }
  const std::string text = secret.value() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(name.c_str());
      return Status::io_error("worker secret file " + name + ": " + strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  // The umask may have narrowed 0600, never widened it; make it exactly 0600.
  (void)::fchmod(fd, 0600);
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed)
    return Status::io_error("worker secret file " + name + ": cannot sync it");
  return Status::ok();
}

fs::path default_worker_secret_path() {
  if (const char* f = std::getenv("ARC_WORKER_SECRET_FILE"); f != nullptr && *f != '\0') return f;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0') {
    return fs::path(x) / "kernelarc" / "worker.secret";
  }
  const char* h = std::getenv("HOME");
  const fs::path home = h != nullptr && *h != '\0' ? fs::path(h) : fs::path();
  return home / ".config" / "kernelarc" / "worker.secret";
}

}  // namespace arc::eval
