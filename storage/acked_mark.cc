#include "storage/acked_mark.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "events/codec.h"

namespace arc::storage {
namespace {

constexpr size_t kMarkBytes = 12;

std::string path_in(const std::string& dir) { return dir + "/ACKED"; }

void encode(uint64_t seq, unsigned char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(seq >> (8 * i));
  const uint32_t crc = events::crc32c(out, 8);
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<unsigned char>(crc >> (8 * i));
}

}  // namespace

Result<std::optional<uint64_t>> AckedMark::read(const std::string& dir) {
  const std::string path = path_in(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<uint64_t>();
    return Status::io_error(path + ": " + std::strerror(errno));
  }
  unsigned char b[kMarkBytes + 1];
  const ssize_t n = ::pread(fd, b, sizeof b, 0);
  ::close(fd);
  // Created but never written (a process killed between the two): no mark yet.
  if (n == 0) return std::optional<uint64_t>();
  if (n != static_cast<ssize_t>(kMarkBytes)) {
    return Status::corruption(path + ": expected the " + std::to_string(kMarkBytes) +
                              "-byte acknowledged-seq mark, got " + std::to_string(n < 0 ? 0 : n) +
                              " bytes");
  }
  uint64_t seq = 0;
  for (int i = 0; i < 8; ++i) seq |= static_cast<uint64_t>(b[i]) << (8 * i);
  unsigned char check[kMarkBytes];
  encode(seq, check);
  if (std::memcmp(check, b, kMarkBytes) != 0) {
    return Status::corruption(path + ": the acknowledged-seq mark fails its checksum");
  }
  return std::optional<uint64_t>(seq);
}

AckedMark::~AckedMark() {
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
  }
}

Status AckedMark::open(const std::string& dir) {
  path_ = path_in(dir);
  return Status::ok();
}

Status AckedMark::store(uint64_t seq) {
  if (path_.empty()) return Status::ok();
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Status::io_error(path_ + ": " + std::strerror(errno));
  }
  unsigned char b[kMarkBytes];
  encode(seq, b);
  if (::pwrite(fd_, b, kMarkBytes, 0) != static_cast<ssize_t>(kMarkBytes)) {
    return Status::io_error(path_ + ": writing the acknowledged seq: " + std::strerror(errno));
  }
  return Status::ok();
}

Status AckedMark::sync() {
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) {
    return Status::io_error(path_ + ": " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace arc::storage
