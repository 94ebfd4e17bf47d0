#include "eval/quarantine.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "eval/worker_client.h"

namespace arc::eval {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` durably: a synced temporary file renamed over it, then the folder
// synced. False when any step fails (the attempt then runs unguarded rather than not at all).
bool write_synced(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) return false;
  int dfd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

int attempts(const fs::path& note) {
  std::ifstream in(note);
  int n = 0;
  return in >> n ? n : 0;
}

}  // namespace

// One run's notes. Several evaluators of one run (its workers) may compile or measure one
// candidate at once (the pairs of a paired decision): the note counts attempts of the process,
// not of each worker, so it goes up when the first concurrent attempt begins (from what it held
// before) and back down when the last returns, and while any is under way the count before
// it is the one that quarantines.
class QuarantineLedger {
 public:
  explicit QuarantineLedger(fs::path dir) : dir_(std::move(dir)) {}

  const fs::path& dir() const { return dir_; }

  // Attempts that never returned, as the next attempt would see them.
  int count(const fs::path& note) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = active_.find(note);
    return it != active_.end() ? it->second.before : attempts(note);
  }
  void begin(const fs::path& note) {
    std::lock_guard<std::mutex> lock(mu_);
    Active& a = active_[note];
    if (a.running++ > 0) return;
    a.before = attempts(note);
    std::error_code ec;
    fs::create_directories(note.parent_path(), ec);  // at the first attempt, not before
    (void)write_synced(note, std::to_string(a.before + 1));
  }
  void end(const fs::path& note) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = active_.find(note);
    if (it == active_.end() || --it->second.running > 0) return;
    std::error_code ec;
    if (it->second.before == 0) {
      fs::remove(note, ec);
    } else {
      (void)write_synced(note, std::to_string(it->second.before));
    }
    active_.erase(it);
  }

 private:
  struct Active {
    int running = 0;
    int before = 0;
  };
  fs::path dir_;
  std::mutex mu_;
  std::map<fs::path, Active> active_;
};

namespace {

class QuarantineEvaluator final : public Evaluator {
 public:
  QuarantineEvaluator(std::unique_ptr<Evaluator> inner, std::shared_ptr<QuarantineLedger> ledger,
                      problem::Problem problem)
      : inner_(std::move(inner)), ledger_(std::move(ledger)), problem_(std::move(problem)) {}

  std::string name() const override { return inner_->name(); }
  std::string device() const override { return inner_->device(); }
  std::string device_model() const override { return inner_->device_model(); }
  std::string device_key() const override { return inner_->device_key(); }
  std::string worker() const override { return inner_->worker(); }
  Status availability() const override { return inner_->availability(); }
  Status reconnect() override { return inner_->reconnect(); }
  Result<fb::PeaksMeasuredT> peaks() override { return inner_->peaks(); }
  fb::CompiledVariantT compile_reference() override { return inner_->compile_reference(); }

  fb::CompileFinishedT compile(const problem::Candidate& c, const std::string& hash) override {
    if (quarantined(hash)) return compile_failure(c, hash, reason(hash));
    Attempt a(this, hash);
    return inner_->compile(c, hash);
  }

  fb::CandidateEvaluatedT evaluate(const EvalRequest& request,
                                   const fb::CompileFinishedT& compiled) override {
    const std::string& hash = request.candidate_hash;
    if (quarantined(hash)) {
      fb::CandidateEvaluatedT out;
      out.candidate_hash = hash;
      out.device = inner_->device();
      out.input_seed = request.input_seed;
      out.evaluator = inner_->name();
      for (const auto& w : problem_.workloads) {
        out.workloads.push_back(make_workload(w.name, fb::WorkloadStatus::CRASH, reason(hash)));
      }
      return out;
    }
    Attempt a(this, hash);
    return inner_->evaluate(request, compiled);
  }

 private:
  // The note of one attempt: the count of unfinished attempts goes up before it and back down
  // (the note removed at 0) when it returns (QuarantineLedger).
  class Attempt {
   public:
    Attempt(QuarantineEvaluator* q, const std::string& hash)
        : ledger_(q->ledger_.get()), path_(q->note(hash)) {
      if (!path_.empty()) ledger_->begin(path_);
    }
    ~Attempt() {
      if (!path_.empty()) ledger_->end(path_);
    }
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;

   private:
    QuarantineLedger* ledger_;
    fs::path path_;
  };

  // "" for a hash that is not a plain name (it could not name a file of its own).
  fs::path note(const std::string& hash) const {
    if (hash.empty() || hash.size() > 128) return {};
    for (char ch : hash) {
      if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
        return {};
      }
    }
    return ledger_->dir() / hash;
  }
  bool quarantined(const std::string& hash) const {
    const fs::path n = note(hash);
    return !n.empty() && ledger_->count(n) >= kQuarantineAttempts;
  }
  std::string reason(const std::string& hash) const {
    return "quarantined: " + std::to_string(ledger_->count(note(hash))) +
           " attempts to compile or evaluate this candidate never returned (it took the engine "
           "or its worker down); it is not run again";
  }

  std::unique_ptr<Evaluator> inner_;
  std::shared_ptr<QuarantineLedger> ledger_;
  problem::Problem problem_;
};

}  // namespace

std::shared_ptr<QuarantineLedger> open_quarantine(const std::filesystem::path& dir) {
  return std::make_shared<QuarantineLedger>(dir);
}

std::unique_ptr<Evaluator> with_quarantine(std::unique_ptr<Evaluator> inner,
                                           std::shared_ptr<QuarantineLedger> ledger,
                                           const problem::Problem& problem) {
  return std::make_unique<QuarantineEvaluator>(std::move(inner), std::move(ledger), problem);
}

std::unique_ptr<Evaluator> with_quarantine(std::unique_ptr<Evaluator> inner,
                                           const std::filesystem::path& dir,
                                           const problem::Problem& problem) {
  return with_quarantine(std::move(inner), open_quarantine(dir), problem);
}

}  // namespace arc::eval
