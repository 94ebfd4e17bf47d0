// Random hex from /dev/urandom (base/secure_random.h).
#include "base/secure_random.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "base/sha256.h"

namespace arc {

Result<std::string> secure_random_hex(size_t n) {
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::io_error(std::string("cannot open /dev/urandom: ") + strerror(errno));
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, bytes.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = r < 0 ? errno : 0;
      ::close(fd);
      return Status::io_error("cannot read " + std::to_string(n) + " bytes from /dev/urandom: " +
                              (err != 0 ? strerror(err) : "end of file"));
    }
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return to_hex(bytes);
}

}  // namespace arc
