#include "actors/sweep.h"

#include <algorithm>
#include <set>
#include <thread>

#include "actors/agent_core.h"
#include "actors/sweep_measure.h"
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
  eval::Evaluator* first = nullptr;  // the first connected worker: the device and the peaks
  for (const auto& w : workers) {
    if (w.evaluator != nullptr && first == nullptr) first = w.evaluator;
  }
  if (first == nullptr) return Status::unavailable("no worker could be reached for the sweep");
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
  // Measured on every worker at once, logged in candidate order.
  MeasureOptions mo;
  mo.seed = options.seed;
  mo.evaluation = options.evaluation;
  mo.compile_jobs = options.compile_jobs ? options.compile_jobs
                                         : std::max(1u, std::thread::hardware_concurrency());
  mo.notice = options.notice;
  Status measured = measure_in_order(todo, workers, mo, [&](size_t i, Measured m) -> Status {
    const problem::Candidate& c = todo[i];
    fb::CandidateProposedT p;
    p.candidate_hash = c.hash();
    p.agent = "sweep";
    p.move = "sweep";
    p.canonical = c.canonical();
    bool all_ok = !m.evaluation.workloads.empty();
    for (const auto& w : m.evaluation.workloads) all_ok &= w->status == fb::WorkloadStatus::OK;
    result.ok += all_ok ? 1 : 0;
    std::vector<events::Event> batch;
    batch.push_back(events::make_event("sweep", std::move(p)));
    batch.push_back(events::make_event("guard", std::move(m.compiled)));
    batch.push_back(events::make_event("guard", std::move(m.evaluation)));
    if (auto r = j.append_all(batch); !r) return r.status();
    ++result.candidates;
    if (options.progress) options.progress(result.candidates, static_cast<uint32_t>(todo.size()));
    return Status::ok();
  });
  if (!measured) return measured;
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
