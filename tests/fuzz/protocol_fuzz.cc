// libFuzzer: the evaluator protocol's reader on arbitrary bytes from the worker's pipe; every
// frame either decodes or is refused with a status, and the reader never blocks or crashes.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "eval/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 60000) return 0;  // stays within one pipe buffer, so the write never blocks
  int fds[2];
  if (pipe(fds) != 0) return 0;
  if (size > 0 && write(fds[1], data, size) != static_cast<ssize_t>(size)) __builtin_trap();
  close(fds[1]);
  for (int i = 0; i < 64; ++i) {
    auto msg = arc::eval::read_message(fds[0], arc::eval::deadline_after(1.0));
    if (!msg) break;
    (void)msg->dump();
  }
  close(fds[0]);
  return 0;
}
