// Launch dimensions resolved from their expressions, held to CUDA's limits.
#include "problem/launch.h"

#include <cmath>

#include "base/toml_text.h"
#include "problem/expression.h"

namespace arc::problem {
namespace {

// Launch dimensions

constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxBlockThreads = 1024;

}  // namespace

// Evaluates one launch or workspace expression to an integer; on failure fills `err` (all but
// `launch`) and returns false.
bool integer_value(const std::string& expr, const std::map<std::string, int64_t>& names,
                   const std::map<std::string, std::string>& hints, const std::string& field,
                   const std::string& expected, int64_t& out, LaunchError& err) {
  auto v = evaluate_in_scope(expr, names, NameScope{"name", "names", &hints});
  err.field = field;
  if (!v) {
    err.expected = "an expression that evaluates for this workload";
    err.got = in_quotes(expr) + " (" + v.status().message() + ")";
    return false;
  }
  // 2^62 keeps products of dimensions inside int64; no launch dimension comes near it.
  if (*v != std::floor(*v) || std::fabs(*v) > 4.6e18) {
    err.expected = expected + " (use cdiv(a, b) for a division that must round up)";
    err.got = in_quotes(expr) + " = " + number_text(*v);
    return false;
  }
  out = static_cast<int64_t>(*v);
  return true;
}

bool resolve_launches_impl(const std::vector<Launch>& launches,
                           const std::map<std::string, int64_t>& names,
                           const std::map<std::string, std::string>& hints,
                           std::vector<ResolvedLaunch>& out, LaunchError& err) {
  out.clear();
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    err.launch = i;
    ResolvedLaunch r;
    r.kernel = l.kernel;
    for (const bool grid : {true, false}) {
      const auto& dims = grid ? l.grid : l.block;
      const char* key = grid ? "grid" : "block";
      if (dims.empty() || dims.size() > 3) {
        err.field = key;
        err.expected = "1 to 3 expressions (x, y, z)";
        err.got = std::to_string(dims.size());
        return false;
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        const std::string field = std::string(key) + "[" + std::to_string(d) + "]";
        const int64_t limit =
            grid ? (d == 0 ? kMaxGridX : kMaxGridYZ) : (d == 2 ? kMaxBlockZ : kMaxBlockXY);
        const std::string expected = "a positive integer of at most " + std::to_string(limit) +
                                     " (the CUDA limit of " + key + "." + "xyz"[d] + ")";
        int64_t v = 0;
        if (!integer_value(dims[d], names, hints, field, expected, v, err)) return false;
        if (v <= 0 || v > limit) {
          err.expected = expected;
          err.got = in_quotes(dims[d]) + " = " + std::to_string(v);
          return false;
        }
        (grid ? r.grid : r.block)[d] = v;
      }
    }
    const int64_t threads = r.block[0] * r.block[1] * r.block[2];
    if (threads > kMaxBlockThreads) {
      err.field = "block";
      err.expected = "at most " + std::to_string(kMaxBlockThreads) + " threads per block";
      err.got = std::to_string(r.block[0]) + " x " + std::to_string(r.block[1]) + " x " +
                std::to_string(r.block[2]) + " = " + std::to_string(threads);
      return false;
    }
    const std::string shared_expected = "a number of bytes >= 0";
    if (!integer_value(l.shared, names, hints, "shared", shared_expected, r.shared, err)) {
      return false;
    }
    if (r.shared < 0) {
      err.expected = shared_expected;
      err.got = in_quotes(l.shared) + " = " + std::to_string(r.shared);
      return false;
    }
    out.push_back(std::move(r));
  }
  return true;
}

// Why a knob cannot appear in an expression for these knob values.
std::map<std::string, std::string> non_integer_knob_hints(
    const std::map<std::string, std::string>& knobs) {
  std::map<std::string, std::string> hints;
  for (const auto& [name, value] : knobs) {
    int64_t v = 0;
    if (!parse_integer(value, v)) {
      hints[name] = "knob '" + name + "' has the non-integer value " + in_quotes(value);
    }
  }
  return hints;
}

Result<std::vector<ResolvedLaunch>> resolve_launches(
    const std::vector<Launch>& launches, const Workload& w,
    const std::map<std::string, std::string>& knobs, const std::map<std::string, int64_t>& device) {
  try {
    std::vector<ResolvedLaunch> out;
    LaunchError err;
    std::map<std::string, int64_t> names = expression_names(w, knobs);
    names.insert(device.begin(), device.end());
    if (resolve_launches_impl(launches, names, non_integer_knob_hints(knobs), out, err)) {
      return out;
    }
    return Status::invalid_argument("launches[" + std::to_string(err.launch) + "]." + err.field +
                                    " (kernel '" + launches[err.launch].kernel + "'): expected " +
                                    err.expected + ", got " + err.got + " for workload '" + w.name +
                                    "'");
  } catch (const std::exception& e) {
    return Status::internal("resolving launches for workload '" + w.name + "': " + e.what());
  }
}

}  // namespace arc::problem
