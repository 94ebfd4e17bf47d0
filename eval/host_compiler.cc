#include "eval/host_compiler.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <semaphore>
#include <sstream>
#include <system_error>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include "base/arc_home.h"
#include "base/sha256.h"
#include "eval/compiler_log.h"
#include "eval/sandbox.h"
#include "eval/subprocess.h"

namespace arc::eval {

using problem::Family;
using problem::Problem;
using problem::Variant;
namespace {

namespace fs = std::filesystem;

constexpr size_t kErrorCap = 4096;
constexpr size_t kLogCap = 64 * 1024;
// Limits of one compile (with everything it starts), besides its timeout.
constexpr uint64_t kCompileMemoryBytes = uint64_t{8} << 30;  // address space per process
constexpr uint64_t kCompileFileBytes = uint64_t{512} << 20;  // any one file it writes
constexpr uint64_t kCompileProcesses = 1024;  // per user; not enforced for root (RLIMIT_NPROC)

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

bool is_hex_key(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::io_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::io_error("error reading " + p.string());
  return ss.str();
}

std::atomic<uint64_t> g_temp_counter{0};

fs::path temp_name(const fs::path& final_path) {
  return final_path.string() + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(g_temp_counter.fetch_add(1));
}

// Written under a temporary name and renamed, so a reader never sees half a file.
Status write_file_atomic(const fs::path& p, std::string_view bytes) {
  fs::path tmp = temp_name(p);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::io_error("cannot write " + tmp.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return Status::io_error("error writing " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::io_error("cannot rename to " + p.string());
  }
  return Status::ok();
}

// The first ~4 KiB, cut at a line end: the first errors are the ones that explain the rest.
std::string trim_message(const std::string& text) {
  if (text.size() <= kErrorCap) return text;
  size_t cut = text.rfind('\n', kErrorCap);
  if (cut == std::string::npos || cut < kErrorCap / 2) cut = kErrorCap;
  return text.substr(0, cut) + "\n... (" + std::to_string(text.size() - cut) + " more bytes)";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

class SlotGuard {
 public:
  explicit SlotGuard(std::counting_semaphore<>& s) : s_(s) { s_.acquire(); }
  ~SlotGuard() { s_.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  std::counting_semaphore<>& s_;
};

CompiledObject failure(std::string error) {
  CompiledObject c;
  c.error = std::move(error);
  return c;
}

}  // namespace

struct HostCompiler::Impl {
  HostCompilerOptions options;
  fs::path include_root;
  std::string version;
  std::string abi;                  // eval/host_abi.h bytes: part of every key
  std::string abi_error;            // why the ABI header could not be read
  std::counting_semaphore<> slots;  // compilers running at once, over every caller
  std::mutex locks_mu;
  std::map<std::string, std::shared_ptr<std::mutex>> key_locks;
  std::mutex memo_mu;
  std::map<std::string, CompiledObject> memo;

  explicit Impl(HostCompilerOptions o)
      : options(std::move(o)),
        slots(static_cast<std::ptrdiff_t>(
            options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency()))) {
    include_root = options.include_root;
    if (include_root.empty()) include_root = arc_home();
    auto abi_bytes = read_file(include_root / "eval" / "host_abi.h");
    if (abi_bytes) {
      abi = std::move(*abi_bytes);
    } else {
      abi_error = "the include root " + include_root.string() +
                  " has no eval/host_abi.h (set ARC_HOME to the KernelArc source tree)";
    }
    SubprocessOptions quick;
    quick.timeout_s = 30.0;
    quick.output_cap = 4096;
    auto r = run_subprocess({options.compiler, "--version"}, quick);
    if (r && r->ok()) {
      version = r->output.substr(0, r->output.find('\n'));
    } else {
      version = "unknown (" + options.compiler + " --version " +
                (r ? r->describe() : r.status().message()) + ")";
    }
    std::error_code ec;
    fs::create_directories(options.cache_dir, ec);
  }

  std::shared_ptr<std::mutex> key_lock(const std::string& key) {
    std::lock_guard lock(locks_mu);
    auto& m = key_locks[key];
    if (!m) m = std::make_shared<std::mutex>();
    return m;
  }

  // The shared sources as files under <cache>/include/<digest of names and texts>/, written
  // once (each file by atomic rename), so what compiles is the text the problem hash counted.
  Result<fs::path> header_folder(const HostCompiler::Headers& headers) {
    std::string material = "kernelarc-host-headers-v1";
    for (const auto& [name, text] : headers) {
      arc::append_key_part(material, name);
      arc::append_key_part(material, text);
    }
    const fs::path dir = options.cache_dir / "include" / arc::sha256_hex(material);
    std::error_code ec;
    if (fs::exists(dir / ".complete", ec)) return dir;
    for (const auto& [name, text] : headers) {
      const fs::path rel = fs::path(name).lexically_normal();
      if (name.empty() || rel.is_absolute() || *rel.begin() == "..") {
        return Status::invalid_argument("shared source name '" + name +
                                        "' is not a relative path inside its folder");
      }
      fs::create_directories((dir / rel).parent_path(), ec);
      if (Status st = write_file_atomic(dir / rel, text); !st) return st;
    }
    if (Status st = write_file_atomic(dir / ".complete", ""); !st) return st;
    return dir;
  }

  // `source_path` empty: the text goes to <cache>/<key>.cc.
  CompiledObject compile(const std::string& source, const fs::path& source_path,
                         const std::map<std::string, std::string>& defines,
                         const HostCompiler::Headers& headers) {
    // No caret lines: a diagnostic never quotes source text (eval/compiler_log.h).
    std::vector<std::string> argv = {options.compiler,
                                     "-O2",
                                     "-std=c++17",
                                     "-fPIC",
                                     "-shared",
                                     "-fno-diagnostics-show-caret",
                                     "-fdiagnostics-color=never",
                                     "-I" + include_root.string()};
    fs::path shared_dir;
    if (!headers.empty()) {
      auto dir = header_folder(headers);
      if (!dir) return failure("cannot write the shared sources: " + dir.status().message());
      shared_dir = *dir;
      argv.push_back("-I" + dir->string());
    }
    for (const auto& [name, value] : defines) {
      if (!is_identifier(name)) {
        return failure("knob name '" + name + "' is not a C identifier");
      }
      argv.push_back("-D" + name + "=" + value);
    }
    std::string options_text;
    for (const auto& a : argv) options_text += (options_text.empty() ? "" : " ") + a;
    if (!abi_error.empty()) {
      CompiledObject c = failure(abi_error);
      c.options = options_text;
      return c;
    }
    std::string key_material = source;
    for (const std::string* part : {&options_text, &version, &abi}) {
      key_material.push_back('\0');
      key_material += *part;
    }
    const std::string key = arc::sha256_hex(key_material);

    auto lock_ptr = key_lock(key);
    std::lock_guard key_guard(*lock_ptr);  // one compile per key at a time; others wait, then hit
    {
      std::lock_guard lock(memo_mu);
      auto it = memo.find(key);
      if (it != memo.end()) {
        CompiledObject c = it->second;
        c.cached = true;
        c.seconds = 0;
        return c;
      }
    }
    CompiledObject c = compile_uncached(source, source_path, argv, options_text, key, shared_dir);
    // Remember answers that would repeat: objects and the compiler's rejections. A timeout or
    // a failure to run may go differently next time.
    if (c.ok || c.error.rfind("compile error", 0) == 0) {
      std::lock_guard lock(memo_mu);
      memo[key] = c;
    }
    return c;
  }

  CompiledObject compile_uncached(const std::string& source, const fs::path& source_path,
                                  std::vector<std::string> argv, const std::string& options_text,
                                  const std::string& key, const fs::path& shared_dir) {
    CompiledObject c;
    c.key = key;
    c.options = options_text;
    const fs::path object = options.cache_dir / (key + ".so");
    const fs::path rejected = options.cache_dir / (key + ".err");
    std::error_code ec;
    if (fs::exists(object, ec)) {
      c.ok = true;
      c.cached = true;
      c.object = object;
      return c;
    }
    if (fs::exists(rejected, ec)) {
      auto text = read_file(rejected);
      if (text) {
        c.cached = true;
        c.error = *text;
        return c;
      }
    }
    fs::create_directories(options.cache_dir, ec);
    fs::path src = source_path;
    if (src.empty()) {
      src = options.cache_dir / (key + ".cc");
      if (!fs::exists(src, ec)) {
        if (Status s = write_file_atomic(src, source); !s) {
          c.error = "cannot write the candidate source: " + s.message();
          return c;
        }
      }
    }
    // The compiler writes into a scratch folder of its own, the only place it may write.
    const fs::path scratch = temp_name(options.cache_dir / "scratch" / key);
    fs::create_directories(scratch, ec);
    if (ec) {
      c.error = "cannot create the compile folder " + scratch.string() + ": " + ec.message();
      return c;
    }
    struct RemoveScratch {
      fs::path dir;
      ~RemoveScratch() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
      }
    } remove_scratch{scratch};
    const fs::path tmp = scratch / "object.so";
    argv.push_back("-o");
    argv.push_back(tmp.string());
    argv.push_back(src.string());

    SandboxProfile profile;
    profile.read_only = {options.cache_dir, src.parent_path(),
                         include_root / "eval" / "host_abi.h"};
    if (options.compiler.find('/') != std::string::npos) {
      for (const fs::path& p : program_paths(options.compiler)) profile.read_only.push_back(p);
    }
    profile.writable = {scratch};
    profile.env = sandbox_environment(scratch.string());
    Result<SubprocessResult> run = Status::internal("not run");
    SubprocessOptions limits;
    limits.timeout_s = options.timeout_s;
    limits.output_cap = kLogCap;
    limits.limits = {{RLIMIT_AS, kCompileMemoryBytes},
                     {RLIMIT_CPU, static_cast<uint64_t>(options.timeout_s) + 1},
                     {RLIMIT_FSIZE, kCompileFileBytes},
                     {RLIMIT_NPROC, kCompileProcesses},
                     {RLIMIT_CORE, 0}};
    {
      SlotGuard slot(slots);
      run = run_subprocess(options.sandbox.wrap(profile, argv), limits);
    }
    if (!run) {
      c.error = "cannot run the compiler: " + run.status().message();
      return c;
    }
    c.seconds = run->seconds;
    // Only what concerns the candidate's own sources (and the ABI header) reaches the log.
    std::vector<std::string> own = {src.string(), src.parent_path().string() + "/",
                                    (include_root / "eval" / "host_abi.h").string()};
    if (!shared_dir.empty()) own.push_back(shared_dir.string() + "/");
    c.log = withhold_foreign_diagnostics(run->output, own);
    if (!c.log.empty()) {
      c.log_ref = arc::sha256_hex(c.log);
      const fs::path log_path = options.cache_dir / (c.log_ref + ".log");
      if (!fs::exists(log_path, ec)) (void)write_file_atomic(log_path, c.log);
    }
    if (run->ok()) {
      fs::rename(tmp, object, ec);
      if (ec) {
        fs::remove(tmp, ec);
        c.error = "cannot move the object to " + object.string();
        return c;
      }
      c.ok = true;
      c.object = object;
      return c;
    }
    fs::remove(tmp, ec);
    if (run->timed_out || run->signal != 0) {
      // Not the source's fault, or not certainly: not cached.
      c.error = options.compiler + " " + run->describe() + " compiling " + src.string() +
                (c.log.empty() ? "" : ":\n" + trim_message(c.log));
      return c;
    }
    c.error =
        "compile error (" + options.compiler + " " + run->describe() + "):\n" + trim_message(c.log);
    (void)write_file_atomic(rejected, c.error);
    return c;
  }
};

HostCompiler::HostCompiler(HostCompilerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HostCompiler::~HostCompiler() = default;

const std::string& HostCompiler::compiler_version() const { return impl_->version; }
const std::filesystem::path& HostCompiler::include_root() const { return impl_->include_root; }
const std::filesystem::path& HostCompiler::cache_dir() const { return impl_->options.cache_dir; }

std::filesystem::path HostCompiler::object_path(const std::string& key) const {
  if (!is_hex_key(key)) return {};
  return impl_->options.cache_dir / (key + ".so");
}

CompiledObject HostCompiler::compile_file(const std::filesystem::path& source,
                                          const std::map<std::string, std::string>& defines,
                                          const Headers& headers) {
  try {
    auto text = read_file(source);
    if (!text) return failure("cannot read the source " + source.string());
    return impl_->compile(*text, source, defines, headers);
  } catch (const std::exception& e) {
    return failure(std::string("compile failed: ") + e.what());
  }
}

CompiledObject HostCompiler::compile_text(std::string_view source,
                                          const std::map<std::string, std::string>& defines,
                                          const Headers& headers) {
  try {
    return impl_->compile(std::string(source), {}, defines, headers);
  } catch (const std::exception& e) {
    return failure(std::string("compile failed: ") + e.what());
  }
}

CompiledObject HostCompiler::compile_variant(const Problem& problem, const Variant& variant) {
  try {
    if (!variant.source.empty()) {
      return compile_text(variant.source, problem.defines_for(variant), problem.headers);
    }
    const Family* family = problem.family(variant.family);
    if (family == nullptr) {
      std::vector<std::string> names;
      for (const auto& f : problem.families) names.push_back(f.name);
      return failure("problem " + problem.name + " has no family '" + variant.family +
                     "' (it has: " + join_names(names) + ")");
    }
    for (const auto& [name, value] : variant.knobs) {
      if (family->knob(name) == nullptr) {
        std::vector<std::string> names;
        for (const auto& k : family->knobs) names.push_back(k.name);
        return failure("family " + family->name + " has no knob '" + name +
                       "' (it has: " + join_names(names) + ")");
      }
    }
    return compile_file(family->source, problem.defines_for(variant), problem.headers);
  } catch (const std::exception& e) {
    return failure(std::string("compile failed: ") + e.what());
  }
}

std::vector<CompiledObject> HostCompiler::compile_variants(const Problem& problem,
                                                           const std::vector<Variant>& variants) {
  std::vector<CompiledObject> results(variants.size());
  const unsigned jobs = impl_->options.jobs != 0
                            ? impl_->options.jobs
                            : std::max(1u, std::thread::hardware_concurrency());
  const size_t n_threads = std::min<size_t>(jobs, variants.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < variants.size(); i = next.fetch_add(1)) {
      results[i] = compile_variant(problem, variants[i]);
    }
  };
  std::vector<std::thread> threads;
  try {
    for (size_t t = 1; t < n_threads; ++t) threads.emplace_back(work);
  } catch (const std::exception&) {
    // Fewer threads: the calling thread and those started still finish every variant.
  }
  work();
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace arc::eval
