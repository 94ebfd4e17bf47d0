#include "actors/sweep_measure.h"

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

namespace arc::actors {
namespace {

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

// Reaches a worker that cannot measure (actors/campaign_worker.h) and admits it again. True
// once it may measure; false to try again later, with `refused` set when it never will.
bool rejoin(CampaignWorker& w, LiveSet& live, bool* refused, std::string* why) {
  bool renewed = false;
  if (Status s = reach_worker(w, &renewed); !s) {
    *why = s.message();
    *refused = s.code() == Status::Code::kInvalidArgument;
    return false;
  }
  *why = live.admit(w.name, *w.evaluator);
  *refused = !why->empty();
  return why->empty();
}

}  // namespace

Status measure_in_order(const std::vector<problem::Candidate>& todo,
                        std::vector<CampaignWorker>& workers, const MeasureOptions& options,
                        const std::function<Status(size_t, Measured)>& take) {
  eval::Evaluator* first = nullptr;
  eval::Evaluator* compiler = nullptr;  // the first local worker's: compiles for the local ones
  for (const auto& w : workers) {
    if (w.evaluator != nullptr && first == nullptr) first = w.evaluator;
    if (w.evaluator != nullptr && w.local && compiler == nullptr) compiler = w.evaluator;
  }
  if (first == nullptr) return Status::unavailable("no worker could be reached");
  LiveSet live(first->device_model());
  for (const auto& w : workers) {
    if (w.evaluator != nullptr) live.admit(w.name, *w.evaluator);
  }
  CompileAhead ahead(compiler, todo, std::max<size_t>(1, options.compile_jobs));
  Handout handout(todo.size(), workers.size());
  auto say = [&options](const std::string& what) {
    if (options.notice) options.notice(what);
  };
  auto measure = [&](CampaignWorker& w) {
    bool lost = false;
    while (true) {
      if (std::string why = lost_reason(w); !why.empty()) {
        if (!lost)
          say("worker " + w.name + " cannot measure (" + why + "); reaching it every second");
        lost = true;
        live.lose(w.name);
        bool refused = false;
        if (!rejoin(w, live, &refused, &why)) {
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
      if (lost_reason(w).empty()) m.evaluation = w.evaluator->evaluate(req, m.compiled);
      if (!lost_reason(w).empty()) {
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
      failed = Status::unavailable("no worker is left to measure (every one was refused)");
      break;
    }
    failed = take(i, std::move(*m));
  }
  handout.stop();
  for (auto& t : threads) t.join();
  return failed;
}

}  // namespace arc::actors
