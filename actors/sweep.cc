#include "actors/sweep.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "actors/agent_core.h"
#include "actors/worker_admission.h"
#include "actors/worker_slot.h"
#include "base/sha256.h"
#include "storage/journal.h"

namespace arc::actors {

namespace {

bool swept(const problem::Family& f, const std::vector<std::string>& families) {
  return families.empty() || std::find(families.begin(), families.end(), f.name) != families.end();
}

uint64_t combinations(const problem::Family& f) {
  uint64_t n = 1;
  for (const auto& k : f.knobs) n = std::min<uint64_t>(n * k.values.size(), 1ull << 40);
  return n;
}

}  // namespace

uint64_t search_space_size(const problem::Problem& problem,
                           const std::vector<std::string>& families) {
  uint64_t total = 0;
  for (const auto& f : problem.families) {
    if (swept(f, families)) total += combinations(f);
  }
  return total;
}

std::vector<problem::Candidate> search_space(const problem::Problem& problem, uint64_t limit,
                                             const std::vector<std::string>& families) {
  std::vector<problem::Candidate> out;
  const auto params = problem.integer_params();
  for (const auto& f : problem.families) {
    if (!swept(f, families)) continue;
    std::vector<size_t> idx(f.knobs.size(), 0);
    while (out.size() < limit) {
      problem::Candidate c;
      c.base.family = f.name;
      for (size_t i = 0; i < f.knobs.size(); ++i)
        c.base.knobs[f.knobs[i].name] = f.knobs[i].values[idx[i]];
      if (f.constraint_violation(c.base.knobs, params).empty()) out.push_back(std::move(c));
      size_t i = f.knobs.size();
      while (i > 0 && ++idx[i - 1] == f.knobs[i - 1].values.size()) idx[--i] = 0;
      if (i == 0) break;
    }
  }
  return out;
}

std::vector<problem::Candidate> sample_space(const problem::Problem& problem, uint64_t count,
                                             uint64_t seed,
                                             const std::vector<std::string>& families) {
  std::vector<const problem::Family*> fs;
  for (const auto& f : problem.families) {
    if (swept(f, families)) fs.push_back(&f);
  }
  const uint64_t total = search_space_size(problem, families);
  std::vector<problem::Candidate> out;
  if (fs.empty() || total == 0) return out;
  const auto params = problem.integer_params();
  std::set<std::string> seen;
  uint64_t s = seed;
  auto draw = [&s](uint64_t n) {
    s = mix64(s + 0x9e3779b97f4a7c15ULL);
    return n == 0 ? 0 : s % n;
  };
  for (uint64_t attempt = 0; out.size() < count && attempt < 200 * count; ++attempt) {
    uint64_t r = draw(total);
    const problem::Family* f = fs.back();
    for (const auto* g : fs) {
      if (r < combinations(*g)) {
        f = g;
        break;
      }
      r -= combinations(*g);
    }
    problem::Candidate c;
    c.base.family = f->name;
    for (const auto& k : f->knobs) c.base.knobs[k.name] = k.values[draw(k.values.size())];
    if (!f->constraint_violation(c.base.knobs, params).empty()) continue;
    if (seen.insert(c.hash()).second) out.push_back(std::move(c));
  }
  return out;
}

namespace {

// One candidate measured: its compile and evaluation, as logged.
struct Measured {
  fb::CompileFinishedT compiled;
  fb::CandidateEvaluatedT evaluation;
};

// The candidates handed out to the workers' threads, and their results until the log takes
// them in candidate order.
class Handout {
 public:
  Handout(size_t candidates, size_t workers)
      : results_(candidates), left_(candidates), workers_(workers) {}

  // The next candidate to measure: one a lost worker gave back, else the next in order. Waits
  // while every candidate is handed out but some are still being measured (one may come back);
  // empty once every candidate has its result or the sweep stopped.
  std::optional<size_t> take() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] {
      return stopped_ || left_ == 0 || !returned_.empty() || next_ < results_.size();
    });
    if (stopped_ || left_ == 0) return std::nullopt;
    if (!returned_.empty()) {
      const size_t i = returned_.front();
      returned_.pop_front();
      return i;
    }
    return next_++;
  }
  void give_back(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    returned_.push_back(i);
    cv_.notify_all();
  }
  void put(size_t i, Measured m) {
    std::lock_guard<std::mutex> lock(mu_);
    results_[i] = std::move(m);
    --left_;
    cv_.notify_all();
  }
  // Candidate i's result, taken; empty when the sweep stopped or no worker is left to measure it.
  std::optional<Measured> wait_for(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this, i] { return stopped_ || results_[i].has_value() || workers_ == 0; });
    if (!results_[i]) return std::nullopt;
    std::optional<Measured> out = std::move(results_[i]);
    results_[i].reset();
    return out;
  }
  // Waits up to `d`; true once the sweep is over (every result in, or stopped).
  bool over_after(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [this] { return stopped_ || left_ == 0; });
  }
  // A worker's thread ends before the sweep does (it was refused).
  void worker_gone() {
    std::lock_guard<std::mutex> lock(mu_);
    --workers_;
    cv_.notify_all();
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<Measured>> results_;
  std::deque<size_t> returned_;
  size_t next_ = 0;
  size_t left_;
  size_t workers_;
  bool stopped_ = false;
};

// Compiles candidates on one local evaluator ahead of the local workers: each get() starts the
// next `jobs` candidates in the background, so that compiling overlaps measuring.
class CompileAhead {
 public:
  CompileAhead(eval::Evaluator* compiler, const std::vector<problem::Candidate>& todo, size_t jobs)
      : compiler_(compiler), todo_(todo), jobs_(jobs) {}
  ~CompileAhead() {
    for (auto& [i, f] : started_) f.wait();
  }
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  fb::CompileFinishedT get(size_t i) {
    std::shared_future<fb::CompileFinishedT> mine;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Candidate i may have been compiled once already (a lost worker gave it back).
      if (started_.count(i) == 0) launch(i);
      for (size_t k = i + 1; k < std::min(todo_.size(), i + 1 + jobs_); ++k) {
        if (started_.count(k) == 0 && done_.count(k) == 0) launch(k);
      }
      mine = started_.at(i);
      started_.erase(i);
    }
    return mine.get();
  }

 private:
  void launch(size_t i) {  // under mu_
    started_[i] = std::async(std::launch::async, [this, i] {
                    return compiler_->compile(todo_[i], todo_[i].hash());
                  }).share();
    done_.insert(i);
  }

  eval::Evaluator* compiler_;
  const std::vector<problem::Candidate>& todo_;
  size_t jobs_;
  std::mutex mu_;
  std::map<size_t, std::shared_future<fb::CompileFinishedT>> started_;
  std::set<size_t> done_;  // launched once: not again ahead, only on demand
};

// The workers measuring now, for admission (one device model, one worker per device).
class LiveSet {
 public:
  explicit LiveSet(std::string model) : model_(std::move(model)) {}
  // Admits the worker, or says why not (actors/worker_admission.h).
  std::string admit(const std::string& name, const eval::Evaluator& e) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<LiveWorker> others;
    for (const auto& w : live_) {
      if (w.name != name) others.push_back(w);
    }
    std::string why = admission_refusal(model_, e.device_model(), e.device_key(), others);
    if (why.empty()) {
      others.push_back({name, e.device_key()});
      live_ = std::move(others);
    }
    return why;
  }
  void lose(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(std::remove_if(live_.begin(), live_.end(),
                               [&name](const LiveWorker& w) { return w.name == name; }),
                live_.end());
  }

 private:
  std::mutex mu_;
  std::string model_;
  std::vector<LiveWorker> live_;
};

// Why the worker cannot measure now; empty while it can.
std::string unavailable(const CampaignWorker& w) {
  if (w.evaluator == nullptr) return w.unreachable.empty() ? "not connected" : w.unreachable;
  Status s = w.evaluator->availability();
  return s ? "" : s.message();
}

// Reaches a worker that cannot measure: a local one reconnected in place, a remote one
// connected anew. True once it may measure; false to try again later. `refused` is set when
// it never will (credentials, another device model, a device already measured).
bool reach(CampaignWorker& w, LiveSet& live, bool* refused, std::string* why) {
  if (w.local) {
    if (w.evaluator == nullptr) return false;
    Status s = w.evaluator->reconnect();
    if (!s) {
      *why = s.message();
      return false;
    }
  } else {
    if (!w.connect) return false;
    auto made = w.connect();
    if (!made) {
      *why = made.status().message();
      *refused = made.status().code() == Status::Code::kInvalidArgument;
      return false;
    }
    w.owned = std::move(made.value());
    w.evaluator = w.owned.get();
    w.unreachable.clear();
  }
  *why = live.admit(w.name, *w.evaluator);
  *refused = !why->empty();
  return why->empty();
}

}  // namespace

Result<SweepResult> run_sweep(const problem::Problem& problem, eval::Evaluator& evaluator,
                              const SweepOptions& options) {
  std::vector<CampaignWorker> workers(1);
  workers[0].name = "local";
  workers[0].local = true;
  workers[0].evaluator = &evaluator;
  return run_sweep(problem, workers, options);
}

Result<SweepResult> run_sweep(const problem::Problem& problem, std::vector<CampaignWorker>& workers,
                              const SweepOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(options.run_dir, ec) && !fs::is_empty(options.run_dir, ec)) {
    return Status::invalid_argument("--run-dir " + options.run_dir.string() +
                                    ": expected a new or empty folder");
  }
  eval::Evaluator* first = nullptr;
  eval::Evaluator* compiler = nullptr;  // the first local worker's: compiles for the local ones
  for (const auto& w : workers) {
    if (w.evaluator != nullptr && first == nullptr) first = w.evaluator;
    if (w.evaluator != nullptr && w.local && compiler == nullptr) compiler = w.evaluator;
  }
  if (first == nullptr) return Status::unavailable("no worker could be reached for the sweep");
  // One device model, one worker per device (actors/worker_admission.h).
  LiveSet live(first->device_model());
  for (const auto& w : workers) {
    if (w.evaluator != nullptr) {
      if (std::string why = live.admit(w.name, *w.evaluator); !why.empty()) {
        return Status::invalid_argument("worker " + w.name + ": " + why);
      }
    }
  }
  SweepResult result;
  for (const auto& name : options.families) {
    if (problem.family(name) == nullptr) {
      return Status::invalid_argument("--family " + name + ": problem " + problem.name +
                                      " has no such family");
    }
  }
  result.space = search_space_size(problem, options.families);
  // The candidates: the seed first, then the space (or a seeded sample of it).
  const uint64_t cap = 1'000'000;
  if (options.sample == 0 && result.space > cap) {
    return Status::invalid_argument("the search space of " + problem.name + " has " +
                                    std::to_string(result.space) +
                                    " knob combinations: pass --sample N");
  }
  std::vector<problem::Candidate> space =
      result.space > cap ? sample_space(problem, options.sample, options.seed, options.families)
                         : search_space(problem, std::min(result.space, cap), options.families);
  if (options.sample != 0 && options.sample < space.size()) {
    // Partial Fisher-Yates with splitmix64: the same sample on every machine.
    uint64_t s = options.seed;
    for (size_t i = 0; i < options.sample; ++i) {
      s = mix64(s + i);
      std::swap(space[i], space[i + s % (space.size() - i)]);
    }
    space.resize(options.sample);
  }
  std::vector<problem::Candidate> todo = {problem.seed};
  std::set<std::string> seen = {problem.seed.hash()};
  for (auto& c : space) {
    if (seen.insert(c.hash()).second) todo.push_back(std::move(c));
  }

  fs::create_directories(options.run_dir, ec);
  storage::JournalOptions jo;
  jo.durability = storage::Durability::kBatch;
  auto journal = storage::Journal::open((options.run_dir / "log").string(), jo);
  if (!journal) return journal.status();
  storage::Journal& j = *journal.value();
  const std::string id = arc::sha256_hex(problem.hash + "|sweep|" + std::to_string(options.seed) +
                                         "|" + std::to_string(todo.size()))
                             .substr(0, 16);
  if (auto s = j.set_campaign(id); !s) return s;
  {
    fb::CampaignStartedT s;
    s.problem_name = problem.name;
    s.problem_hash = problem.hash;
    s.problem_dir = problem.dir.string();
    s.kernel_type = problem.kernel_type;
    s.seed = options.seed;
    s.mode = "sweep";
    s.budget = static_cast<uint32_t>(todo.size());
    s.device = first->device();
    auto e = events::make_event("sweep", std::move(s));
    if (auto r = j.append(e); !r) return r.status();
  }
  auto peaks = first->peaks();
  if (!peaks) return peaks.status();
  {
    auto e = events::make_event("guard", peaks.value());
    if (auto r = j.append(e); !r) return r.status();
  }
  // Every worker measures on its own thread; the log takes the results in candidate order.
  const size_t jobs = options.compile_jobs ? options.compile_jobs
                                           : std::max(1u, std::thread::hardware_concurrency());
  CompileAhead ahead(compiler, todo, jobs);
  Handout handout(todo.size(), workers.size());
  auto say = [&options](const std::string& what) {
    if (options.notice) options.notice(what);
  };
  auto measure = [&](CampaignWorker& w) {
    bool lost = false;
    while (true) {
      if (std::string why = unavailable(w); !why.empty()) {
        if (!lost)
          say("worker " + w.name + " cannot measure (" + why + "); reaching it every second");
        lost = true;
        live.lose(w.name);
        bool refused = false;
        if (!reach(w, live, &refused, &why)) {
          if (refused) {
            say("worker " + w.name + " refused: " + why);
            handout.worker_gone();
            return;
          }
          if (handout.over_after(std::chrono::milliseconds(1000))) return;
          continue;
        }
        say("worker " + w.name + " joined again");
        lost = false;
      }
      const std::optional<size_t> i = handout.take();
      if (!i) return;
      const problem::Candidate& c = todo[*i];
      const std::string hash = c.hash();
      Measured m;
      m.compiled = w.local && compiler != nullptr ? ahead.get(*i) : w.evaluator->compile(c, hash);
      m.compiled.candidate_hash = hash;
      eval::EvalRequest req{c, hash, seed_for(options.seed, *i, 0x5eed), options.evaluation};
      if (unavailable(w).empty()) m.evaluation = w.evaluator->evaluate(req, m.compiled);
      if (!unavailable(w).empty()) {
        handout.give_back(*i);  // nothing of a lost worker's call is the candidate's
        continue;
      }
      m.evaluation.candidate_hash = hash;
      m.evaluation.input_seed = req.input_seed;
      m.evaluation.worker = w.name;
      if (m.evaluation.device.empty()) m.evaluation.device = w.evaluator->device();
      handout.put(*i, std::move(m));
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (auto& w : workers) threads.emplace_back(measure, std::ref(w));
  Status failed = Status::ok();
  for (size_t i = 0; i < todo.size() && failed; ++i) {
    std::optional<Measured> m = handout.wait_for(i);
    if (!m) {
      failed = Status::unavailable("no worker is left to measure the sweep (every one refused)");
      break;
    }
    const problem::Candidate& c = todo[i];
    fb::CandidateProposedT p;
    p.candidate_hash = c.hash();
    p.agent = "sweep";
    p.move = "sweep";
    p.canonical = c.canonical();
    bool all_ok = !m->evaluation.workloads.empty();
    for (const auto& w : m->evaluation.workloads) all_ok &= w->status == fb::WorkloadStatus::OK;
    result.ok += all_ok ? 1 : 0;
    std::vector<events::Event> batch;
    batch.push_back(events::make_event("sweep", std::move(p)));
    batch.push_back(events::make_event("guard", std::move(m->compiled)));
    batch.push_back(events::make_event("guard", std::move(m->evaluation)));
    if (auto r = j.append_all(batch); !r) {
      failed = r.status();
      break;
    }
    ++result.candidates;
    if (options.progress) options.progress(result.candidates, static_cast<uint32_t>(todo.size()));
  }
  handout.stop();
  for (auto& t : threads) t.join();
  if (!failed) return failed;
  fb::CampaignStoppedT stop;
  stop.reason = "sweep of " + std::to_string(result.candidates) + " candidates (" +
                std::to_string(result.ok) + " correct) out of a space of " +
                std::to_string(result.space);
  stop.candidates = result.candidates;
  auto e = events::make_event("sweep", std::move(stop));
  if (auto r = j.append(e); !r) return r.status();
  if (auto s = j.sync(); !s) return s;
  return result;
}

}  // namespace arc::actors
