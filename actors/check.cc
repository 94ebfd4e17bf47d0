#include "actors/check.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include "base/trim.h"
#include "eval/cuda_evaluator.h"

namespace arc::actors {

using problem::Family;
using problem::Problem;
using problem::Variant;

namespace {

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::string resolved_kind(const Problem& p, const eval::EvaluatorChoice& choice) {
  return choice.kind == "auto" ? p.backend : choice.kind;
}

std::string relative_to(const std::filesystem::path& p, const std::filesystem::path& dir) {
  std::error_code ec;
  auto r = std::filesystem::relative(p, dir, ec);
  return ec || r.empty() ? p.string() : r.string();
}

}  // namespace

std::vector<Variant> extreme_variants(const Family& family,
                                      const std::map<std::string, int64_t>& params) {
  std::vector<Variant> out;
  auto add = [&](Variant v) {
    if (!family.constraint_violation(v.knobs, params).empty()) return;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
  };
  const Variant defaults = family.default_variant();
  add(defaults);
  for (const auto& k : family.knobs) {
    Variant first = defaults, last = defaults;
    first.knobs[k.name] = k.values.front();
    last.knobs[k.name] = k.values.back();
    add(first);
    add(last);
  }
  Variant all_first = defaults, all_last = defaults;
  for (const auto& k : family.knobs) {
    all_first.knobs[k.name] = k.values.front();
    all_last.knobs[k.name] = k.values.back();
  }
  add(all_first);
  add(all_last);
  return out;
}

std::string first_error_line(std::string_view message) {
  const auto lines = lines_of(message);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].find("error") != std::string_view::npos) return trim(lines[i]);
  }
  for (const auto& l : lines) {
    std::string t = trim(l);
    if (!t.empty()) return t;
  }
  return "";
}

bool is_deliberate_rejection(std::string_view first_error) {
  for (std::string_view mark : {"static assertion failed", "static_assert failed", "#error"}) {
    if (first_error.find(mark) != std::string_view::npos) return true;
  }
  return false;
}

std::string knob_text(const Family& family, const Variant& variant) {
  std::string out;
  for (const auto& k : family.knobs) {
    auto it = variant.knobs.find(k.name);
    if (it == variant.knobs.end()) continue;
    if (!out.empty()) out += ' ';
    out += k.name + "=" + it->second;
  }
  return out.empty() ? "(no knobs)" : out;
}

int CheckReport::exit_code() const {
  if (!failures.empty()) return kCheckFailed;
  if (no_device) return kCheckNoDevice;
  return seed_ran && seed_ok ? kCheckPassed : kCheckFailed;
}

Status require_device(const Problem& problem, const eval::EvaluatorChoice& choice) {
  if (resolved_kind(problem, choice) != "cuda") return Status::ok();
  std::string why;
  if (eval::CudaEvaluator::device_available(&why)) return Status::ok();
  return Status::unavailable(why.empty() ? "no CUDA device" : why);
}

Result<CheckReport> check_problem(const Problem& problem, const CheckOptions& options) {
  auto made = eval::make_evaluator(options.choice, problem);
  if (!made) return made.status();
  eval::Evaluator& ev = *made.value();

  CheckReport r;
  r.problem = problem.name;
  r.backend = problem.backend;
  r.reference = relative_to(problem.reference, problem.dir);

  // Every variant to compile, by family; the seed too when it is not an extreme.
  struct Job {
    const Family* family;
    Variant variant;
  };
  std::vector<Job> jobs;
  for (const auto& f : problem.families) {
    if (!f.library.empty()) {
      r.library_families.push_back(f.name + ": " + f.library);
      continue;
    }
    r.families.push_back(f.name);
    std::vector<Variant> vs = extreme_variants(f, problem.integer_params());
    if (problem.seed.base.family == f.name && problem.seed.base.source.empty() &&
        std::find(vs.begin(), vs.end(), problem.seed.base) == vs.end()) {
      vs.push_back(problem.seed.base);
    }
    for (auto& v : vs) jobs.push_back({&f, std::move(v)});
  }

  // Each variant through the evaluator's own compile path, several at once.
  std::vector<fb::CompileFinishedT> results(jobs.size());
  fb::CompiledVariantT reference;
  {
    unsigned n = options.jobs != 0 ? options.jobs : std::thread::hardware_concurrency();
    n = std::max(1u, std::min<unsigned>(n, static_cast<unsigned>(jobs.size() + 1)));
    std::atomic<size_t> next{0};
    auto work = [&ev, &jobs, &results, &reference, &next]() {
      for (;;) {
        const size_t i = next.fetch_add(1);
        if (i > jobs.size()) return;
        if (i == jobs.size()) {
          reference = ev.compile_reference();
          continue;
        }
        problem::Candidate c;
        c.base = jobs[i].variant;
        results[i] = ev.compile(c, c.hash());
      }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
  }

  r.reference_ok = reference.ok;
  if (!reference.ok) {
    r.reference_error = reference.error;
    r.failures.push_back({"", {}, "", first_error_line(reference.error), reference.error});
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& res = results[i];
    if (r.toolchain.empty()) r.toolchain = res.toolchain;
    const std::string& fam = jobs[i].family->name;
    ++r.attempted[fam];
    ++r.variants;
    const fb::CompiledVariantT* cv =
        !res.variants.empty() && res.variants.front() ? res.variants.front().get() : nullptr;
    if (cv != nullptr && cv->ok) {
      ++r.compiled[fam];
      ++r.variants_ok;
      continue;
    }
    const std::string error = cv != nullptr ? cv->error : "the compiler gave no result";
    CheckFailure f{fam, jobs[i].variant.knobs, knob_text(*jobs[i].family, jobs[i].variant),
                   first_error_line(error), error};
    const bool must_compile = jobs[i].variant == jobs[i].family->default_variant() ||
                              jobs[i].variant == problem.seed.base;
    if (!must_compile && is_deliberate_rejection(f.first_error)) {
      r.rejected.push_back(std::move(f));
    } else {
      r.failures.push_back(std::move(f));
    }
  }

  // A problem whose families are all library families compiled no variant: the toolchain is
  // the one its reference compiled with.
  if (r.toolchain.empty()) r.toolchain = ev.compile(problem.seed, problem.seed.hash()).toolchain;

  // The seed, where it can run.
  const Variant& seed = problem.seed.base;
  bool seed_compiled = true;
  for (const auto& f : r.failures) {
    if (f.family.empty() || (f.family == seed.family && f.knobs == seed.knobs)) {
      seed_compiled = false;
    }
  }
  if (Status dev = require_device(problem, options.choice); !dev) {
    r.no_device = true;
    r.not_run = dev.message();
    return r;
  }
  if (!seed_compiled) {
    r.not_run = r.reference_ok ? "the seed did not compile" : "the reference did not compile";
    return r;
  }
  const std::string hash = problem.seed.hash();
  auto compiled = ev.compile(problem.seed, hash);
  eval::EvalRequest req{problem.seed, hash, 1, options.seed_settings};
  r.seed = ev.evaluate(req, compiled);
  r.seed_ran = true;
  r.seed_ok = compiled.ok && !r.seed.workloads.empty();
  for (const auto& w : r.seed.workloads) {
    r.seed_ok = r.seed_ok && w && w->status == fb::WorkloadStatus::OK;
  }
  return r;
}

std::string to_text(const CheckReport& r) {
  std::string out;
  char buf[512];
  const char* compiler = r.backend == "cuda" ? "NVRTC" : "the system compiler";
  std::snprintf(buf, sizeof buf,
                "compiled with %s (%s): each family at its defaults and at its knob extremes\n",
                compiler, r.toolchain.c_str());
  out += buf;
  out += "  reference " + r.reference + (r.reference_ok ? ": compiled\n" : ": FAILED to compile\n");
  for (const auto& f : r.families) {
    const size_t ok = r.compiled.count(f) != 0 ? r.compiled.at(f) : 0;
    const size_t all = r.attempted.count(f) != 0 ? r.attempted.at(f) : 0;
    std::snprintf(buf, sizeof buf, "  family %-16s %zu/%zu variants compiled\n", f.c_str(), ok,
                  all);
    out += buf;
  }
  for (const auto& l : r.library_families) {
    out += "  family " + l + " (library, no source): checked at run time\n";
  }
  for (const auto& f : r.rejected) {
    out += "  rejected by its source: family " + f.family + " with " + f.knob_text + ": " +
           f.first_error + "\n";
  }
  for (const auto& f : r.failures) {
    if (f.family.empty()) {
      out += "  compile error: reference " + r.reference + ": " + f.first_error + "\n";
    } else {
      out += "  compile error: family " + f.family + " with " + f.knob_text + ": " + f.first_error +
             "\n";
    }
  }
  std::snprintf(buf, sizeof buf, "%zu of %zu variants compiled, the reference %s", r.variants_ok,
                r.variants, r.reference_ok ? "compiled" : "did not compile");
  std::string summary = buf;
  if (!r.rejected.empty()) {
    summary += ", " + std::to_string(r.rejected.size()) +
               " rejected by their family's static_assert or #error";
  }
  if (!r.failures.empty()) {
    summary += "; " + std::to_string(r.failures.size()) + " compile failure" +
               (r.failures.size() == 1 ? "" : "s");
  }
  if (r.no_device) {
    out += summary + "; nothing ran because there is no usable CUDA device (" + r.not_run + ")\n";
  } else if (!r.seed_ran) {
    out += summary + "; the seed was not run: " + r.not_run + "\n";
  } else {
    out += summary + "\n";
    for (const auto& w : r.seed.workloads) {
      if (!w) continue;
      std::snprintf(buf, sizeof buf, "  seed on %-16s %-14s median %10.1f ns  ",
                    w->workload.c_str(), fb::EnumNameWorkloadStatus(w->status), w->median_ns);
      out += buf + w->error + "\n";
    }
    out += r.seed_ok ? "the seed passes its own check\n" : "the seed FAILS its own check\n";
  }
  return out;
}

}  // namespace arc::actors
