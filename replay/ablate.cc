#include "replay/ablate.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_runner.h"
#include "actors/guard_core.h"
#include "actors/view.h"
#include "base/rng.h"
#include "base/stats.h"
#include "eval/evaluators.h"
#include "eval/replay_evaluator.h"
#include "replay/analyze.h"
#include "replay/plot.h"
#include "replay/reach.h"
#include "replay/summary.h"

namespace arc::replay {
namespace {

double geo(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(std::max(x, 1e-300));
  return v.empty() ? 1.0 : std::exp(s / static_cast<double>(v.size()));
}

Status apply_change(actors::CampaignConfig& c, const std::string& change) {
  const auto eq = change.find('=');
  if (eq == std::string::npos) {
    return Status::invalid_argument("ablation change '" + change + "': expected KEY=VALUE");
  }
  const std::string k = change.substr(0, eq), v = change.substr(eq + 1);
  // The same ranges as the campaign fields these change (actors/campaign_config.h).
  auto number = [&v, &change](uint32_t& out, const IntegerRange& range) -> Status {
    auto n = parse_flag_integer(v, range);
    if (!n) {
      return Status::invalid_argument("ablation change '" + change + "': " + n.status().message());
    }
    out = static_cast<uint32_t>(*n);
    return Status::ok();
  };
  auto boolean = [&v, &change](bool& out) -> Status {
    if (v != "true" && v != "false") {
      return Status::invalid_argument("ablation change '" + change + "': expected true or false");
    }
    out = v == "true";
    return Status::ok();
  };
  if (k == "agents") {
    uint32_t n = 0;
    if (auto s = number(n, IntegerRange{1, c.agents.size()}); !s) return s;
    c.agents.resize(n);
    return Status::ok();
  }
  if (k == "wins" || k == "traps") {
    uint32_t& b = k == "wins" ? c.wins_bound : c.traps_bound;
    if (v == "unbounded") {
      b = 0;
      return Status::ok();
    }
    return number(b, actors::kMemoryBoundRange);
  }
  if (k == "skill" || k.rfind("skill.", 0) == 0) {
    // skill=NAME: every agent starts in skill NAME; skill.AGENT=NAME: agent AGENT does. The
    // skill must be a folder of the campaign's skills (prepare_campaign checks eligibility).
    std::error_code ec;
    if (v.empty() || !std::filesystem::is_regular_file(c.skills / v / "skill.toml", ec)) {
      return Status::invalid_argument("ablation change '" + change +
                                      "': expected a skill folder under " + c.skills.string() +
                                      ", got \"" + v + "\"");
    }
    const std::string agent = k == "skill" ? "" : k.substr(6);
    bool found = false;
    std::string names;
    for (auto& a : c.agents) {
      names += (names.empty() ? "" : ", ") + a.name;
      if (agent.empty() || a.name == agent) {
        a.skill = v;
        found = true;
      }
    }
    if (!found) {
      return Status::invalid_argument("ablation change '" + change +
                                      "': expected an agent of the campaign (" + names +
                                      "), got \"" + agent + "\"");
    }
    return Status::ok();
  }
  if (k == "drafting") return boolean(c.drafting);
  if (k == "sibling_inspection") return boolean(c.sibling_inspection);
  if (k == "plateau_window") return number(c.plateau_window, actors::kPlateauWindowRange);
  if (k == "global_plateau") return number(c.global_plateau, actors::kGlobalPlateauRange);
  if (k == "margin_scope") {
    if (v != actors::kScopeChanged && v != actors::kScopeAll) {
      return Status::invalid_argument("ablation change '" + change +
                                      "': expected margin_scope=changed or margin_scope=all");
    }
    c.margin_scope = v;
    return Status::ok();
  }
  if (k == "slower_workloads") {
    if (v != actors::kSlowerRevert && v != actors::kSlowerAllow) {
      return Status::invalid_argument(
          "ablation change '" + change +
          "': expected slower_workloads=revert or slower_workloads=allow");
    }
    c.slower_workloads = v;
    return Status::ok();
  }
  return Status::invalid_argument("ablation change '" + change +
                                  "': expected one of agents, wins, traps, drafting, "
                                  "sibling_inspection, plateau_window, global_plateau, "
                                  "margin_scope, slower_workloads, skill, skill.AGENT");
}

}  // namespace

std::vector<AblationConfig> default_ablation_configs() {
  return {{"one-agent", {"agents=1", "wins=16", "traps=16"}},
          {"bounded", {"wins=16", "traps=16"}},
          {"unbounded", {"wins=unbounded", "traps=unbounded"}},
          {"no-drafting", {"drafting=false"}},
          {"no-siblings", {"sibling_inspection=false"}}};
}

Result<AblationConfig> parse_ablation_config(const std::string& spec) {
  const auto colon = spec.find(':');
  AblationConfig c;
  c.name = spec.substr(0, colon);
  if (c.name.empty()) {
    return Status::invalid_argument("--config '" + spec + "': expected NAME:KEY=VALUE,...");
  }
  if (colon != std::string::npos) {
    std::stringstream ss(spec.substr(colon + 1));
    for (std::string item; std::getline(ss, item, ',');) {
      if (!item.empty()) c.changes.push_back(item);
    }
  }
  return c;
}

namespace {

// What one counterfactual campaign contributes to the report.
struct SeedResult {
  Status status;
  std::vector<double> best_at;  // per budget
  std::vector<std::pair<uint32_t, double>> curve;
  double best_score = 1.0;
  uint32_t unanswered = 0;
  uint32_t unanswered_gated = 0;
  uint32_t candidates = 0;
  std::string baseline_hash;  // as the campaign logged it
};

// Runs one configuration at one seed. Thread-safe: everything shared is read-only.
SeedResult run_one(const actors::PreparedCampaign& prepared, const std::string& name, uint32_t seed,
                   const AblationOptions& o, const std::vector<uint32_t>& budgets,
                   const std::shared_ptr<const eval::ReplayRecords>& records,
                   const std::shared_ptr<const actors::VariantRestriction>& restriction,
                   uint32_t threads) {
  namespace fs = std::filesystem;
  SeedResult out;
  actors::RunOptions ro;
  ro.run_dir = o.work_dir / (name + "-" + std::to_string(seed));
  ro.seed = seed;
  ro.threads = threads;
  ro.compile_jobs = 1;      // replay compiles nothing
  ro.guard_thread = false;  // and answers every evaluation at once
  ro.in_memory_log = !o.logs_on_disk;
  ro.restriction = restriction;
  std::error_code ec;
  if (o.logs_on_disk) fs::remove_all(ro.run_dir, ec);
  eval::EvaluatorChoice choice;
  choice.kind = "replay";
  choice.replay_logs = o.measurements;
  choice.replay_records = records;
  choice.resample_seed = o.exact ? 0 : seed;
  ro.make_evaluator = [choice](const problem::Problem& p) {
    return eval::make_evaluator(choice, p);
  };
  std::vector<events::Event> log;
  if (!o.logs_on_disk) {
    // Called from the journal actor only, in seq order.
    ro.observer = [&log](const events::Event& e) { log.push_back(e); };
  }
  actors::PreparedCampaign p = prepared;
  if (out.status = actors::apply_overrides(p.config, ro); !out.status) return out;
  auto run = actors::run_campaign(std::move(p), ro);
  if (!run) {
    out.status = run.status();
    return out;
  }
  if (o.logs_on_disk) {
    auto read = read_run(ro.run_dir);
    if (!read) {
      out.status = read.status();
      return out;
    }
    log = std::move(read.value());
    fs::remove_all(ro.run_dir, ec);
  }
  for (const events::Event& e : log) {
    if (e.payload.type != fb::Payload::CandidateProposed) continue;
    const auto* p = e.payload.AsCandidateProposed();
    if (p->agent == actors::kCampaignActor && p->move == actors::kBaselineMove) {
      out.baseline_hash = p->candidate_hash;
      break;
    }
  }
  const RunAnalysis a = analyze_run(ro.run_dir.string(), log);
  out.unanswered = count_unanswered(log);
  out.unanswered_gated = out.unanswered != 0 ? count_unanswered_gated(log) : 0;
  out.candidates = a.candidates;
  for (uint32_t b : budgets) {
    double best = 1.0;
    for (const auto& [i, s] : a.campaign_curve) {
      if (i <= b) best = s;
    }
    out.best_at.push_back(best);
  }
  out.best_score = a.best_score;
  out.curve = a.campaign_curve;
  return out;
}

// The recorded candidate `prefix` names (AblationOptions::baseline), checked: one recorded
// candidate has a hash that begins with it, measured correct on every workload of the problem,
// and of no excluded family.
Result<problem::Candidate> resolve_baseline(const std::string& prefix,
                                            const std::vector<std::filesystem::path>& measurements,
                                            const eval::ReplayRecords& records,
                                            const problem::Problem& problem,
                                            const std::set<std::string>& excluded) {
  const std::string flag = "--baseline '" + prefix + "'";
  std::string lower = prefix;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.empty() || lower.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Status::invalid_argument(
        flag + ": expected a recorded candidate's hash or a prefix of it (hex digits)");
  }
  std::map<std::string, std::string> proposed;  // hash -> canonical, every recorded candidate
  for (const auto& path : measurements) {
    auto log = read_run(path);
    if (!log) return log.status();
    for (const events::Event& e : log.value()) {
      if (e.payload.type != fb::Payload::CandidateProposed) continue;
      const auto* p = e.payload.AsCandidateProposed();
      proposed.emplace(p->candidate_hash, p->canonical);
    }
  }
  std::vector<std::string> matches;
  for (auto it = proposed.lower_bound(lower); it != proposed.end(); ++it) {
    if (it->first.compare(0, lower.size(), lower) != 0) break;
    matches.push_back(it->first);
  }
  if (matches.empty()) {
    return Status::invalid_argument(flag + ": expected the hash (or a unique prefix) of a " +
                                    "candidate the measurements (--from) recorded; none of their " +
                                    std::to_string(proposed.size()) + " candidates has it");
  }
  if (matches.size() > 1) {
    std::string names;
    for (size_t i = 0; i < matches.size() && i < 4; ++i) {
      names += (i ? ", " : "") + problem::short_hash(matches[i]);
    }
    return Status::invalid_argument(flag + ": ambiguous, " + std::to_string(matches.size()) +
                                    " recorded candidates begin with it (" + names +
                                    (matches.size() > 4 ? ", ..." : "") +
                                    "); expected a unique prefix");
  }
  const std::string& hash = matches.front();
  const std::string who = flag + ": candidate " + problem::short_hash(hash);
  auto candidate = problem::Candidate::from_canonical(proposed.at(hash));
  if (!candidate) {
    return Status::invalid_argument(who + ": its recorded text does not parse (" +
                                    candidate.status().message() + ")");
  }
  const auto ev = records.evaluations.find(hash);
  if (ev == records.evaluations.end()) {
    return Status::invalid_argument(
        who + " was never evaluated; expected a candidate measured correct on every workload");
  }
  for (const problem::Workload& w : problem.workloads) {
    const fb::WorkloadEvaluationT* found = nullptr;
    for (const auto& r : ev->second.workloads) {
      if (r && r->workload == w.name) found = r.get();
    }
    if (found == nullptr || found->status != fb::WorkloadStatus::OK || !(found->median_ns > 0)) {
      return Status::invalid_argument(
          who + " was not measured correct on workload " + w.name + " (" +
          (found == nullptr ? std::string("no measurement")
                            : std::string(fb::EnumNameWorkloadStatus(found->status))) +
          "); expected a candidate measured correct on every workload");
    }
  }
  std::vector<const problem::Variant*> variants = {&candidate->base};
  for (const auto& [workload, v] : candidate->gates) variants.push_back(&v);
  for (const problem::Variant* v : variants) {
    if (excluded.count(v->family) != 0) {
      return Status::invalid_argument(who + " uses family " + v->family +
                                      ", which --exclude-family excludes; expected a baseline "
                                      "in the searched families");
    }
  }
  return std::move(candidate.value());
}

}  // namespace

Result<AblationReport> run_ablation(const AblationOptions& o) {
  namespace fs = std::filesystem;
  if (o.configs.empty()) return Status::invalid_argument("ablate: no configuration");
  if (o.seeds == 0) return Status::invalid_argument("--seeds: expected a positive integer");
  if (o.budgets.empty()) return Status::invalid_argument("--budgets: expected at least one");
  if (!(o.target_score >= 0) || !std::isfinite(o.target_score)) {
    return Status::invalid_argument(
        "--target-score: expected a positive score (0: the best known)");
  }
  auto base = actors::load_campaign(o.base_campaign);
  if (!base) return base.status();
  for (size_t i = 0; i < base->agents.size(); ++i) {
    const auto* kind = actors::find_agent_backend(base->agents[i].backend);
    if (kind == nullptr || kind->format != nullptr) {
      // A counterfactual run would ask the model or command anew: not a replay.
      return Status::invalid_argument(
          o.base_campaign.string() + ": field 'agents[" + std::to_string(i) +
          "].backend': expected \"builtin\" (ablation re-runs builtin agents only), got \"" +
          base->agents[i].backend + "\"");
    }
  }
  AblationReport report;
  report.budgets = o.budgets;
  std::sort(report.budgets.begin(), report.budgets.end());
  report.seeds = o.seeds;
  const uint32_t max_budget = report.budgets.back();
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  // Every configuration is checked and prepared (problem, skills) before any campaign runs.
  std::vector<actors::PreparedCampaign> prepared;
  for (const auto& cfg : o.configs) {
    actors::CampaignConfig c = base.value();
    for (const auto& ch : cfg.changes) {
      if (auto s = apply_change(c, ch); !s) return s;
    }
    c.mode = actors::Mode::kLockstep;  // determinism: the same seed gives the same campaign
    c.budget = max_budget;
    c.durability = "batch";
    const std::string text = actors::campaign_text(c);
    const fs::path file = o.work_dir / (cfg.name + ".toml");
    std::ofstream(file) << text;
    auto parsed = actors::parse_campaign(text, file);
    if (!parsed) return parsed.status();
    auto p = actors::prepare_campaign(std::move(parsed.value()), actors::RunOptions{});
    if (!p) return p.status();
    prepared.push_back(std::move(p.value()));
  }
  const problem::Problem& problem = prepared.front().problem;
  const std::set<std::string> excluded(o.excluded_families.begin(), o.excluded_families.end());
  for (const std::string& f : excluded) {
    if (problem.family(f) == nullptr) {
      std::string names;
      for (const auto& fam : problem.families) {
        if (!names.empty()) names += ", ";
        names += fam.name;
      }
      std::string message = "--exclude-family '" + f + "': expected a family of ";
      message += problem.name;
      message += " (" + names + ")";
      return Status::invalid_argument(message);
    }
  }
  // The measurements are read once and shared by every campaign.
  if (o.measurements.empty()) {
    return Status::invalid_argument("--from: expected at least one sweep or run directory");
  }
  auto records = eval::ReplayRecords::load(o.measurements);
  if (!records) return records.status();
  if (!o.baseline.empty()) {
    auto baseline =
        resolve_baseline(o.baseline, o.measurements, *records.value(), problem, excluded);
    if (!baseline) return baseline.status();
    // The campaign's baseline is its problem's seed (actors/campaign_actor.cc).
    for (auto& p : prepared) p.problem.seed = baseline.value();
  }

  std::shared_ptr<const actors::VariantRestriction> restriction;
  if (o.measured_space || !excluded.empty()) {
    auto r = std::make_shared<actors::VariantRestriction>();
    r->whole_space = !o.measured_space;
    r->excluded_families = excluded;
    if (o.measured_space) {
      for (const auto& [key, v] : records.value()->variants.measured_variants()) {
        if (excluded.count(v.family) == 0) r->variants.emplace(key, v);
      }
    }
    restriction = std::move(r);
  }

  // Campaigns run in parallel; each result lands in its own slot, so the report is the same
  // for any number of jobs.
  const size_t n_tasks = o.configs.size() * o.seeds;
  const uint32_t jobs = static_cast<uint32_t>(std::min<size_t>(
      n_tasks, o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency())));
  // One campaign per core: all its actors share one scheduler thread.
  const uint32_t threads = 1;
  std::vector<SeedResult> results(n_tasks);
  std::atomic<size_t> next{0};
  auto worker = [&o, &prepared, &results, &next, &records, &restriction, &report, n_tasks,
                 threads] {
    for (size_t t = next++; t < n_tasks; t = next++) {
      const size_t ci = t / o.seeds;
      const uint32_t seed = static_cast<uint32_t>(t % o.seeds) + 1;
      results[t] = run_one(prepared[ci], o.configs[ci].name, seed, o, report.budgets,
                           records.value(), restriction, threads);
    }
  };
  std::vector<std::thread> pool;
  for (uint32_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();

  std::vector<std::vector<std::vector<std::pair<uint32_t, double>>>> curves;  // config, seed
  report.baseline_given = !o.baseline.empty();
  report.excluded_families = o.excluded_families;
  for (size_t ci = 0; ci < o.configs.size(); ++ci) {
    ConfigResult res;
    res.name = o.configs[ci].name;
    res.changes = o.configs[ci].changes;
    curves.emplace_back();
    for (uint32_t k = 0; k < o.seeds; ++k) {
      SeedResult& r = results[ci * o.seeds + k];
      if (!r.status) return r.status;
      if (report.baseline_hash.empty()) report.baseline_hash = r.baseline_hash;
      if (r.baseline_hash != report.baseline_hash) {
        return Status::internal("ablate: campaign " + res.name + " seed " + std::to_string(k + 1) +
                                " started from " + problem::short_hash(r.baseline_hash) +
                                ", the others from " + problem::short_hash(report.baseline_hash));
      }
      res.unanswered += r.unanswered;
      res.unanswered_gated += r.unanswered_gated;
      res.candidates += r.candidates;
      res.best_at.push_back(std::move(r.best_at));
      report.best_known = std::max(report.best_known, r.best_score);
      curves.back().push_back(std::move(r.curve));
    }
    report.configs.push_back(std::move(res));
  }
  // Statistics.
  report.target = o.target_score > 0 ? o.target_score : report.best_known;
  const size_t last = report.budgets.size() - 1;
  auto finals = [last](const ConfigResult& r) {
    std::vector<double> v;
    for (const auto& at : r.best_at) v.push_back(at[last]);
    return v;
  };
  const std::vector<double> ref = finals(report.configs.front());
  for (size_t ci = 0; ci < report.configs.size(); ++ci) {
    ConfigResult& r = report.configs[ci];
    for (size_t b = 0; b < report.budgets.size(); ++b) {
      std::vector<double> v;
      for (const auto& at : r.best_at) v.push_back(at[b]);
      r.geomean_at.push_back(geo(v));
    }
    const std::vector<double> mine = finals(r);
    r.ratio = geo(mine) / geo(ref);
    uint64_t s = 0x5eed0000 + ci;
    std::vector<double> ratios;
    for (uint32_t k = 0; k < o.bootstrap; ++k) {
      std::vector<double> a, b;
      for (size_t i = 0; i < mine.size(); ++i) a.push_back(mine[arc::splitmix64(&s) % mine.size()]);
      for (size_t i = 0; i < ref.size(); ++i) b.push_back(ref[arc::splitmix64(&s) % ref.size()]);
      ratios.push_back(geo(a) / geo(b));
    }
    if (!ratios.empty()) {
      r.ratio_low = arc::quantile(ratios, 0.025);
      r.ratio_high = arc::quantile(ratios, 0.975);
    }
    double mean = 0, var = 0;
    for (double x : mine) mean += std::log(x);
    mean /= static_cast<double>(mine.size());
    for (double x : mine) var += (std::log(x) - mean) * (std::log(x) - mean);
    r.gsd = mine.size() > 1 ? std::exp(std::sqrt(var / static_cast<double>(mine.size() - 1))) : 1;
    for (double q : {0.90, 0.95, 0.99}) {
      std::vector<double> need;
      for (const auto& curve : curves[ci]) need.push_back(first_reaching(curve, q * report.target));
      const ReachStats st = reach_stats(need, o.bootstrap, 0x7eac0000 + ci);
      r.to_reach.push_back(st.median);
      r.to_reach_low.push_back(st.low);
      r.to_reach_high.push_back(st.high);
      r.seeds_reaching.push_back(st.reached);
    }
  }
  report.curves = std::move(curves);
  return report;
}

namespace {

// Candidates to reach, for people: "-" when censored, else the median as it is (a half when the
// median falls between two seeds).
std::string reach_text(double n) {
  if (n < 0) return "-";
  std::ostringstream os;
  os << n;
  return os.str();
}

}  // namespace

std::string to_table(const AblationReport& r) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  os << r.seeds << " seeds per configuration";
  if (r.baseline_given) os << "; baseline " << problem::short_hash(r.baseline_hash);
  for (const auto& f : r.excluded_families) os << "; without " << f;
  os << "; best known " << r.best_known << "x";
  if (r.target != r.best_known) os << "; target " << r.target << "x";
  os << "\n\n";
  os << std::left << std::setw(14) << "config";
  for (uint32_t b : r.budgets) os << std::right << std::setw(9) << ("@" + std::to_string(b));
  os << std::setw(26) << "ratio [95% CI]" << std::setw(8) << "gsd" << std::setw(18)
     << "to 90/95/99%" << std::setw(20) << "to 95% [95% CI]" << std::setw(11) << "unanswered"
     << std::setw(7) << "gated"
     << "\n";
  for (const auto& c : r.configs) {
    os << std::left << std::setw(14) << c.name << std::right;
    for (double g : c.geomean_at) os << std::setw(8) << g << "x";
    std::ostringstream ci;
    ci << std::fixed << std::setprecision(3) << c.ratio << " [" << c.ratio_low << ", "
       << c.ratio_high << "]";
    std::ostringstream reach;
    for (size_t i = 0; i < c.to_reach.size(); ++i) {
      reach << (i ? "/" : "") << reach_text(c.to_reach[i]);
    }
    const std::string reach95 = c.to_reach.size() > 1 ? reach_text(c.to_reach[1]) + " [" +
                                                            reach_text(c.to_reach_low[1]) + ", " +
                                                            reach_text(c.to_reach_high[1]) + "]"
                                                      : "-";
    os << std::setw(26) << ci.str() << std::setw(8) << c.gsd << std::setw(18) << reach.str()
       << std::setw(20) << reach95 << std::setw(11) << c.unanswered << std::setw(7)
       << c.unanswered_gated << "\n";
  }
  os << "\nratio: geometric-mean best at @" << r.budgets.back() << " over the first "
     << "configuration's, bootstrap over seeds; gsd: geometric standard-deviation factor; "
     << "to 90/95/99%: median candidates to reach that fraction of the "
     << (r.target != r.best_known ? "target" : "best known")
     << " (- : not reached by half the seeds), for 95% with its bootstrap 95% interval (- : "
     << "censored); unanswered: candidates with a workload the measurements "
     << "could not answer, gated: those with gates.\n";
  return os.str();
}

nlohmann::json to_json(const AblationReport& r) {
  nlohmann::json j;
  j["budgets"] = r.budgets;
  j["seeds"] = r.seeds;
  j["best_known"] = r.best_known;
  j["target"] = r.target;
  // Only when set, so that a default ablation's report is as before.
  if (r.baseline_given) j["baseline"] = r.baseline_hash;
  if (!r.excluded_families.empty()) j["excluded_families"] = r.excluded_families;
  j["configs"] = nlohmann::json::array();
  for (const auto& c : r.configs) {
    nlohmann::json reach = nlohmann::json::object(), reach_ci = nlohmann::json::object(),
                   reaching = nlohmann::json::object();
    const char* q[] = {"0.90", "0.95", "0.99"};
    auto value = [](double n) { return n < 0 ? nlohmann::json(nullptr) : nlohmann::json(n); };
    for (size_t i = 0; i < c.to_reach.size(); ++i) {
      reach[q[i]] = value(c.to_reach[i]);
      reach_ci[q[i]] = {value(c.to_reach_low[i]), value(c.to_reach_high[i])};
      reaching[q[i]] = c.seeds_reaching[i];
    }
    j["configs"].push_back({{"name", c.name},
                            {"changes", c.changes},
                            {"geomean_best_at", c.geomean_at},
                            {"best_at_per_seed", c.best_at},
                            {"ratio", c.ratio},
                            {"ratio_ci95", {c.ratio_low, c.ratio_high}},
                            {"gsd", c.gsd},
                            {"candidates_to_reach", reach},
                            {"candidates_to_reach_ci95", reach_ci},
                            {"seeds_reaching", reaching},
                            {"candidates", c.candidates},
                            {"unanswered", c.unanswered},
                            {"unanswered_gated", c.unanswered_gated}});
  }
  return j;
}

std::string to_csv(const AblationReport& r) {
  std::ostringstream os;
  os << "config,budget,geomean_best,ratio,ratio_low,ratio_high,gsd,to_90,to_95,to_99,to_95_low,"
        "to_95_high,unanswered,unanswered_gated\n";
  os.precision(10);
  for (const auto& c : r.configs) {
    for (size_t b = 0; b < r.budgets.size(); ++b) {
      os << c.name << "," << r.budgets[b] << "," << c.geomean_at[b] << "," << c.ratio << ","
         << c.ratio_low << "," << c.ratio_high << "," << c.gsd;
      for (double t : c.to_reach) os << "," << (t < 0 ? "" : reach_text(t));
      for (double t : {c.to_reach_low.at(1), c.to_reach_high.at(1)}) {
        os << "," << (t < 0 ? "" : reach_text(t));
      }
      os << "," << c.unanswered << "," << c.unanswered_gated << "\n";
    }
  }
  return os.str();
}

}  // namespace arc::replay

namespace arc::replay {

std::string plot_ablation_svg(const AblationReport& r, const std::string& title) {
  std::vector<PlotGroup> groups;
  for (size_t i = 0; i < r.configs.size() && i < r.curves.size(); ++i) {
    groups.push_back({r.configs[i].name, r.curves[i]});
  }
  return plot_groups_svg(groups, title);
}

}  // namespace arc::replay
