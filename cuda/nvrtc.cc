#include "cuda/nvrtc.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <semaphore>
#include <sstream>
#include <thread>

#include <nvrtc.h>
#include <unistd.h>

#include "base/arc_home.h"
#include "base/sha256.h"
#include "cuda/driver.h"
#include "cuda/include_screen.h"

namespace arc::cuda {
namespace {

namespace fs = std::filesystem;
constexpr size_t kLogCap = 64 * 1024;
constexpr size_t kErrorCap = 4096;

bool read_file(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

std::atomic<uint64_t> g_tmp{0};

bool write_atomic(const fs::path& p, std::string_view bytes) {
  const fs::path tmp =
      p.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_tmp.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::string trim(const std::string& text, size_t cap) {
  if (text.size() <= cap) return text;
  size_t cut = text.rfind('\n', cap);
  if (cut == std::string::npos || cut < cap / 2) cut = cap;
  return text.substr(0, cut) + "\n... (" + std::to_string(text.size() - cut) + " more bytes)";
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// A define's value must stay one token of the command line NVRTC sees.
bool is_plain_value(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c > ' ' && c < 127 && c != '"' && c != '\'' && c != '\\';
  });
}

int int_before(std::string_view line, std::string_view word) {
  size_t at = line.find(word);
  if (at == std::string_view::npos) return 0;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t start = end;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9') --start;
  if (start == end) return 0;
  return std::atoi(std::string(line.substr(start, end - start)).c_str());
}

int int_after(std::string_view line, std::string_view word) {
  size_t at = line.find(word);
  if (at == std::string_view::npos) return 0;
  at += word.size();
  while (at < line.size() && line[at] == ' ') ++at;
  return std::atoi(std::string(line.substr(at, 16)).c_str());
}

}  // namespace

std::vector<KernelResources> parse_ptxas_report(std::string_view log) {
  std::vector<KernelResources> out;
  auto find = [&](const std::string& name) -> KernelResources& {
    for (auto& k : out) {
      if (k.name == name) return k;
    }
    out.push_back(KernelResources{name});
    return out.back();
  };
  KernelResources* current = nullptr;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string_view::npos) nl = log.size();
    std::string_view line = log.substr(pos, nl - pos);
    pos = nl + 1;
    constexpr std::string_view kProps = "Function properties for ";
    constexpr std::string_view kCompiling = "Compiling entry function '";
    if (size_t at = line.find(kProps); at != std::string_view::npos) {
      std::string name(line.substr(at + kProps.size()));
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
      current = &find(name);
    } else if (size_t c = line.find(kCompiling); c != std::string_view::npos) {
      std::string_view rest = line.substr(c + kCompiling.size());
      current = &find(std::string(rest.substr(0, rest.find('\''))));
    } else if (current != nullptr && line.find("bytes stack frame") != std::string_view::npos) {
      current->stack_bytes = int_before(line, "bytes stack frame");
      current->spill_store_bytes = int_before(line, "bytes spill stores");
      current->spill_load_bytes = int_before(line, "bytes spill loads");
    } else if (current != nullptr && line.find("Used ") != std::string_view::npos &&
               line.find("registers") != std::string_view::npos) {
      current->registers = int_after(line, "Used ");
      current->barriers = int_before(line, "barriers");
      current->shared_static_bytes = int_before(line, "bytes smem");
    }
  }
  return out;
}

fs::path toolkit_include_dir() {
  std::error_code ec;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      fs::path p = fs::path(v) / "include";
      if (fs::is_regular_file(p / "cuda_bf16.h", ec)) return p;
    }
  }
  for (const char* p : {"/usr/local/cuda/include", "/usr/local/cuda-13.0/include"}) {
    if (fs::is_regular_file(fs::path(p) / "cuda_bf16.h", ec)) return p;
  }
  return {};
}

struct Compiler::Impl {
  CompilerOptions options;
  fs::path include_root;
  fs::path toolkit_include;
  std::string abi;  // arc_cuda.h
  std::string abi_error;
  std::string toolchain;
  std::counting_semaphore<> slots;  // compilers running at once, over every caller

  explicit Impl(CompilerOptions o)
      : options(std::move(o)),
        include_root(options.include_root.empty() ? arc_home() : options.include_root),
        toolkit_include(toolkit_include_dir()),
        slots(static_cast<std::ptrdiff_t>(
            options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency()))) {
    if (!read_file(include_root / "cuda" / "include" / "arc_cuda.h", &abi)) {
      abi_error = "cannot read the kernel ABI " +
                  (include_root / "cuda" / "include" / "arc_cuda.h").string() +
                  " (set ARC_HOME to the KernelArc folder)";
    }
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    toolchain =
        "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + ", " + options.arch;
    std::error_code ec;
    fs::create_directories(options.cache_dir, ec);
  }

  // NVRTC runs in this process and would open any file it may read: a source may include only
  // the shared sources, arc_cuda.h, NVRTC's builtin headers and the toolkit's (a relative name
  // without "..", found under its include folder). "" when `text` passes; else the error.
  std::string screen_includes(std::string_view text, const std::string& what,
                              const Headers& headers) const {
    static const char* const kBuiltin[] = {
        "cuda_fp16.h",  "cuda_fp16.hpp", "cuda_bf16.h",  "cuda_bf16.hpp", "cuda_fp8.h",
        "cuda_fp8.hpp", "cuda_fp6.h",    "cuda_fp6.hpp", "cuda_fp4.h",    "cuda_fp4.hpp"};
    for (const IncludeDirective& d : include_directives(text)) {
      const std::string where = what + ":" + std::to_string(d.line) + ": ";
      if (!d.literal) {
        return where + "an #include whose operand is not a \"name\" or <name> is not allowed";
      }
      if (d.target == "arc_cuda.h" || headers.count(d.target) != 0) continue;
      if (std::find(std::begin(kBuiltin), std::end(kBuiltin), d.target) != std::end(kBuiltin)) {
        continue;
      }
      const fs::path rel = fs::path(d.target).lexically_normal();
      bool inside = !d.target.empty() && !rel.is_absolute();
      for (const auto& part : rel) inside = inside && part != "..";
      std::error_code ec;
      if (inside && !toolkit_include.empty() && fs::is_regular_file(toolkit_include / rel, ec)) {
        continue;
      }
      return where + "#include \"" + d.target +
             "\" is not allowed: a CUDA source may include the problem's shared sources, "
             "arc_cuda.h and the CUDA toolkit's headers only";
    }
    return "";
  }

  std::vector<std::string> option_list(const std::map<std::string, std::string>& defines) const {
    std::vector<std::string> opts = {"-std=c++17", "--gpu-architecture=" + options.arch,
                                     "--ptxas-options=-v", "-default-device", "-lineinfo"};
    if (!toolkit_include.empty()) opts.push_back("-I" + toolkit_include.string());
    for (const auto& [k, v] : defines) opts.push_back("-D" + k + "=" + v);
    for (const auto& e : options.extra_options) opts.push_back(e);
    return opts;
  }

  Cubin compile(std::string_view source, const std::string& name,
                const std::map<std::string, std::string>& defines, const Headers& headers) {
    Cubin out;
    for (const auto& [include, text] : headers) {
      if (include == "arc_cuda.h") {
        out.error = "a shared source may not be named arc_cuda.h (the kernel ABI's name)";
        return out;
      }
    }
    for (const auto& [k, v] : defines) {
      if (!is_identifier(k)) {
        out.error = "knob name '" + k + "' is not a C identifier";
        return out;
      }
      if (!is_plain_value(v)) {
        out.error = "knob " + k + " has value '" + v +
                    "': expected one token without spaces, quotes or backslashes";
        return out;
      }
    }
    if (!abi_error.empty()) {
      out.error = abi_error;
      return out;
    }
    if (std::string e = screen_includes(source, name, headers); !e.empty()) {
      out.error = e;
      return out;
    }
    for (const auto& [include, text] : headers) {
      if (std::string e = screen_includes(text, include, headers); !e.empty()) {
        out.error = e;
        return out;
      }
    }
    const std::vector<std::string> opts = option_list(defines);
    for (const auto& o : opts) out.options += (out.options.empty() ? "" : " ") + o;
    std::string material = "kernelarc-nvrtc-v1";
    for (std::string_view part :
         {std::string_view(source), std::string_view(out.options), std::string_view(options.arch),
          std::string_view(toolchain), std::string_view(abi)}) {
      arc::append_key_part(material, part);
    }
    // Shared sources count in the key; none leaves the keys of earlier runs as they were.
    for (const auto& [include, text] : headers) {
      arc::append_key_part(material, include);
      arc::append_key_part(material, text);
    }
    out.key = arc::sha256_hex(material);
    const fs::path cubin = options.cache_dir / (out.key + ".cubin");
    const fs::path err = options.cache_dir / (out.key + ".err");
    const fs::path log = options.cache_dir / (out.key + ".log");
    std::error_code ec;
    if (fs::is_regular_file(cubin, ec)) {
      out.ok = true;
      out.cached = true;
      out.path = cubin;
      read_file(log, &out.log);
      out.kernels = parse_ptxas_report(out.log);
      return out;
    }
    if (fs::is_regular_file(err, ec)) {
      out.cached = true;
      read_file(err, &out.error);
      read_file(log, &out.log);
      return out;
    }

    slots.acquire();
    const auto start = std::chrono::steady_clock::now();
    nvrtcProgram prog = nullptr;
    std::vector<const char*> header_names = {"arc_cuda.h"};
    std::vector<const char*> header_texts = {abi.c_str()};
    for (const auto& [include, text] : headers) {
      header_names.push_back(include.c_str());
      header_texts.push_back(text.c_str());
    }
    const std::string src(source);
    nvrtcResult r =
        nvrtcCreateProgram(&prog, src.c_str(), name.c_str(), static_cast<int>(header_names.size()),
                           header_texts.data(), header_names.data());
    if (r != NVRTC_SUCCESS) {
      slots.release();
      out.error = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(r);
      return out;
    }
    std::vector<const char*> argv;
    for (const auto& o : opts) argv.push_back(o.c_str());
    r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string text(log_size, '\0');
    if (log_size > 0) nvrtcGetProgramLog(prog, text.data());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    out.log = trim(text, kLogCap);
    std::string image;
    if (r == NVRTC_SUCCESS) {
      size_t n = 0;
      nvrtcGetCUBINSize(prog, &n);
      image.resize(n);
      if (n > 0) nvrtcGetCUBIN(prog, image.data());
    }
    nvrtcDestroyProgram(&prog);
    slots.release();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_atomic(log, out.log);
    if (r != NVRTC_SUCCESS) {
      out.error = name + ": " + nvrtcGetErrorString(r) + "\n" + trim(text, kErrorCap);
      if (r == NVRTC_ERROR_COMPILATION) write_atomic(err, out.error);  // same input, same result
      return out;
    }
    if (image.empty()) {
      out.error = name + ": NVRTC produced no cubin";
      return out;
    }
    if (!write_atomic(cubin, image)) {
      out.error = "cannot write " + cubin.string();
      return out;
    }
    out.ok = true;
    out.path = cubin;
    out.kernels = parse_ptxas_report(out.log);
    return out;
  }
};

Compiler::Compiler(CompilerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  disable_driver_compute_cache();
}
Compiler::~Compiler() = default;

const std::string& Compiler::toolchain() const { return impl_->toolchain; }
const std::string& Compiler::arch() const { return impl_->options.arch; }
const fs::path& Compiler::cache_dir() const { return impl_->options.cache_dir; }

fs::path Compiler::cubin_path(const std::string& key) const {
  if (key.size() != 64) return {};
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  }
  return impl_->options.cache_dir / (key + ".cubin");
}

Cubin Compiler::compile(std::string_view source, const std::string& name,
                        const std::map<std::string, std::string>& defines, const Headers& headers) {
  try {
    return impl_->compile(source, name, defines, headers);
  } catch (const std::exception& e) {
    Cubin c;
    c.error = std::string("internal error while compiling: ") + e.what();
    return c;
  }
}

Cubin Compiler::compile_file(const fs::path& source,
                             const std::map<std::string, std::string>& defines,
                             const Headers& headers) {
  std::string text;
  if (!read_file(source, &text)) {
    Cubin c;
    c.error = "cannot read " + source.string();
    return c;
  }
  return compile(text, source.filename().string(), defines, headers);
}

std::vector<Cubin> Compiler::compile_all(const std::vector<Job>& jobs) {
  static const Headers kNone;
  auto compile_job = [this](const Job& j) {
    return compile(j.source, j.name, j.defines, j.headers != nullptr ? *j.headers : kNone);
  };
  std::vector<Cubin> out(jobs.size());
  if (jobs.size() <= 1) {
    for (size_t i = 0; i < jobs.size(); ++i) out[i] = compile_job(jobs[i]);
    return out;
  }
  std::atomic<size_t> next{0};
  const size_t n_threads =
      std::min<size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n_threads; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < jobs.size(); i = next++) {
        out[i] = compile_job(jobs[i]);
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace arc::cuda
