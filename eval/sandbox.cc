#include "eval/sandbox.h"

#include <cstdlib>
#include <sstream>
#include <system_error>

#include <unistd.h>

namespace arc::eval {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

fs::path find_bwrap() {
  if (std::string v = env_or("ARC_BWRAP"); !v.empty()) return v;
  for (const std::string& dir : split_paths(env_or("PATH", "/usr/local/bin:/usr/bin:/bin"))) {
    if (fs::path p = fs::path(dir) / "bwrap"; executable(p)) return p;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    if (fs::path p = self.parent_path() / "bwrap"; executable(p)) return p;
  }
  return {};
}

fs::path absolute_of(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal();
}

bool inside_usr(const fs::path& p) {
  auto it = p.begin();
  return it != p.end() && *it == "/" && ++it != p.end() && *it == "usr";
}

}  // namespace

bool parse_sandbox_mode(const std::string& text, SandboxMode* mode) {
  for (SandboxMode m : {SandboxMode::kAuto, SandboxMode::kOn, SandboxMode::kOff}) {
    if (text == sandbox_mode_name(m)) {
      *mode = m;
      return true;
    }
  }
  return false;
}

const char* sandbox_mode_name(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kAuto:
      return "auto";
    case SandboxMode::kOn:
      return "on";
    case SandboxMode::kOff:
      return "off";
  }
  return "auto";
}

Sandbox Sandbox::disabled(std::string reason) {
  Sandbox s;
  s.reason_ = std::move(reason);
  return s;
}

Sandbox Sandbox::detect(SandboxMode mode) {
  if (mode == SandboxMode::kOff) {
    Sandbox s = disabled("turned off (--sandbox off)");
    s.mode_ = mode;
    return s;
  }
  Sandbox s;
  s.mode_ = mode;
  fs::path bwrap = find_bwrap();
  if (bwrap.empty()) {
    s.reason_ =
        "bwrap not found ($ARC_BWRAP, PATH, or next to this program; Debian package "
        "'bubblewrap')";
    return s;
  }
  if (!executable(bwrap)) {
    s.reason_ = "bwrap at " + bwrap.string() + " ($ARC_BWRAP) is not an executable program";
    return s;
  }
  s.bwrap_ = bwrap;
  SubprocessOptions trial;
  trial.timeout_s = 20;
  trial.output_cap = 2048;
  auto run = run_subprocess(
      s.wrap(SandboxProfile{{}, {}, false, sandbox_environment()}, {"/bin/sh", "-c", "exit 0"}),
      trial);
  if (!run || !run->ok()) {
    std::string why = !run ? run.status().message() : run->describe();
    if (run && !run->output.empty()) why += ": " + run->output.substr(0, 400);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    s.bwrap_.clear();
    s.reason_ = "the kernel refused what the sandbox needs (" + bwrap.string() + " " + why + ")";
  }
  return s;
}

std::string Sandbox::describe() const {
  return enabled() ? "bubblewrap (" + bwrap_.string() + ")" : "off: " + reason_;
}

std::vector<std::string> Sandbox::wrap(const SandboxProfile& profile,
                                       const std::vector<std::string>& argv) const {
  if (!enabled()) return argv;
  std::vector<std::string> a = {bwrap_.string(), "--unshare-all", "--die-with-parent",
                                "--new-session", "--cap-drop",    "ALL",
                                "--clearenv"};
  auto add = [&a](std::initializer_list<std::string> items) {
    a.insert(a.end(), items.begin(), items.end());
  };
  add({"--ro-bind", "/usr", "/usr"});
  std::error_code ec;
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    if (fs::is_symlink(top, ec)) {
      fs::path target = fs::read_symlink(top, ec);
      if (!ec) add({"--symlink", target.string(), top});
    } else if (fs::is_directory(top, ec)) {
      add({"--ro-bind", top, top});
    }
  }
  for (const char* etc :
       {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"}) {
    add({"--ro-bind-try", etc, etc});
  }
  add({"--proc", "/proc"});
  if (profile.gpu) {
    add({"--dev-bind", "/dev", "/dev", "--ro-bind", "/sys", "/sys"});
  } else {
    add({"--dev", "/dev"});
  }
  add({"--dir", "/tmp"});
  // A path is bound where it is named and where it resolves (a symlink in its name must lead
  // somewhere inside), except inside /usr, which is bound already and read-only (no mount
  // point can be made there).
  auto bind = [&add](const char* how, const fs::path& p) {
    const fs::path abs = absolute_of(p);
    std::error_code ec;
    const fs::path real = fs::canonical(abs, ec);
    if (!inside_usr(abs)) add({how, abs.string(), abs.string()});
    if (!ec && real != abs && !inside_usr(real)) add({how, real.string(), real.string()});
  };
  for (const fs::path& p : profile.read_only) bind("--ro-bind-try", p);
  for (const fs::path& p : profile.writable) bind("--bind", p);
  add({"--remount-ro", "/"});
  for (const std::string& kv : profile.env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    add({"--setenv", kv.substr(0, eq), kv.substr(eq + 1)});
  }
  a.emplace_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

std::vector<std::string> sandbox_environment(const std::string& tmpdir) {
  std::vector<std::string> env = {"LC_ALL=C", "HOME=/tmp", "TMPDIR=" + tmpdir,
                                  "PATH=/usr/local/bin:/usr/bin:/bin"};
  for (const char* name :
       {"LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"}) {
    if (const char* v = std::getenv(name); v != nullptr) env.push_back(std::string(name) + "=" + v);
  }
  return env;
}

std::vector<fs::path> program_paths(const fs::path& program) {
  std::vector<fs::path> out;
  fs::path abs = absolute_of(program);
  out.push_back(abs.parent_path());
  std::error_code ec;
  fs::path real = fs::canonical(abs, ec);
  if (!ec && real.parent_path() != abs.parent_path()) out.push_back(real.parent_path());
  // A relocatable bundle's RUNPATH ($ORIGIN/../lib).
  const fs::path lib = (ec ? abs : real).parent_path().parent_path() / "lib";
  if (fs::is_directory(lib, ec)) out.push_back(lib);
  for (const std::string& dir : split_paths(env_or("LD_LIBRARY_PATH"))) out.emplace_back(dir);
  return out;
}

}  // namespace arc::eval
