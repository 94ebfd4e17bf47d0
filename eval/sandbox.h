#pragma once
// The sandbox that compilers and evaluation workers run in: bubblewrap (Debian's `bubblewrap`
// package, `bwrap`), one process tree per sandbox. What a sandboxed program gets:
//   - its own PID, IPC, UTS, network and (where allowed) user and cgroup namespaces: it sees and
//     can signal only its own processes, and has no network at all (not even loopback);
//   - no capabilities (--cap-drop ALL, even when arcd runs as root), no_new_privs, a new session;
//   - a file system of its own: an empty read-only root with the system's /usr (and /bin, /lib,
//     /lib64, /sbin as the host has them), /etc/ld.so.cache, the paths its profile names read-only
//     or writable, a fresh /proc and a minimal /dev (the GPU profile: the host's /dev and /sys,
//     read-only /sys); nothing else (no home directories, no run directories, no other /etc);
//   - exactly the environment of its profile (sandbox_environment(): an allow-list; no API keys);
//   - resource limits set before exec (eval/subprocess.h ResourceLimit), inherited by everything
//     it starts, and death with its parent (--die-with-parent).
// A Sandbox is either enabled (a bwrap that ran a trial command here) or disabled with the reason
// (off by request, no bwrap, or the kernel refused what it needs); a disabled sandbox runs
// programs as they are. Which programs run where: eval/host_compiler.h, eval/worker_client.h.
#include <filesystem>
#include <string>
#include <vector>

#include "eval/subprocess.h"

namespace arc::eval {

// "auto": sandbox when the machine allows it (untrusted agents are then refused when it does
// not); "on": required, a campaign stops before it starts without one; "off": never (the user's
// explicit opt-out, which also lets untrusted agents run unconfined).
enum class SandboxMode { kAuto, kOn, kOff };
// "auto" | "on" | "off" -> the mode; false for anything else.
bool parse_sandbox_mode(const std::string& text, SandboxMode* mode);
const char* sandbox_mode_name(SandboxMode mode);

struct SandboxProfile {
  std::vector<std::filesystem::path> read_only;  // bound read-only at their own path; paths that
                                                 // do not exist are skipped
  std::vector<std::filesystem::path> writable;   // bound read-write at their own path
  bool gpu = false;                              // the host's /dev (device nodes) and /sys
  std::vector<std::string> env;                  // "NAME=VALUE", the whole environment inside
};

class Sandbox {
 public:
  // The mode's sandbox: kOff disabled; otherwise bwrap ($ARC_BWRAP, else `bwrap` in PATH, else
  // next to the running executable) if a trial run of /bin/true in the strictest profile
  // succeeds, else disabled with what failed.
  static Sandbox detect(SandboxMode mode);
  static Sandbox disabled(std::string reason);

  bool enabled() const { return !bwrap_.empty(); }
  SandboxMode mode() const { return mode_; }
  // Why it is disabled ("" when enabled).
  const std::string& reason() const { return reason_; }
  // "bubblewrap (/usr/bin/bwrap)" or "off: <reason>".
  std::string describe() const;

  // argv to run `argv` inside the profile ("bwrap <options> -- argv..."); argv itself when
  // disabled. Relative paths in the profile are made absolute.
  std::vector<std::string> wrap(const SandboxProfile& profile,
                                const std::vector<std::string>& argv) const;

 private:
  std::filesystem::path bwrap_;
  SandboxMode mode_ = SandboxMode::kOff;
  std::string reason_;
};

// The environment a sandboxed program sees: LC_ALL=C, HOME=/tmp, TMPDIR (`tmpdir`), a PATH of
// system directories, and these from the current environment when set: LD_LIBRARY_PATH, the
// sanitizers' *_OPTIONS, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES,
// NVIDIA_DRIVER_CAPABILITIES. Nothing else crosses (no API keys, no ARC_*).
std::vector<std::string> sandbox_environment(const std::string& tmpdir = "/tmp");

// Directories a program needs to start: that of `program` (as named and as resolved), the lib/
// folder beside it (a bundle's RUNPATH) and every LD_LIBRARY_PATH entry.
std::vector<std::filesystem::path> program_paths(const std::filesystem::path& program);

}  // namespace arc::eval
