#pragma once
// Compiles host family sources, free candidate source and references into shared objects:
//   g++ -O2 -std=c++17 -fPIC -shared -fno-diagnostics-show-caret -fdiagnostics-color=never
//       -I<include root> [-I<shared sources>] -D<KNOB>=<VALUE>... -o <scratch>/object.so <src>
// then renamed to <cache>/<key>.so. The log keeps only diagnostics about the candidate's own
// sources (eval/compiler_log.h).
// A problem's shared sources (include_dirs) are written under <cache>/include/<digest>/, the
// digest of their names and texts, so the option string (and the key) changes with them.
// The cache key is the SHA-256 of the source bytes, the option string, the compiler's version
// line and eval/host_abi.h (the ABI every source includes), so equal inputs never compile twice
// — across threads, processes (objects appear by atomic rename) and runs. A compile that the
// compiler rejected is cached too (<key>.err): it would fail the same way again. Timeouts and
// crashes of the compiler are not cached. Thread-safe; nothing here throws.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eval/sandbox.h"
#include "problem/candidate.h"
#include "problem/problem.h"

namespace arc::eval {

struct HostCompilerOptions {
  // Where objects (<key>.so), free sources (<key>.cc), rejections (<key>.err) and compiler
  // logs (<sha256 of log>.log) live. Required; created when missing.
  std::filesystem::path cache_dir;
  // -I root; must hold eval/host_abi.h. Empty: arc_home() (base/arc_home.h).
  std::filesystem::path include_root;
  std::string compiler = "g++";  // found in PATH unless it has a '/'
  // Compilers running at once, over all callers. 0: std::thread::hardware_concurrency().
  unsigned jobs = 0;
  double timeout_s = 120.0;  // per compile; past it the compiler is killed (not cached)
  // Where the compiler runs (eval/sandbox.h): it sees the system's /usr, the cache (read-only),
  // the source's folder, eval/host_abi.h and a scratch folder it writes the object to; limits on
  // address space, CPU time, file size and processes. Disabled: as it is, with the same limits.
  Sandbox sandbox = Sandbox::disabled("not requested");
};

struct CompiledObject {
  bool ok = false;
  bool cached = false;           // nothing was compiled: the cache answered
  std::string key;               // the cache key (lowercase hex SHA-256)
  std::filesystem::path object;  // <cache>/<key>.so when ok
  std::string options;           // the compiler command without -o and the source path
  std::string log;               // the compiler's output (at most 64 KiB)
  std::string log_ref;  // SHA-256 of `log` ("" when empty); the log is <cache>/<log_ref>.log
  std::string error;    // why not ok: the compiler's message trimmed to ~4 KiB
  double seconds = 0;   // time spent compiling (0 when cached)
};

class HostCompiler {
 public:
  explicit HostCompiler(HostCompilerOptions options);
  ~HostCompiler();
  HostCompiler(const HostCompiler&) = delete;
  HostCompiler& operator=(const HostCompiler&) = delete;

  // The first line of `<compiler> --version`, read once; "unknown (...)" when it cannot run.
  const std::string& compiler_version() const;
  const std::filesystem::path& include_root() const;
  const std::filesystem::path& cache_dir() const;
  // Where the object of a cache key lives (whether or not it exists). Keys that are not 64
  // hex digits give an empty path, so a forged key can never name another file.
  std::filesystem::path object_path(const std::string& key) const;

  // Include name -> text: shared sources the compiled one may #include by name.
  using Headers = std::map<std::string, std::string>;

  // A source file with knob defines (NAME -> VALUE; names must be C identifiers).
  CompiledObject compile_file(const std::filesystem::path& source,
                              const std::map<std::string, std::string>& defines,
                              const Headers& headers = {});
  // Source text (written to <cache>/<key>.cc first).
  CompiledObject compile_text(std::string_view source,
                              const std::map<std::string, std::string>& defines,
                              const Headers& headers = {});
  // A variant of a problem: its family's source or its free source, compiled with
  // problem.defines_for(variant) (knobs and params) and the problem's shared sources.
  // Unknown families and knobs fail with a message naming them.
  CompiledObject compile_variant(const problem::Problem& problem, const problem::Variant& variant);
  // Several variants at once on up to `jobs` threads; results in the order given.
  std::vector<CompiledObject> compile_variants(const problem::Problem& problem,
                                               const std::vector<problem::Variant>& variants);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc::eval
