#include "storage/rocksdb_hooks.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <mutex>

#include <fcntl.h>
#include <rocksdb/env.h>
#include <rocksdb/listener.h>
#include <unistd.h>

namespace arc::storage {
namespace {

class InfoLog final : public rocksdb::Logger {
 public:
  explicit InfoLog(const std::string& file) : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {
    if (!file.empty()) fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }
  ~InfoLog() override {
    if (fd_ >= 0) ::close(fd_);
  }
  InfoLog(const InfoLog&) = delete;
  InfoLog& operator=(const InfoLog&) = delete;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (fd_ < 0) return;
    char line[1024];
    const int n = std::vsnprintf(line, sizeof line - 1, format, ap);
    if (n <= 0) return;
    size_t len = std::min(static_cast<size_t>(n), sizeof line - 2);
    if (line[len - 1] != '\n') line[len++] = '\n';
    std::lock_guard<std::mutex> lk(mu_);
    // O_APPEND: one write per line; a short or failed write (a full disk) is dropped.
    (void)!::write(fd_, line, len);
  }

 private:
  int fd_ = -1;
  std::mutex mu_;
};

class NoAutoRecovery final : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status /*error*/,
                            bool* auto_recovery) override {
    if (auto_recovery != nullptr) *auto_recovery = false;
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> make_info_log(const std::string& file) {
  return std::make_shared<InfoLog>(file);
}

std::shared_ptr<rocksdb::EventListener> make_no_auto_recovery_listener() {
  return std::make_shared<NoAutoRecovery>();
}

}  // namespace arc::storage
