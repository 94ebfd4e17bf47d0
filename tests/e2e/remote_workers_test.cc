// Campaigns served by real remote workers (`arc-eval --serve` processes on 127.0.0.1, the host
// backend really compiling and running candidates) through real arcd processes, with faults
// (DESIGN.md §9, docs/distributed.md): a worker SIGKILLed mid-run has its work done by the
// others; arcd SIGKILLed mid-run resumes on the same workers; a worker not yet listening is taken
// in when it starts, and with every worker gone the campaign pauses until one comes back; a wrong
// secret is refused before anything runs. In every finished log: `arc-replay verify` passes,
// every evaluation names one of the campaign's workers, and no candidate is evaluated twice.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/subprocess.h"
#include "replay/summary.h"
#include "tests/e2e/arcd_process.h"
#include "tests/remote/worker_process.h"
#include "tests/scratch.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using testing::kArcd;
using testing::kArcReplay;
using testing::WorkerProcess;

const fs::path kShipped = fs::path(ARC_SOURCE_DIR) / "problems/host/softmax/campaign.toml";

fs::path scratch(const std::string& name) { return testing::scratch_path("remote-e2e", name); }

// The shipped softmax campaign with a cheaper evaluation (2 rounds of 5 repetitions) and no
// plateau stop, so that every run spends its whole budget; the problem is the shipped one.
fs::path quick_campaign() {
  std::string text = testing::slurp(kShipped);
  auto replace = [&text](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << kShipped << " has no '" << from << "'";
      return;
    }
    text.replace(at, from.size(), to);
  };
  replace("problem = \"problem.toml\"",
          "problem = \"" + (kShipped.parent_path() / "problem.toml").string() + "\"");
  replace("global_plateau = 24", "global_plateau = 0");
  replace("rounds = 3", "rounds = 2");
  replace("repetitions = 10", "repetitions = 5");
  replace("buffer_sets = 2", "buffer_sets = 1");
  fs::path file = scratch("campaign.toml");
  std::ofstream(file) << text;
  return file;
}

bool wait_until(const std::function<bool()>& done, seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// A port on 127.0.0.1 that nothing listens on (bound once by the kernel's choice, then freed).
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

// An arcd in the background, stdout and stderr in files; SIGKILLed and reaped when it goes out
// of scope still running.
class ArcdProcess {
 public:
  explicit ArcdProcess(const std::vector<std::string>& args) {
    static int n = 0;
    const std::string base = "arcd-" + std::to_string(n++);
    out_ = scratch(base + ".out");
    err_ = scratch(base + ".err");
    eval::UniqueFd out(::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    eval::UniqueFd err(::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    eval::SpawnOptions spawn;
    spawn.fds = {{1, out.get()}, {2, err.get()}};
    auto pid = eval::spawn_process(args, spawn);
    EXPECT_TRUE(pid.ok()) << pid.status().to_string();
    if (pid.ok()) pid_ = pid.value();
  }
  ~ArcdProcess() { kill_hard(); }
  ArcdProcess(const ArcdProcess&) = delete;
  ArcdProcess& operator=(const ArcdProcess&) = delete;

  // Its exit code (128 + signal when killed), or nothing when it still runs after `limit`.
  std::optional<int> wait(seconds limit) {
    if (code_) return code_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = -1;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return code_;
  }
  void kill_hard() {
    if (pid_ <= 0) return;
    const int status = eval::kill_and_reap(pid_);
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }
  std::string out() const { return testing::slurp(out_); }
  std::string err() const { return testing::slurp(err_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> code_;
  fs::path out_, err_;
};

// Remote workers sharing one secret, each with a compile cache of its own.
class Workers {
 public:
  Workers() : secret_(testing::new_secret_file("secret")) {}
  const fs::path& secret() const { return secret_; }

  // A worker on `port` (0: the kernel's choice); its "host:port" name, "" when it did not start.
  std::string start(uint16_t port = 0) {
    std::string why;
    auto w =
        WorkerProcess::start(secret_, scratch("cache-" + std::to_string(caches_++)), port, &why);
    EXPECT_NE(w, nullptr) << why;
    if (w == nullptr) return "";
    std::string name = w->endpoint().text();
    procs_[name] = std::move(w);
    return name;
  }
  WorkerProcess* operator[](const std::string& name) {
    auto it = procs_.find(name);
    return it == procs_.end() ? nullptr : it->second.get();
  }
  void kill(const std::string& name) {
    if (auto* w = (*this)[name]) w->kill_hard();
    procs_.erase(name);
  }
  // Still running (not exited, not a zombie).
  bool alive(const std::string& name) {
    auto* w = (*this)[name];
    if (w == nullptr) return false;
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(w->pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
  }

 private:
  fs::path secret_;
  int caches_ = 0;
  std::map<std::string, std::unique_ptr<WorkerProcess>> procs_;
};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::vector<std::string> run_args(const fs::path& campaign, const fs::path& run_dir,
                                  const std::vector<std::string>& workers, const fs::path& secret,
                                  uint32_t budget = 12) {
  return {kArcd.string(),
          "run",
          campaign.string(),
          "--run-dir",
          run_dir.string(),
          "--budget",
          std::to_string(budget),
          "--sandbox",
          "off",
          "--workers",
          join(workers),
          "--worker-secret",
          secret.string()};
}

// The run's log so far (empty while it cannot be read yet).
std::vector<events::Event> log_of(const fs::path& run_dir) {
  if (!fs::exists(run_dir / "log")) return {};
  auto log = replay::read_run(run_dir);
  return log.ok() ? std::move(log.value()) : std::vector<events::Event>{};
}

size_t count_evaluations(const std::vector<events::Event>& log, const std::string& worker = "") {
  size_t n = 0;
  for (const auto& e : log) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      n += worker.empty() || ev->worker == worker ? 1 : 0;
    }
  }
  return n;
}

size_t count_decisions(const std::vector<events::Event>& log) {
  size_t n = 0;
  for (const auto& e : log) n += e.payload.type == fb::Payload::Decision ? 1 : 0;
  return n;
}

bool stopped(const std::vector<events::Event>& log) {
  return !log.empty() && log.back().payload.type == fb::Payload::CampaignStopped;
}

// The first of `names` with two evaluations in the log of `dir`; "" when the run stopped first
// or `limit` passed.
std::string first_to_evaluate_twice(const fs::path& dir, const std::vector<std::string>& names,
                                    seconds limit) {
  std::string found;
  wait_until(
      [&] {
        const auto log = log_of(dir);
        for (const auto& n : names) {
          if (found.empty() && count_evaluations(log, n) >= 2) found = n;
        }
        return !found.empty() || stopped(log);
      },
      limit);
  return found;
}

// The WorkerChanged events of the log, with their seqs.
std::vector<std::pair<uint64_t, const fb::WorkerChangedT*>> changes(
    const std::vector<events::Event>& log) {
  std::vector<std::pair<uint64_t, const fb::WorkerChangedT*>> out;
  for (const auto& e : log) {
    if (const auto* c = e.payload.AsWorkerChanged()) out.emplace_back(e.seq, c);
  }
  return out;
}

// A finished campaign's log: stopped, verified by arc-replay, every evaluation and pair by one of
// `workers`, no candidate evaluated twice, every candidate evaluated decided.
std::vector<events::Event> check_finished(const fs::path& run_dir,
                                          const std::vector<std::string>& workers) {
  auto log = log_of(run_dir);
  EXPECT_TRUE(stopped(log)) << run_dir << ": no CampaignStopped at the end";
  const std::set<std::string> named(workers.begin(), workers.end());
  std::set<std::string> evaluated, decided;
  for (const auto& e : log) {
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      EXPECT_TRUE(named.count(ev->worker)) << "evaluated by " << ev->worker;
      EXPECT_TRUE(evaluated.insert(ev->candidate_hash).second)
          << ev->candidate_hash << " evaluated twice";
    } else if (const auto* p = e.payload.AsPairMeasured()) {
      EXPECT_TRUE(named.count(p->worker)) << "pair measured by " << p->worker;
    } else if (const auto* d = e.payload.AsDecision()) {
      decided.insert(d->candidate_hash);
    }
  }
  EXPECT_GT(evaluated.size(), 1u);
  for (const auto& h : evaluated) EXPECT_TRUE(decided.count(h)) << h << " evaluated, not decided";
  auto v = testing::run_process({kArcReplay.string(), "verify", run_dir.string()});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  return log;
}

TEST(RemoteWorkers, ThreeWorkersOneKilledMidRunTheOthersFinish) {
  Workers workers;
  const std::vector<std::string> names = {workers.start(), workers.start(), workers.start()};
  for (const auto& n : names) ASSERT_FALSE(n.empty());
  const fs::path dir = scratch("killed-worker");
  ArcdProcess arcd(run_args(quick_campaign(), dir, names, workers.secret()));

  // The first worker with two evaluations in the log is killed.
  const std::string victim = first_to_evaluate_twice(dir, names, seconds(60));
  ASSERT_FALSE(victim.empty()) << "the campaign ended before any worker evaluated twice\n"
                               << arcd.out() << arcd.err();
  const auto t0 = std::chrono::steady_clock::now();
  workers.kill(victim);
  const auto at_kill = log_of(dir);
  ASSERT_FALSE(stopped(at_kill)) << "the campaign ended before the kill";

  const auto code = arcd.wait(seconds(90));
  ASSERT_TRUE(code.has_value()) << "arcd still runs; stdout:\n" << arcd.out() << arcd.err();
  EXPECT_EQ(*code, 0) << arcd.err();
  std::printf("killed %s after %zu evaluations; arcd ended %.1f s later\n", victim.c_str(),
              count_evaluations(at_kill),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const auto log = check_finished(dir, names);

  // The loss is logged once, and nothing measured by the victim is logged after it.
  std::optional<uint64_t> lost_at;
  std::string requeued;
  for (const auto& [seq, c] : changes(log)) {
    EXPECT_EQ(c->worker, victim) << "only the killed worker changes";
    if (c->worker == victim && c->state == "lost") {
      EXPECT_FALSE(lost_at.has_value()) << "lost twice";
      lost_at = seq;
      requeued = c->requeued;
      EXPECT_EQ(c->live, 2u);
    }
  }
  ASSERT_TRUE(lost_at.has_value()) << "no WorkerChanged lost for " << victim;
  std::set<std::string> evaluated;
  for (const auto& e : log) {
    const auto* ev = e.payload.AsCandidateEvaluated();
    const auto* p = e.payload.AsPairMeasured();
    if (e.seq > *lost_at) {
      if (ev != nullptr) {
        EXPECT_NE(ev->worker, victim) << "evaluated after its loss, seq " << e.seq;
      }
      if (p != nullptr) {
        EXPECT_NE(p->worker, victim) << "pair after its loss, seq " << e.seq;
      }
    }
    if (ev != nullptr) evaluated.insert(ev->candidate_hash);
  }
  // The work it held went to another worker and was done there.
  if (!requeued.empty()) {
    EXPECT_TRUE(evaluated.count(requeued)) << requeued;
  }
  EXPECT_NE(arcd.out().find("worker     " + victim + " lost"), std::string::npos) << arcd.out();
  for (const auto& n : names) {
    if (n != victim) {
      EXPECT_GT(count_evaluations(log, n), 0u) << n;
    }
  }
}

TEST(RemoteWorkers, ArcdKilledMidRunResumesOnTheSameWorkers) {
  Workers workers;
  const std::vector<std::string> names = {workers.start(), workers.start()};
  for (const auto& n : names) ASSERT_FALSE(n.empty());
  const fs::path dir = scratch("resumed");
  {
    ArcdProcess arcd(run_args(quick_campaign(), dir, names, workers.secret()));
    // Killed after its third decision's progress line (the campaign goes on meanwhile).
    ASSERT_TRUE(wait_until(
        [&] {
          const std::string out = arcd.out();
          size_t lines = 0;
          for (size_t at = out.find("\n["); at != std::string::npos; at = out.find("\n[", at + 1)) {
            ++lines;
          }
          return lines >= 3 || arcd.wait(seconds(0)).has_value();
        },
        seconds(60)))
        << arcd.out() << arcd.err();
    arcd.kill_hard();
    EXPECT_EQ(arcd.wait(seconds(0)), 128 + SIGKILL) << "arcd ended before the kill";
  }
  const auto before = log_of(dir);
  ASSERT_FALSE(stopped(before)) << "the campaign ended before the kill";
  ASSERT_GE(count_decisions(before), 3u);
  ASSERT_LT(count_decisions(before), 12u);
  std::printf("arcd killed after %zu decisions (the baseline's included)\n",
              count_decisions(before));

  ArcdProcess resumed({kArcd.string(), "resume", dir.string(), "--quiet", "--sandbox", "off",
                       "--workers", join(names), "--worker-secret", workers.secret().string()});
  const auto code = resumed.wait(seconds(90));
  ASSERT_TRUE(code.has_value()) << "arcd resume still runs:\n" << resumed.err();
  EXPECT_EQ(*code, 0) << resumed.err();
  const auto log = check_finished(dir, names);
  EXPECT_EQ(replay::summarize(log).candidates, 12u);
  // The resumed arcd measured too: evaluations past those of the killed one.
  EXPECT_GT(count_evaluations(log), count_evaluations(before));
  for (const auto& n : names) EXPECT_TRUE(workers.alive(n)) << n;
}

TEST(RemoteWorkers, LateWorkerJoinsAndAllLostPausesUntilOneReturns) {
  Workers workers;
  const std::string a = workers.start();
  ASSERT_FALSE(a.empty());
  const uint16_t b_port = free_port();
  ASSERT_NE(b_port, 0);
  const std::string b = "127.0.0.1:" + std::to_string(b_port);
  const fs::path dir = scratch("join-pause");
  ArcdProcess arcd(run_args(quick_campaign(), dir, {a, b}, workers.secret()));

  // B is not listening: arcd says so and starts on A.
  ASSERT_TRUE(wait_until([&] { return count_evaluations(log_of(dir), a) >= 1; }, seconds(60)))
      << arcd.out() << arcd.err();
  EXPECT_NE(arcd.err().find("worker " + b + " cannot be reached"), std::string::npos) << arcd.err();
  ASSERT_EQ(workers.start(b_port), b);

  // B is taken in and takes work.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto log = log_of(dir);
        return count_evaluations(log, b) >= 1 || stopped(log);
      },
      seconds(60)))
      << arcd.out() << arcd.err();
  {
    const auto log = log_of(dir);
    ASSERT_GE(count_evaluations(log, b), 1u) << "the campaign ended before B evaluated anything";
    bool joined = false;
    for (const auto& [seq, c] : changes(log))
      joined = joined || (c->worker == b && c->state == "joined");
    EXPECT_TRUE(joined) << "no WorkerChanged joined for " << b;
  }

  // Both gone: the campaign pauses.
  workers.kill(a);
  workers.kill(b);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto log = log_of(dir);
        for (const auto& [seq, c] : changes(log)) {
          if (c->live == 0) return true;
        }
        return stopped(log);
      },
      seconds(60)))
      << arcd.out() << arcd.err();
  const auto paused = log_of(dir);
  ASSERT_FALSE(stopped(paused)) << "the campaign ended before both workers were lost";
  std::printf("paused after %zu decisions (the baseline's included)\n", count_decisions(paused));
  ASSERT_TRUE(wait_until(
      [&] { return arcd.out().find("the campaign is paused") != std::string::npos; }, seconds(10)))
      << arcd.out();
  EXPECT_FALSE(arcd.wait(seconds(2)).has_value()) << "arcd ended while paused: " << arcd.err();
  // Nothing is evaluated while no worker is live.
  EXPECT_EQ(count_evaluations(log_of(dir)), count_evaluations(paused));

  // A comes back on its port: the campaign goes on to its end.
  const uint16_t a_port = static_cast<uint16_t>(std::stoi(a.substr(a.rfind(':') + 1)));
  ASSERT_EQ(workers.start(a_port), a);
  const auto code = arcd.wait(seconds(90));
  ASSERT_TRUE(code.has_value()) << "arcd still runs:\n" << arcd.out() << arcd.err();
  EXPECT_EQ(*code, 0) << arcd.err();
  const auto log = check_finished(dir, {a, b});
  uint64_t paused_at = 0;
  bool back = false;
  for (const auto& [seq, c] : changes(log)) {
    if (c->live == 0 && paused_at == 0) paused_at = seq;
    if (paused_at != 0 && seq > paused_at && c->worker == a && c->state == "joined") back = true;
  }
  EXPECT_TRUE(back) << "no WorkerChanged joined for " << a << " after the pause";
  EXPECT_GT(count_evaluations(log), count_evaluations(paused));
}

TEST(RemoteWorkers, WrongSecretFailsCleanlyAndTheWorkersServeOnAfterwards) {
  Workers workers;
  const std::vector<std::string> names = {workers.start(), workers.start()};
  for (const auto& n : names) ASSERT_FALSE(n.empty());
  const fs::path wrong = testing::new_secret_file("wrong-secret");
  ASSERT_FALSE(wrong.empty());
  const fs::path campaign = quick_campaign();

  const fs::path refused = scratch("wrong-secret-run");
  {
    ArcdProcess arcd(run_args(campaign, refused, names, wrong, 4));
    const auto code = arcd.wait(seconds(60));
    ASSERT_TRUE(code.has_value()) << "arcd with a wrong secret still runs:\n" << arcd.err();
    EXPECT_NE(*code, 0);
    const std::string err = arcd.err();
    EXPECT_NE(err.find("authentication failed"), std::string::npos) << err;
    for (const auto& n : names) EXPECT_NE(err.find(n), std::string::npos) << n << ": " << err;
    EXPECT_EQ(count_evaluations(log_of(refused)), 0u);
  }
  for (const auto& n : names) EXPECT_TRUE(workers.alive(n)) << n << " did not stay up";

  const fs::path dir = scratch("right-secret-run");
  ArcdProcess arcd(run_args(campaign, dir, names, workers.secret(), 4));
  const auto code = arcd.wait(seconds(60));
  ASSERT_TRUE(code.has_value()) << "arcd still runs:\n" << arcd.err();
  EXPECT_EQ(*code, 0) << arcd.err();
  check_finished(dir, names);
}

// The pairs of a paired decision run at once on idle workers, each measuring the same incumbent
// and candidate, and every worker's evaluator is wrapped in the run's quarantine
// (eval/quarantine.h): concurrent attempts of one candidate count as one attempt of the process
// (one ledger per run), so none is refused as "quarantined" and no note is left behind.
TEST(RemoteWorkers, ConcurrentPairsOnThreeWorkersAreNotQuarantined) {
  Workers workers;
  const std::vector<std::string> names = {workers.start(), workers.start(), workers.start()};
  for (const auto& n : names) ASSERT_FALSE(n.empty());
  const fs::path dir = scratch("pairs");
  ArcdProcess arcd(run_args(quick_campaign(), dir, names, workers.secret()));
  const auto code = arcd.wait(seconds(90));
  ASSERT_TRUE(code.has_value()) << "arcd still runs:\n" << arcd.out() << arcd.err();
  EXPECT_EQ(*code, 0) << arcd.err();
  const auto log = check_finished(dir, names);
  // Every measurement that answered "quarantined" without running.
  size_t pairs = 0;
  std::vector<std::string> refused;
  auto check = [&refused](const std::string& error, const std::string& what) {
    if (error.find("quarantined") != std::string::npos) refused.push_back(what + ": " + error);
  };
  for (const auto& e : log) {
    const std::string at = "seq " + std::to_string(e.seq);
    if (const auto* p = e.payload.AsPairMeasured()) {
      ++pairs;
      const std::string pair = at + " pair " + std::to_string(p->index) + " on " + p->worker;
      for (const auto& w : p->workloads) {
        check(w->incumbent->error, pair + " incumbent " + p->incumbent_hash.substr(0, 12));
        check(w->candidate->error, pair + " candidate " + p->candidate_hash.substr(0, 12));
      }
    }
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      for (const auto& w : ev->workloads) {
        check(w->error, at + " evaluation of " + ev->candidate_hash.substr(0, 12));
      }
    }
  }
  EXPECT_TRUE(refused.empty()) << refused.size()
                               << " workload measurements refused, first: " << refused.front();
  EXPECT_GT(pairs, 0u) << "no paired decision: nothing was measured at once";
  // No worker died: no attempt is left unfinished.
  std::vector<std::string> notes;
  if (fs::is_directory(dir / "quarantine")) {
    for (const auto& f : fs::directory_iterator(dir / "quarantine")) {
      notes.push_back(f.path().filename().string() + "=" + testing::slurp(f.path()));
    }
  }
  EXPECT_TRUE(notes.empty()) << "quarantine notes left: " << notes.size() << ", first "
                             << notes.front();
}

// The candidates a sweep log holds, in log order: (hash, input seed, every workload's status).
struct SweptPoint {
  std::string hash;
  uint64_t input_seed = 0;
  std::vector<int> statuses;
  std::string worker;
  bool operator==(const SweptPoint& o) const {
    return hash == o.hash && input_seed == o.input_seed && statuses == o.statuses;
  }
};
std::vector<SweptPoint> swept(const std::vector<events::Event>& log) {
  std::vector<SweptPoint> out;
  std::string proposed;
  for (const auto& e : log) {
    if (const auto* p = e.payload.AsCandidateProposed()) proposed = p->candidate_hash;
    if (const auto* ev = e.payload.AsCandidateEvaluated()) {
      EXPECT_EQ(ev->candidate_hash, proposed) << "an evaluation not right after its proposal";
      SweptPoint s{ev->candidate_hash, ev->input_seed, {}, ev->worker};
      for (const auto& w : ev->workloads) s.statuses.push_back(static_cast<int>(w->status));
      out.push_back(std::move(s));
    }
  }
  return out;
}

// arcd sweep on three workers, one SIGKILLed mid-sweep: the others measure every candidate once,
// the log holds them in candidate order with the seeds and verdicts a one-worker sweep logs.
TEST(RemoteWorkers, SweepOnThreeWorkersOneKilledLogsWhatOneWorkerLogs) {
  const fs::path problem = kShipped.parent_path();
  const fs::path campaign = quick_campaign();
  auto sweep_args = [&](const fs::path& dir) {
    return std::vector<std::string>{kArcd.string(),
                                    "sweep",
                                    problem.string(),
                                    "--sample",
                                    "24",
                                    "--seed",
                                    "3",
                                    "--campaign",
                                    campaign.string(),
                                    "--run-dir",
                                    dir.string(),
                                    "--sandbox",
                                    "off",
                                    "--quiet"};
  };
  const fs::path one = scratch("sweep-one");
  auto args = sweep_args(one);
  args.insert(args.end(), {"--workers", "local"});
  auto r = testing::run_process(args);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto expected = swept(log_of(one));
  ASSERT_EQ(expected.size(), 25u);  // the sample and the seed

  Workers workers;
  const std::vector<std::string> names = {workers.start(), workers.start(), workers.start()};
  for (const auto& n : names) ASSERT_FALSE(n.empty());
  const fs::path dir = scratch("sweep-three");
  args = sweep_args(dir);
  args.insert(args.end(), {"--workers", join(names), "--worker-secret", workers.secret().string()});
  ArcdProcess arcd(args);
  // The first worker with two evaluations in the log is killed.
  const std::string victim = first_to_evaluate_twice(dir, names, seconds(90));
  ASSERT_FALSE(victim.empty()) << "the sweep ended before any worker measured twice\n"
                               << arcd.out() << arcd.err();
  workers.kill(victim);
  const auto code = arcd.wait(seconds(120));
  ASSERT_TRUE(code.has_value()) << "arcd still sweeps:\n" << arcd.out() << arcd.err();
  EXPECT_EQ(*code, 0) << arcd.err();
  EXPECT_NE(arcd.out().find("swept 25 candidates"), std::string::npos) << arcd.out();
  EXPECT_NE(arcd.err().find("worker " + victim + " cannot measure"), std::string::npos)
      << arcd.err();

  const auto log = log_of(dir);
  ASSERT_TRUE(stopped(log));
  EXPECT_EQ(log.front().payload.AsCampaignStarted()->mode, "sweep");
  const auto got = swept(log);
  ASSERT_EQ(got.size(), expected.size());
  std::set<std::string> by;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i] == expected[i])
        << "candidate " << i << ": " << got[i].hash << " vs " << expected[i].hash;
    EXPECT_TRUE(std::find(names.begin(), names.end(), got[i].worker) != names.end())
        << got[i].worker;
    by.insert(got[i].worker);
  }
  EXPECT_GE(by.size(), 2u) << "the sweep was not shared out";
  for (const auto& p : expected) EXPECT_EQ(p.worker, "local");
  std::printf("25 candidates swept by %zu workers, %s killed\n", by.size(), victim.c_str());
}

}  // namespace
}  // namespace arc
