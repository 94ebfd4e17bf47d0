#include "eval/protocol.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "eval/sigpipe_guard.h"

namespace arc::eval {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until fd is ready for `events` or the deadline passes.
Status wait_ready(int fd, short events, Deadline deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline != kNoDeadline) {
      auto now = Clock::now();
      if (now >= deadline) return Status::timeout("deadline passed");
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left + 1, 1, INT_MAX));
    }
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::io_error(std::string("poll: ") + std::strerror(errno));
    }
    if (r == 0) continue;  // re-check the deadline
    if (p.revents & POLLNVAL)
      return Status::io_error("poll: fd " + std::to_string(fd) + " is not open");
    return Status::ok();  // readable, writable, hung up or in error: read/write will say which
  }
}

Status write_all(int fd, const char* data, size_t size, Deadline deadline) {
  size_t done = 0;
  while (done < size) {
    size_t chunk = size - done;
    if (deadline != kNoDeadline) {
      if (Status s = wait_ready(fd, POLLOUT, deadline); !s) return s;
      // POLLOUT promises room for PIPE_BUF bytes; a larger write could block past the deadline.
      chunk = std::min<size_t>(chunk, PIPE_BUF);
    }
    ssize_t n = ::write(fd, data + done, chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EPIPE) return Status::unavailable("the reader closed the pipe");
      return Status::io_error(std::string("write: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

// Reads exactly `size` bytes. *got says how many arrived before a failure.
Status read_all(int fd, char* data, size_t size, Deadline deadline, size_t* got) {
  *got = 0;
  while (*got < size) {
    if (Status s = wait_ready(fd, POLLIN, deadline); !s) return s;
    ssize_t n = ::read(fd, data + *got, size - *got);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::io_error(std::string("read: ") + std::strerror(errno));
    }
    if (n == 0) return Status::unavailable("end of stream");
    *got += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace

Deadline deadline_after(double seconds) {
  if (!std::isfinite(seconds) || seconds > 1e9) return kNoDeadline;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(seconds, 0.0)));
}

Status write_frame(int fd, std::string_view payload, Deadline deadline) {
  if (payload.size() > kMaxMessageBytes) {
    return Status::invalid_argument("message of " + std::to_string(payload.size()) +
                                    " bytes exceeds the limit of " +
                                    std::to_string(kMaxMessageBytes) + " bytes");
  }
  auto n = static_cast<uint32_t>(payload.size());
  char header[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                    static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  SigpipeGuard guard;
  if (Status s = write_all(fd, header, sizeof header, deadline); !s) return s;
  return write_all(fd, payload.data(), payload.size(), deadline);
}

Result<std::string> read_frame(int fd, Deadline deadline) {
  unsigned char header[4];
  size_t got = 0;
  if (Status s = read_all(fd, reinterpret_cast<char*>(header), 4, deadline, &got); !s) {
    if (s.code() == Status::Code::kUnavailable && got > 0) {
      return Status::corruption("truncated frame: " + std::to_string(got) + " of 4 header bytes");
    }
    return s;
  }
  uint32_t n = uint32_t{header[0]} | (uint32_t{header[1]} << 8) | (uint32_t{header[2]} << 16) |
               (uint32_t{header[3]} << 24);
  if (n > kMaxMessageBytes) {
    return Status::corruption("frame length " + std::to_string(n) + " exceeds the limit of " +
                              std::to_string(kMaxMessageBytes) + " bytes");
  }
  std::string payload(n, '\0');
  if (Status s = read_all(fd, payload.data(), n, deadline, &got); !s) {
    if (s.code() == Status::Code::kUnavailable) {
      return Status::corruption("truncated frame: " + std::to_string(got) + " of " +
                                std::to_string(n) + " payload bytes");
    }
    return s;
  }
  return payload;
}

Status write_message(int fd, const nlohmann::json& message, Deadline deadline) {
  std::string text;
  try {
    // Replace invalid UTF-8 (a compiler message may carry any bytes) instead of throwing.
    text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Status::internal(std::string("cannot encode message: ") + e.what());
  }
  return write_frame(fd, text, deadline);
}

EvaluateSettings parse_evaluate_settings(const nlohmann::json& j) {
  EvaluateSettings r;
  r.input_seed = j.at("input_seed").get<uint64_t>();
  r.rounds = j.value("rounds", r.rounds);
  r.warmup = j.value("warmup", r.warmup);
  r.repetitions = j.value("repetitions", r.repetitions);
  r.buffer_sets = std::max<uint32_t>(1, j.value("buffer_sets", r.buffer_sets));
  r.flush_cache = j.value("flush_cache", r.flush_cache);
  r.timing = j.value("timing", r.timing);
  if (r.timing != "auto" && r.timing != "cuda_events" && r.timing != "cupti") {
    throw nlohmann::json::other_error::create(
        501, "timing \"" + r.timing + "\": expected \"auto\", \"cuda_events\" or \"cupti\"", &j);
  }
  const nlohmann::json& tol = j.at("tolerance");
  r.atol = tol.at("atol").get<double>();
  r.rtol = tol.at("rtol").get<double>();
  r.matched_ratio = tol.at("matched_ratio").get<double>();
  r.peak_bandwidth = j.value("peak_bandwidth_bytes_per_s", 0.0);
  r.peak_flops = j.value("peak_flops_per_s", 0.0);
  return r;
}

nlohmann::json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Result<nlohmann::json> read_message(int fd, Deadline deadline) {
  auto frame = read_frame(fd, deadline);
  if (!frame) return frame.status();
  auto j = nlohmann::json::parse(*frame, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    std::string head = frame->substr(0, 64);
    for (char& c : head) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '.';
    }
    return Status::corruption("frame of " + std::to_string(frame->size()) +
                              " bytes is not JSON (starts \"" + head + "\")");
  }
  return j;
}

}  // namespace arc::eval
