// The worker process (eval/worker.h): its setup (descriptors, limits, the fatal-signal report)
// and the frame loop, written once for every backend (eval/device.h).
#include "eval/worker.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "eval/device.h"
#include "eval/protocol.h"

namespace arc::eval {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Fatal-signal report. The handler may only make async-signal-safe calls: it formats into
// static buffers and writes one frame (< PIPE_BUF, so atomic) to the reply pipe, then lets the
// signal kill the process as it would have, so the parent still sees the signal in waitpid.

int g_out_fd = -1;
alignas(64) char g_alt_stack[1 << 16];  // a stack overflow needs a stack to report on
char g_status_buf[8192];

size_t put_text(char* buf, size_t pos, size_t cap, const char* s) {
  while (*s != '\0' && pos < cap) buf[pos++] = *s++;
  return pos;
}

size_t put_u64(char* buf, size_t pos, size_t cap, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0 && pos < cap) buf[pos++] = digits[--n];
  return pos;
}

// "VmSize:   123456 kB" -> 123456, read from /proc/self/status; 0 when unreadable.
uint64_t proc_status_kb(const char* key) {
  int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t len = 0;
  for (;;) {
    ssize_t n = ::read(fd, g_status_buf + len, sizeof g_status_buf - 1 - len);
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  g_status_buf[len] = '\0';
  size_t key_len = 0;
  while (key[key_len] != '\0') ++key_len;
  for (size_t i = 0; i + key_len < len; ++i) {
    if ((i == 0 || g_status_buf[i - 1] == '\n') &&
        std::memcmp(g_status_buf + i, key, key_len) == 0) {
      uint64_t v = 0;
      for (size_t j = i + key_len; j < len && g_status_buf[j] != '\n'; ++j) {
        if (g_status_buf[j] >= '0' && g_status_buf[j] <= '9') {
          v = v * 10 + static_cast<uint64_t>(g_status_buf[j] - '0');
        }
      }
      return v;
    }
  }
  return 0;
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  char frame[320];
  const size_t cap = sizeof frame;
  size_t pos = 4;
  pos = put_text(frame, pos, cap, "{\"op\":\"fatal\",\"signal\":");
  pos = put_u64(frame, pos, cap, static_cast<uint64_t>(sig));
  pos = put_text(frame, pos, cap, ",\"address\":");
  pos = put_u64(frame, pos, cap,
                reinterpret_cast<uintptr_t>(info != nullptr ? info->si_addr : nullptr));
  pos = put_text(frame, pos, cap, ",\"vm_size_kb\":");
  pos = put_u64(frame, pos, cap, proc_status_kb("VmSize:"));
  pos = put_text(frame, pos, cap, ",\"vm_peak_kb\":");
  pos = put_u64(frame, pos, cap, proc_status_kb("VmPeak:"));
  pos = put_text(frame, pos, cap, "}");
  auto n = static_cast<uint32_t>(pos - 4);
  frame[0] = static_cast<char>(n & 0xff);
  frame[1] = static_cast<char>((n >> 8) & 0xff);
  frame[2] = frame[3] = 0;
  if (g_out_fd >= 0) {
    ssize_t unused = ::write(g_out_fd, frame, pos);
    (void)unused;
  }
  // SA_RESETHAND restored the default action; the raised signal is delivered on return.
  ::raise(sig);
}

void install_fatal_handlers() {
  stack_t ss{};
  ss.ss_sp = g_alt_stack;
  ss.ss_size = sizeof g_alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

// Moves fd to a number >= 3 (close-on-exec, so exec'd grandchildren do not inherit it).
int move_high(int fd) {
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return -1;
  if (moved != fd) ::close(fd);
  return moved;
}

// Progress and workload messages as frames on the reply pipe.
class FrameReporter : public Reporter {
 public:
  explicit FrameReporter(int out_fd) : out_fd_(out_fd) {}
  void progress(size_t position, const std::string& name, const char* phase) override {
    json p = {{"op", "progress"}, {"workload", position}, {"name", name}, {"phase", phase}};
    (void)write_message(out_fd_, p);
  }
  void workload(size_t position, const json& entry) override {
    (void)write_message(out_fd_, json{{"op", "workload"}, {"index", position}, {"result", entry}});
  }

 private:
  int out_fd_;
};

}  // namespace

void report_fatal_signals_to(int fd) { g_out_fd = fd; }

int serve_device(Device& device, int in_fd, int out_fd) {
  json ready = {{"op", "ready"}, {"pid", ::getpid()}};
  const Status started = device.start();
  device.describe(&ready);
  if (!started) {
    ready["op"] = "unavailable";
    ready["error"] = started.message();
  }
  if (!write_message(out_fd, ready)) return 3;
  if (!started) return 5;
  FrameReporter reporter(out_fd);
  for (;;) {
    auto msg = read_message(in_fd);
    if (!msg) return msg.status().code() == Status::Code::kUnavailable ? 0 : 2;
    json reply;
    bool exit_after = false;
    try {
      const std::string op = msg->value("op", "");
      if (op == "shutdown") return 0;
      if (op == "peaks") {
        reply = device.peaks();
      } else if (op == "evaluate") {
        reply = evaluate_request(device, *msg, reporter);
      } else {
        reply = {{"op", "error"}, {"error", "unknown op '" + op + "'"}};
      }
    } catch (const json::exception& e) {
      reply = {{"op", "error"}, {"error", std::string("malformed request: ") + e.what()}};
    } catch (const std::bad_alloc&) {
      reply = {{"op", "error"}, {"error", "the worker ran out of memory handling a request"}};
      exit_after = true;
    } catch (const std::exception& e) {
      reply = {{"op", "error"}, {"error", std::string("worker error: ") + e.what()}};
      exit_after = true;
    }
    if (!write_message(out_fd, reply)) return 3;
    // _exit: a tainted process must not run candidate-registered atexit handlers.
    if (exit_after || device.tainted()) ::_exit(0);
  }
}

int run_worker(const WorkerOptions& options) {
  // The protocol fds must survive the redirection of 0/1/2 below even if given as 0/1/2.
  int in_fd = move_high(options.in_fd);
  int out_fd = move_high(options.out_fd);
  if (in_fd < 0 || out_fd < 0) return 2;
  // Candidates may print gigabytes; none of it may reach the protocol or a terminal.
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::close(null_fd);
  }
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);  // a crashing candidate must not write core files
  uint64_t memory_limit_mb = options.memory_limit_mb;
  // AddressSanitizer reserves terabytes of shadow address space at start: under an
  // address-space limit every later allocation would fail, so a sanitizer build runs its
  // workers without one (and its out-of-memory tests skip, saying so).
  if (kAddressSanitizer) memory_limit_mb = 0;
  if (memory_limit_mb > 0) {
    rlimit cur{};
    ::getrlimit(RLIMIT_AS, &cur);
    rlim_t want = static_cast<rlim_t>(memory_limit_mb) << 20;
    // Hard limit too: a candidate must not be able to raise its own ceiling.
    if (cur.rlim_max != RLIM_INFINITY) want = std::min(want, cur.rlim_max);
    rlimit lim{want, want};
    ::setrlimit(RLIMIT_AS, &lim);
  }
  g_out_fd = out_fd;
  install_fatal_handlers();
  try {
    std::unique_ptr<Device> device = options.backend == "cuda"
                                         ? make_cuda_device(options.cache_dir, options.device)
                                         : make_host_device(memory_limit_mb);
    return serve_device(*device, in_fd, out_fd);
  } catch (...) {
    return 4;
  }
}

}  // namespace arc::eval
