// arc-eval: the isolated evaluation worker (eval/worker.h).
//   arc-eval --worker --in FD --out FD [--memory-mb N]   serve the host evaluator's requests
//            [--backend host|cuda] [--cache DIR]         (cuda: eval/cuda_worker.h)
//            [--device N]                                (cuda: the GPU's ordinal)
//   arc-eval --peaks                                     print this host's peaks as JSON
//   arc-eval --serve [ADDR:]PORT [--backend host|cuda|replay|synthetic] [--device N]
//            [--replay RUN_DIR...] [--synthetic-seconds S]
//            [--secret-file F] [--cache DIR] [--sandbox auto|on|require|off]
//                                     serve engines on other hosts (eval/remote_worker.h)
//   arc-eval --new-secret [FILE]      write a new worker secret (eval/worker_secret.h; default:
//                                     $ARC_WORKER_SECRET_FILE, else ~/.config/kernelarc/...)
// Exit status: 0 done, 2 bad arguments or protocol error, 3 reply pipe closed; --serve: 1 when
// it cannot listen.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "eval/remote_protocol.h"
#include "eval/remote_worker.h"
#include "eval/worker.h"
#include "eval/worker_secret.h"

namespace {

bool parse_number(const char* text, long long* out) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "arc-eval: %s\nusage: arc-eval --worker --in FD --out FD [--memory-mb N]\n"
               "                [--backend host|cuda] [--cache DIR] [--device N]\n"
               "       arc-eval --peaks\n"
               "       arc-eval --serve [ADDR:]PORT [--backend host|cuda|replay|synthetic]\n"
               "                [--device N] [--replay RUN_DIR...] [--synthetic-seconds S]\n"
               "                [--secret-file F] [--cache DIR]\n"
               "                [--sandbox auto|on|require|off]\n"
               "       arc-eval --new-secret [FILE]\n",
               why);
  return 2;
}

// LeakSanitizer's exit-time check stops the world with a cloned tracer and ptrace, both of
// which a confined worker has given up (eval/candidate_confinement.h): in an AddressSanitizer
// build the worker runs itself again with leak detection off, or every exit would fail.
void without_leak_check_under_asan(char** argv) {
  if (!arc::eval::kAddressSanitizer) return;
  const char* opts = std::getenv("ASAN_OPTIONS");
  std::string value = opts != nullptr ? opts : "";
  if (value.find("detect_leaks=0") != std::string::npos) return;
  value += value.empty() ? "detect_leaks=0" : ":detect_leaks=0";
  ::setenv("ASAN_OPTIONS", value.c_str(), 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run with the check on
}

// arc-eval --serve ...: the remote worker's options (eval/remote_worker.h).
int serve(int argc, char** argv) {
  arc::eval::RemoteWorkerOptions o;
  bool have_serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&i, argc, argv]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--serve") {
      const char* v = value();
      if (v == nullptr) return usage("--serve: expected [ADDR:]PORT");
      auto ep = arc::eval::parse_serve_address(v);
      if (!ep) return usage(ep.status().message().c_str());
      o.address = ep->host;
      o.port = ep->port;
      have_serve = true;
    } else if (arg == "--backend") {
      const char* v = value();
      o.backend = v != nullptr ? v : "";
      if (o.backend != "host" && o.backend != "cuda" && o.backend != "replay" &&
          o.backend != "synthetic") {
        return usage(
            ("--backend: expected host, cuda, replay or synthetic, got '" + o.backend + "'")
                .c_str());
      }
    } else if (arg == "--synthetic-seconds") {
      const char* v = value();
      char* end = nullptr;
      const double s = v != nullptr ? std::strtod(v, &end) : -1;
      if (v == nullptr || end == v || *end != '\0' || !(s >= 0 && s <= 3600)) {
        return usage("--synthetic-seconds: expected seconds per evaluation, 0 to 3600");
      }
      o.synthetic_seconds = s;
    } else if (arg == "--device") {
      long long n = 0;
      const char* v = value();
      if (v == nullptr || !parse_number(v, &n) || n > 1024) {
        return usage("--device: expected a device number (0, 1, ...)");
      }
      o.device = static_cast<int>(n);
    } else if (arg == "--replay") {
      const char* v = value();
      if (v == nullptr) return usage("--replay: expected a recorded run directory");
      o.replay_logs.emplace_back(v);
      while (i + 1 < argc && argv[i + 1][0] != '-') o.replay_logs.emplace_back(argv[++i]);
    } else if (arg == "--secret-file") {
      const char* v = value();
      if (v == nullptr || *v == '\0') return usage("--secret-file: expected a file");
      o.secret_file = v;
    } else if (arg == "--cache") {
      const char* v = value();
      if (v == nullptr) return usage("--cache: expected a folder");
      o.cache_dir = v;
    } else if (arg == "--sandbox") {
      const char* v = value();
      std::string mode = v != nullptr ? v : "";
      if (mode == "require") mode = "on";
      if (!arc::eval::parse_sandbox_mode(mode, &o.sandbox)) {
        return usage(("--sandbox: expected auto, on (or require) or off, got '" +
                      std::string(v != nullptr ? v : "") + "'")
                         .c_str());
      }
    } else {
      return usage(("--serve: unknown argument '" + arg + "'").c_str());
    }
  }
  if (!have_serve) return usage("--serve: expected [ADDR:]PORT");
  return arc::eval::serve_remote_worker(o);
}

int new_secret(int argc, char** argv) {
  if (argc > 3) return usage("--new-secret: expected at most one FILE");
  const std::filesystem::path path =
      argc == 3 ? std::filesystem::path(argv[2]) : arc::eval::default_worker_secret_path();
  if (auto s = arc::eval::write_new_worker_secret(path); !s) {
    std::fprintf(stderr, "arc-eval: --new-secret: %s\n", s.message().c_str());
    return 2;
  }
  std::printf("%s\n", path.c_str());
  return 0;
}

int run(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--new-secret") == 0) return new_secret(argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--serve") == 0) return serve(argc, argv);
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--worker") == 0) without_leak_check_under_asan(argv);
  }
  bool worker = false, peaks = false;
  long long in = -1, out = -1, memory_mb = 0;
  long long device = 0;
  std::string backend = "host", cache_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto number = [&](long long* v) { return i + 1 < argc && parse_number(argv[++i], v); };
    if (arg == "--worker") {
      worker = true;
    } else if (arg == "--peaks") {
      peaks = true;
    } else if (arg == "--in") {
      if (!number(&in)) return usage("--in: expected a file descriptor number");
    } else if (arg == "--out") {
      if (!number(&out)) return usage("--out: expected a file descriptor number");
    } else if (arg == "--backend") {
      if (i + 1 >= argc) return usage("--backend: expected host or cuda");
      backend = argv[++i];
      if (backend != "host" && backend != "cuda")
        return usage(("--backend: expected host or cuda, got '" + backend + "'").c_str());
    } else if (arg == "--cache") {
      if (i + 1 >= argc) return usage("--cache: expected a folder");
      cache_dir = argv[++i];
    } else if (arg == "--memory-mb") {
      if (!number(&memory_mb)) return usage("--memory-mb: expected a number of MiB");
    } else if (arg == "--device") {
      if (!number(&device) || device > 1024) {
        return usage("--device: expected a device number (0, 1, ...)");
      }
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  if (peaks) {
    arc::eval::Peaks p = arc::eval::measure_peaks();
    std::printf("{\"bandwidth_bytes_per_s\": %.6g, \"flops_per_s\": %.6g, \"method\": \"%s\"}\n",
                p.bandwidth_bytes_per_s, p.flops_per_s, p.method.c_str());
    return 0;
  }
  if (!worker) return usage("expected --worker or --peaks");
  if (in < 0 || out < 0) return usage("--worker needs --in FD and --out FD");
  arc::eval::WorkerOptions options;
  options.in_fd = static_cast<int>(in);
  options.out_fd = static_cast<int>(out);
  options.memory_limit_mb = static_cast<uint64_t>(memory_mb);
  options.backend = backend;
  options.device = static_cast<int>(device);
  options.cache_dir = cache_dir.empty() ? "/tmp/kernelarc-cache/cuda" : cache_dir;
  if (backend == "cuda" && options.memory_limit_mb > 0)
    return usage(
        "--memory-mb: not with --backend cuda (an address-space limit breaks the CUDA driver)");
  return arc::eval::run_worker(options);
}

}  // namespace

// Nothing below throws on purpose; an allocation failure or a library's exception ends the
// process with a message instead of std::terminate.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arc-eval: %s\n", e.what());
    return 2;
  }
}
