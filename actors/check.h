#pragma once
// `arcd check PROBLEM`: compiles the reference and every family at its knob extremes through
// the evaluator's own compile path (the system compiler for host problems, NVRTC for CUDA
// problems; neither needs a GPU), reports each failure with the family, the knob values and
// the compiler's first error, and only then, where the device exists, checks and times the
// seed. A CUDA problem on a machine without a usable GPU is compiled and not run: that is
// its own outcome (kCheckNoDevice), never a failure of the seed.
//
// Also here: the test `arcd run`, `resume`, `sweep` and `confirm` make before they create or
// touch a run directory, so a CUDA campaign without a GPU stops with a one-line reason.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "eval/evaluators.h"
#include "events/events_generated.h"
#include "problem/problem.h"

namespace arc::actors {

// arcd's exit codes for check (and, for kCheckNoDevice, for run/resume/sweep/confirm).
inline constexpr int kCheckPassed = 0;    // everything compiled and the seed passed its check
inline constexpr int kCheckFailed = 1;    // a compile failure, or the seed fails its check
inline constexpr int kCheckNoDevice = 5;  // everything compiled; nothing ran: no CUDA device

// The variants `arcd check` compiles for a family with knobs: its defaults; each knob at its
// first and at its last value with the others at their defaults; every knob at its first
// value; every knob at its last value. Duplicates dropped, first occurrence kept; every
// variant lists every knob. A family without knobs gives one variant. At most 2k + 3 for k
// knobs, so the count grows linearly, not with the size of the search space.
// Variants outside the family's constraints (given the problem's integer `params`) are left
// out: they are not in the search space.
std::vector<problem::Variant> extreme_variants(const problem::Family& family,
                                               const std::map<std::string, int64_t>& params = {});

// The compiler's first error in a compiler message: the first line containing "error" after
// the wrapper's own header line (the host compiler's "compile error (g++ exited with 1):",
// NVRTC's "<file>: NVRTC_ERROR_COMPILATION"); else the message's first non-empty line.
// Trimmed of surrounding whitespace.
std::string first_error_line(std::string_view message);

// Whether a compiler's first error is the source refusing a knob combination on purpose: a
// static assertion or an #error directive (docs/problem-format.md asks families to
// static_assert the values they support). Such a rejection at a knob extreme is reported,
// not counted as a failure; at the defaults or for the seed it is a failure.
bool is_deliberate_rejection(std::string_view first_error);

// "VEC=16 UNROLL=1", in the family's knob order; "(no knobs)" when there are none.
std::string knob_text(const problem::Family& family, const problem::Variant& variant);

struct CheckFailure {
  std::string family;                        // "" for the reference
  std::map<std::string, std::string> knobs;  // the variant's knob values
  std::string knob_text;                     // as knob_text()
  std::string first_error;                   // as first_error_line()
  std::string error;                         // the whole message
};

struct CheckReport {
  std::string problem;
  std::string backend;    // "host" | "cuda"
  std::string toolchain;  // the compiler, as the evaluator names it
  std::string reference;  // the reference source, relative to the problem folder
  bool reference_ok = false;
  std::string reference_error;                // the whole message when !reference_ok
  std::vector<std::string> families;          // families with a source, in problem order
  std::vector<std::string> library_families;  // "cublaslt: cublaslt" (checked at run time)
  std::map<std::string, size_t> compiled;     // family -> variants compiled
  std::map<std::string, size_t> attempted;    // family -> variants tried
  size_t variants = 0;                        // variants tried over all families
  size_t variants_ok = 0;                     // ... that compiled
  // variants == variants_ok + rejected.size() + the failures other than the reference.
  std::vector<CheckFailure> failures;  // the reference first, then in family order
  // Extremes the family's source refused on purpose (is_deliberate_rejection), not failures.
  std::vector<CheckFailure> rejected;

  // The seed's check. Not run when something it needs failed to compile or no device exists.
  bool seed_ran = false;
  bool seed_ok = false;
  std::string not_run;  // why the seed did not run ("" when it ran)
  bool no_device = false;
  fb::CandidateEvaluatedT seed;

  // kCheckPassed, kCheckFailed or kCheckNoDevice.
  int exit_code() const;
};

struct CheckOptions {
  eval::EvaluatorChoice choice;  // kind "auto": the problem's backend
  // Compiles running at once (each through Evaluator::compile; the compilers also cap their
  // own jobs). 0: std::thread::hardware_concurrency().
  unsigned jobs = 0;
  // The seed's check: rounds, warm-up and repetitions (a smoke test, not a measurement).
  eval::EvalSettings seed_settings = [] {
    eval::EvalSettings s;
    s.rounds = 2;
    s.warmup = 1;
    s.repetitions = 5;
    return s;
  }();
};

// Compiles, then checks the seed where it can. An error Status only when no evaluator can be
// made for the problem (bad input); compile failures and a failing seed are in the report.
Result<CheckReport> check_problem(const problem::Problem& problem, const CheckOptions& options);

// What `arcd check` prints after its header line: per family, the failures, the seed's
// workloads and a last line that says the outcome.
std::string to_text(const CheckReport& report);

// OK when the evaluator that `choice` picks for `problem` can run here. Unavailable, with
// the reason ("no CUDA device: ..."), when it is the CUDA evaluator and no usable CUDA device
// exists; what it costs: loading the driver and asking it for device 0.
Status require_device(const problem::Problem& problem, const eval::EvaluatorChoice& choice);

}  // namespace arc::actors
