// The sandbox (eval/sandbox.h) around real programs: what a sandboxed process sees, may write,
// may reach and may signal. Every case needs bubblewrap and a kernel that allows it, and skips
// saying why where not (CI's machines have both: tools/setup.sh installs bubblewrap).
#include "eval/sandbox.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/compiler_log.h"
#include "eval/subprocess.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sandbox_ = Sandbox::detect(SandboxMode::kAuto);
    if (!sandbox_.enabled()) GTEST_SKIP() << "no sandbox on this machine: " << sandbox_.reason();
    char tmpl[] = "/tmp/arc-sandbox-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Runs `script` under /bin/sh in the sandbox with `profile`; returns what it printed.
  SubprocessResult sh(const std::string& script, SandboxProfile profile = {},
                      std::vector<ResourceLimit> limits = {}) {
    if (profile.env.empty()) profile.env = sandbox_environment();
    SubprocessOptions o;
    o.timeout_s = 30;
    o.limits = std::move(limits);
    auto r = run_subprocess(sandbox_.wrap(profile, {"/bin/sh", "-c", script}), o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r ? *r : SubprocessResult{};
  }

  Sandbox sandbox_ = Sandbox::disabled("");
  fs::path dir_;
};

TEST_F(SandboxTest, TheEnvironmentIsTheAllowListOnly) {
  ::setenv("ARC_TEST_API_KEY", "sk-do-not-leak-4711", 1);
  auto r = sh("env");
  ::unsetenv("ARC_TEST_API_KEY");
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("sk-do-not-leak-4711")));
  EXPECT_THAT(r.output, HasSubstr("LC_ALL=C"));
  EXPECT_THAT(r.output, HasSubstr("HOME=/tmp"));
}

TEST_F(SandboxTest, HomeAndOtherFilesAreNotThereAndNothingIsWritable) {
  std::ofstream(dir_ / "secret.txt") << "token-0815\n";
  auto r = sh("cat " + (dir_ / "secret.txt").string() +
              " 2>/dev/null; ls /root /home 2>/dev/null; cat /etc/passwd 2>/dev/null;"
              " touch /usr/x /tmp/x /x 2>/dev/null && echo WROTE; echo done");
  EXPECT_EQ(r.output, "done\n");
}

TEST_F(SandboxTest, ReadOnlyAndWritablePathsAreWhatTheProfileSays) {
  fs::create_directories(dir_ / "ro");
  fs::create_directories(dir_ / "rw");
  std::ofstream(dir_ / "ro" / "in.txt") << "visible\n";
  SandboxProfile p;
  p.read_only = {dir_ / "ro"};
  p.writable = {dir_ / "rw"};
  auto r = sh("cat " + (dir_ / "ro/in.txt").string() + "; touch " + (dir_ / "ro/x").string() +
                  " 2>/dev/null && echo WROTE-RO; echo out > " + (dir_ / "rw/out.txt").string(),
              p);
  EXPECT_EQ(r.output, "visible\n");
  EXPECT_TRUE(fs::exists(dir_ / "rw" / "out.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "ro" / "x"));
}

TEST_F(SandboxTest, ItsOwnPidNamespaceShowsNoOtherProcess) {
  // Inside: the shell and what it runs, under bubblewrap's init; none of this test's processes.
  auto r = sh("ls /proc | grep -c '^[0-9]'; kill -9 " + std::to_string(::getpid()) +
              " 2>/dev/null && echo KILLED; echo $$");
  std::istringstream in(r.output);
  int processes = 0, own_pid = 0;
  in >> processes >> own_pid;
  EXPECT_LE(processes, 4) << r.output;
  EXPECT_LT(own_pid, 10) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("KILLED")));
}

TEST_F(SandboxTest, NoNetworkInterfaceButLoopback) {
  auto r = sh("cat /proc/net/dev");
  std::set<std::string> names;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    names.insert(name);
  }
  EXPECT_EQ(names, std::set<std::string>{"lo"}) << r.output;
}

TEST_F(SandboxTest, NoCapabilitiesEvenForRoot) {
  auto r = sh("grep -E '^Cap(Eff|Prm)' /proc/self/status");
  EXPECT_THAT(r.output, HasSubstr("CapPrm:\t0000000000000000"));
  EXPECT_THAT(r.output, HasSubstr("CapEff:\t0000000000000000"));
}

TEST_F(SandboxTest, ResourceLimitsReachTheProgram) {
  auto r = sh("ulimit -v; ulimit -f; ulimit -t", {},
              {{RLIMIT_AS, uint64_t{512} << 20}, {RLIMIT_FSIZE, 1024 * 1024}, {RLIMIT_CPU, 7}});
  // dash reports kilobytes for -v and 512-byte blocks for -f.
  EXPECT_EQ(r.output, "524288\n2048\n7\n");
}

TEST_F(SandboxTest, ASandboxedProcessDiesWithItsParent) {
  // A parent that starts a sandboxed sleeper and is then killed: the sleeper must go too.
  const std::string marker = "987.654" + std::to_string(::getpid());
  pid_t parent = ::fork();
  if (parent == 0) {
    SpawnOptions o;
    auto pid = spawn_process(
        sandbox_.wrap(SandboxProfile{{}, {}, false, sandbox_environment()}, {"/bin/sleep", marker}),
        o);
    if (!pid) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  auto sleeper_running = [&marker] {
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::ifstream cmd(e.path() / "cmdline");
      std::string text((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
      if (text.find(marker) != std::string::npos && text.rfind("/bin/sleep", 0) == 0) return true;
    }
    return false;
  };
  auto wait_for = [](const std::function<bool()>& what) {
    for (int i = 0; i < 500; ++i) {
      if (what()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(wait_for(sleeper_running)) << "the sandboxed sleeper never started";
  ::kill(parent, SIGKILL);
  int status = 0;
  ::waitpid(parent, &status, 0);
  EXPECT_TRUE(wait_for([&] { return !sleeper_running(); }))
      << "a sandboxed process outlived its parent";
}

TEST(SandboxMode, ParsesItsThreeNames) {
  SandboxMode m = SandboxMode::kOn;
  EXPECT_TRUE(parse_sandbox_mode("off", &m));
  EXPECT_EQ(m, SandboxMode::kOff);
  EXPECT_TRUE(parse_sandbox_mode("auto", &m));
  EXPECT_EQ(m, SandboxMode::kAuto);
  EXPECT_FALSE(parse_sandbox_mode("yes", &m));
  EXPECT_FALSE(Sandbox::detect(SandboxMode::kOff).enabled());
  EXPECT_EQ(Sandbox::detect(SandboxMode::kOff).wrap({}, {"/bin/true"}),
            std::vector<std::string>{"/bin/true"});
}

TEST(CompilerLog, KeepsOwnDiagnosticsAndWithholdsEveryOtherFile) {
  const std::string log =
      "In file included from /cache/k.cc:1:\n"
      "/etc/secret.h:1:1: error: 'TOKEN_4711' does not name a type\n"
      "    1 | TOKEN_4711 rest of the line\n"
      "      | ^~~~~~~~~~\n"
      "/etc/secret.h:2:1: error: 'SECOND_LINE' does not name a type\n"
      "/cache/k.cc: In function 'int arc_kernel(const arc_host_args*)':\n"
      "/cache/k.cc:3:5: error: 'foo' was not declared in this scope\n"
      "    3 |     foo();\n"
      "/shared/abc/common.h:7:2: warning: unused\n"
      "compilation terminated.\n";
  const std::string kept = withhold_foreign_diagnostics(log, {"/cache/k.cc", "/shared/abc/"});
  EXPECT_THAT(kept, Not(HasSubstr("TOKEN_4711")));
  EXPECT_THAT(kept, Not(HasSubstr("SECOND_LINE")));
  EXPECT_THAT(kept, HasSubstr("/cache/k.cc:3:5: error: 'foo' was not declared"));
  EXPECT_THAT(kept, HasSubstr("    3 |     foo();"));  // a continuation of its own diagnostic
  EXPECT_THAT(kept, HasSubstr("/shared/abc/common.h:7:2: warning: unused"));
  EXPECT_THAT(kept, HasSubstr("In file included from /cache/k.cc:1:"));
  EXPECT_THAT(kept, HasSubstr(std::string(kWithheldDiagnostic)));
  EXPECT_THAT(kept, HasSubstr("compilation terminated."));
}

}  // namespace
}  // namespace arc::eval
