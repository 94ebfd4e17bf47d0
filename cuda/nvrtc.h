#pragma once
// NVRTC compilation of CUDA sources to cubins for one architecture (sm_90a on the H200), with
//   -std=c++17 --gpu-architecture=<arch> --ptxas-options=-v -default-device -lineinfo
//   [-I<toolkit include>] -D<KNOB>=<VALUE>...
// arc_cuda.h (the kernel ABI) is handed to NVRTC as an in-memory header, so sources include
// it by name wherever they live; a problem's shared sources (problem.toml's include_dirs) are
// handed over the same way, by their include names. The cache key is the SHA-256 of the
// source, the option string, the architecture, the NVRTC version, arc_cuda.h and the shared
// sources (when there are any); equal inputs never compile twice, across
// threads, processes (files appear by atomic rename) and runs. Rejected sources are cached
// too (<key>.err). Per kernel, registers, stack, spills and static shared memory are read from
// ptxas's report (--ptxas-options=-v) and recorded. NVRTC runs without a GPU or a driver, so
// CI compiles every shipped family. Thread-safe; nothing here throws.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace arc::cuda {

struct KernelResources {
  std::string name;
  int registers = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int shared_static_bytes = 0;
  int barriers = 0;
};

// Parses ptxas -v output ("Function properties for K", "N bytes stack frame, N bytes spill
// stores, N bytes spill loads", "Used N registers, used N barriers, N bytes smem").
std::vector<KernelResources> parse_ptxas_report(std::string_view log);

struct CompilerOptions {
  std::filesystem::path cache_dir;  // required; created when missing
  std::string arch = "sm_90a";
  // Holds cuda/include/arc_cuda.h. Empty: arc_home() (base/arc_home.h).
  std::filesystem::path include_root;
  unsigned jobs = 0;  // NVRTC compiles at once over all callers; 0: hardware_concurrency
  std::vector<std::string> extra_options;  // appended after the defaults (e.g. "-G")
};

struct Cubin {
  bool ok = false;
  bool cached = false;
  std::string key;
  std::filesystem::path path;  // <cache>/<key>.cubin when ok
  std::string options;         // the NVRTC options, space-separated
  std::string log;             // NVRTC's program log (ptxas report included), at most 64 KiB
  std::string error;           // why not ok (trimmed to ~4 KiB)
  double seconds = 0;          // 0 when cached
  std::vector<KernelResources> kernels;
};

class Compiler {
 public:
  explicit Compiler(CompilerOptions options);
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  // "NVRTC 13.0, sm_90a".
  const std::string& toolchain() const;
  const std::string& arch() const;
  const std::filesystem::path& cache_dir() const;
  // <cache>/<key>.cubin for a 64-hex-digit key, else empty.
  std::filesystem::path cubin_path(const std::string& key) const;

  // Include name -> text: sources the compiled one may #include by name.
  using Headers = std::map<std::string, std::string>;

  // Compiles `source` (named `name` in messages) with the defines (C identifiers) and the
  // in-memory headers.
  Cubin compile(std::string_view source, const std::string& name,
                const std::map<std::string, std::string>& defines, const Headers& headers = {});
  Cubin compile_file(const std::filesystem::path& source,
                     const std::map<std::string, std::string>& defines,
                     const Headers& headers = {});

  struct Job {
    std::string source;  // text
    std::string name;
    std::map<std::string, std::string> defines;
    const Headers* headers = nullptr;  // not owned; outlives compile_all; null: none
  };
  // Several at once on up to `jobs` threads; results in the order given.
  std::vector<Cubin> compile_all(const std::vector<Job>& jobs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CUDA toolkit's include folder ($CUDA_HOME/include, $CUDA_PATH/include,
// /usr/local/cuda/include) when it exists, else empty.
std::filesystem::path toolkit_include_dir();

}  // namespace arc::cuda
