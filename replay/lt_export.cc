#include "replay/lt_export.h"

#include <cstdio>
#include <regex>
#include <sstream>

#include "replay/export_text.h"

namespace arc::replay {
namespace {

// The runtime as the .cu carries it; @SM@ is the recorded compute capability.
constexpr const char* kRuntime =
    R"ARC(// ---- cuBLASLt: the algorithm the run measured, set up once per shape and device ----
// A row of a plan table: the algorithm the run measured for one shape.
struct arc_lt_plan {
  long long m, n, k;
  int algo; /* -1: not recorded: the heuristic decides */
  int tile, stages, splitk, reduction, swizzle;
  int custom, inner, cluster;     /* -1: not recorded (cuBLASLt's default) */
  unsigned long long lt_version;  /* the cuBLASLt that measured it (0: unknown) */
  unsigned long long bytes[8];    /* its cublasLtMatmulAlgo_t (all 0: not recorded) */
  int heur;                       /* the fallback: the heuristic's choice of this rank */
  const char* recorded;
};

namespace arc_lt {

static_assert(sizeof(cublasLtMatmulAlgo_t) == 8 * sizeof(unsigned long long),
              "cublasLtMatmulAlgo_t is eight 64-bit words");

// The most workspace an algorithm may use: what the run allowed.
constexpr size_t kMaxWorkspace = size_t(64) << 20;
// The compute capability (major * 10 + minor) that measured the tables; 0: unknown.
constexpr int kRecordedSm = @SM@;

std::string status_text(cublasStatus_t s) {
  const char* name = cublasLtGetStatusName(s);
  return name != nullptr ? name : "cublasStatus " + std::to_string(static_cast<int>(s));
}

// Records "CALL failed: STATUS" as the thread's last error; the CUDA error closest to it.
cudaError_t lt_error(cublasStatus_t s, const char* call) {
  arc_last_error_text = std::string(call) + " failed: " + status_text(s);
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED: return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return cudaErrorNotSupported;
    default: return cudaErrorUnknown;
  }
}

#define ARC_LT_TRY(call)                                                    \
  do {                                                                      \
    const cublasStatus_t arc_st_ = (call);                                  \
    if (arc_st_ != CUBLAS_STATUS_SUCCESS) return lt_error(arc_st_, #call);  \
  } while (0)

struct DescFree {
  void operator()(cublasLtMatmulDesc_t d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutFree {
  void operator()(cublasLtMatrixLayout_t l) const { cublasLtMatrixLayoutDestroy(l); }
};
struct PreferenceFree {
  void operator()(cublasLtMatmulPreference_t p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using Desc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>, DescFree>;
using Layout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>, LayoutFree>;
using Preference =
    std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, PreferenceFree>;

// One GEMM shape on one device: everything cublasLtMatmul needs, made once. In cuBLASLt's
// column-major terms D^T (n x m) = B^T (op T on k x n) * A (k x m): its A is our B.
struct Shape {
  int device = 0;
  cublasLtHandle_t handle = nullptr;
  Desc desc;
  Layout a, b, d;  // cuBLASLt's A (our B, k x n), B (our A, k x m), C = D (n x m)
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;  // what `algo` needs
  std::string plan;      // which algorithm, and why
};

struct Key {
  int device;
  long long m, n, k;
  int type;
  bool accumulate;
  uintptr_t table;
  bool operator<(const Key& o) const {
    return std::tie(device, m, n, k, type, accumulate, table) <
           std::tie(o.device, o.m, o.n, o.k, o.type, o.accumulate, o.table);
  }
};

// Every shape set up so far, and a cuBLASLt handle per device. Entries are never removed, so a
// Shape* stays valid for the life of the process.
struct Cache {
  std::shared_mutex mu;
  std::map<int, cublasLtHandle_t> handles;
  std::map<Key, std::unique_ptr<Shape>> shapes;
};

// Never destroyed: a cuBLASLt call during static destruction may find the CUDA driver gone.
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

// Makes s.algo the recorded algorithm of `row` and sets s.workspace; else says why it cannot be
// used on this device (s.algo is then undefined).
std::string use_recorded(Shape& s, const arc_lt_plan& row, cudaDataType_t type, int sm) {
  if (row.algo < 0) return "no algorithm was recorded for this shape";
  if (kRecordedSm != 0 && sm != kRecordedSm) {
    return "the algorithm was measured on sm_" + std::to_string(kRecordedSm) +
           ", this device is sm_" + std::to_string(sm);
  }
  bool have_bytes = false;
  for (unsigned long long w : row.bytes) have_bytes = have_bytes || w != 0;
  const char* how = "its recorded bytes";
  if (have_bytes && row.lt_version == cublasLtGetVersion()) {
    memcpy(&s.algo, row.bytes, sizeof s.algo);
  } else {
    // Another cuBLASLt (or a plan logged without its bytes): rebuilt from its configuration.
    how = "rebuilt from its configuration";
    cublasStatus_t st = cublasLtMatmulAlgoInit(s.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, type,
                                               type, type, type, row.algo, &s.algo);
    if (st != CUBLAS_STATUS_SUCCESS) {
      return "cublasLtMatmulAlgoInit(algo " + std::to_string(row.algo) + ") failed: " +
             status_text(st);
    }
    const uint32_t tile = static_cast<uint32_t>(row.tile);
    const uint32_t stages = static_cast<uint32_t>(row.stages);
    const int32_t splitk = row.splitk;
    const uint32_t reduction = static_cast<uint32_t>(row.reduction);
    const uint32_t swizzle = static_cast<uint32_t>(row.swizzle);
    const uint32_t custom = static_cast<uint32_t>(row.custom);
    const uint16_t inner = static_cast<uint16_t>(row.inner);
    const uint16_t cluster = static_cast<uint16_t>(row.cluster);
    struct Setting {
      cublasLtMatmulAlgoConfigAttributes_t attr;
      const void* value;
      size_t size;
      bool recorded;
      const char* name;
    } settings[] = {
        {CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, true, "TILE_ID"},
        {CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, true, "STAGES_ID"},
        {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, true, "SPLITK_NUM"},
        {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, true,
         "REDUCTION_SCHEME"},
        {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, true, "CTA_SWIZZLING"},
        {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, row.custom >= 0,
         "CUSTOM_OPTION"},
        {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, row.inner >= 0,
         "INNER_SHAPE_ID"},
        {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, row.cluster >= 0,
         "CLUSTER_SHAPE_ID"},
    };
    for (const Setting& x : settings) {
      if (!x.recorded) continue;
      st = cublasLtMatmulAlgoConfigSetAttribute(&s.algo, x.attr, x.value, x.size);
      if (st != CUBLAS_STATUS_SUCCESS) {
        return std::string("cublasLtMatmulAlgoConfigSetAttribute(") + x.name +
               ") failed: " + status_text(st);
      }
    }
  }
  cublasLtMatmulHeuristicResult_t check;
  const cublasStatus_t st = cublasLtMatmulAlgoCheck(s.handle, s.desc.get(), s.a.get(), s.b.get(),
                                                    s.d.get(), s.d.get(), &s.algo, &check);
  if (st != CUBLAS_STATUS_SUCCESS) {
    return "cublasLtMatmulAlgoCheck refused the recorded algorithm here: " + status_text(st);
  }
  if (check.workspaceSize > kMaxWorkspace) {
    return "the recorded algorithm needs " + std::to_string(check.workspaceSize) +
           " bytes of workspace here, more than the run allowed";
  }
  s.workspace = check.workspaceSize;
  s.plan = std::string("recorded algorithm (") + how + "): " + row.recorded;
  return "";
}

// Sets up one shape: descriptors, layouts, and the recorded algorithm or, where that cannot be
// used, the heuristic's choice of rank `heur` (rank 0 when it offers fewer).
cudaError_t make_shape(Cache& c, const Key& key, const arc_lt_plan* table, cudaDataType_t type,
                       std::unique_ptr<Shape>* out) {
  auto s = std::make_unique<Shape>();
  s->device = key.device;
  auto h = c.handles.find(key.device);
  if (h == c.handles.end()) {
    cublasLtHandle_t handle = nullptr;
    ARC_LT_TRY(cublasLtCreate(&handle));
    h = c.handles.emplace(key.device, handle).first;  // kept for the life of the process
  }
  s->handle = h->second;
  cublasLtMatmulDesc_t desc = nullptr;
  ARC_LT_TRY(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  s->desc.reset(desc);
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  ARC_LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  ARC_LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  cublasLtMatrixLayout_t layout = nullptr;
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, type, key.k, key.n, key.k));
  s->a.reset(layout);
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, type, key.k, key.m, key.k));
  s->b.reset(layout);
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, type, key.n, key.m, key.n));
  s->d.reset(layout);

  int major = 0, minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, key.device);
  if (e != cudaSuccess) return arc_error(e, "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, key.device);
  if (e != cudaSuccess) return arc_error(e, "cudaDeviceGetAttribute(ComputeCapabilityMinor)");

  const arc_lt_plan* row = table;
  while (row->m != 0 && !(row->m == key.m && row->n == key.n && row->k == key.k)) ++row;
  const std::string why = use_recorded(*s, *row, type, major * 10 + minor);
  if (!why.empty()) {
    cublasLtMatmulPreference_t raw = nullptr;
    ARC_LT_TRY(cublasLtMatmulPreferenceCreate(&raw));
    Preference pref(raw);
    const uint64_t max_ws = kMaxWorkspace;
    ARC_LT_TRY(cublasLtMatmulPreferenceSetAttribute(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &max_ws, sizeof max_ws));
    cublasLtMatmulHeuristicResult_t results[8] = {};
    int returned = 0;
    ARC_LT_TRY(cublasLtMatmulAlgoGetHeuristic(s->handle, desc, s->a.get(), s->b.get(),
                                              s->d.get(), s->d.get(), raw, 8, results,
                                              &returned));
    if (returned == 0) {
      arc_last_error_text = "cublasLtMatmulAlgoGetHeuristic found no algorithm for m=" +
                            std::to_string(key.m) + " n=" + std::to_string(key.n) +
                            " k=" + std::to_string(key.k);
      return cudaErrorNotSupported;
    }
    const int rank = row->heur < returned ? row->heur : 0;
    s->algo = results[rank].algo;
    s->workspace = results[rank].workspaceSize;
    s->plan = "heuristic rank " + std::to_string(rank) + " of " + std::to_string(returned) +
              ", because " + why;
  }
  *out = std::move(s);
  return cudaSuccess;
}

// The shape's setup on the current device: made by the first call, found by the others.
cudaError_t shape_for(const arc_lt_plan* table, long long m, long long n, long long k,
                      cudaDataType_t type, bool accumulate, Shape** out) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return arc_error(e, "cudaGetDevice");
  const Key key{device, m, n, k, static_cast<int>(type), accumulate,
                reinterpret_cast<uintptr_t>(table)};
  Cache& c = cache();
  {
    std::shared_lock<std::shared_mutex> lock(c.mu);
    auto it = c.shapes.find(key);
    if (it != c.shapes.end()) {
      *out = it->second.get();
      return cudaSuccess;
    }
  }
  std::unique_lock<std::shared_mutex> lock(c.mu);
  auto it = c.shapes.find(key);
  if (it == c.shapes.end()) {
    std::unique_ptr<Shape> s;
    e = make_shape(c, key, table, type, &s);
    if (e != cudaSuccess) return e;  // not cached: the next call tries again
    it = c.shapes.emplace(key, std::move(s)).first;
  }
  *out = it->second.get();
  return cudaSuccess;
}

#undef ARC_LT_TRY

}  // namespace arc_lt

// D = A B^T (+ C when c is not null; C may be D itself): A row-major [m, k], B row-major
// [n, k], C and D row-major [m, n]. `ws`: arc_lt_workspace_bytes bytes, or null for the
// launcher's own (arc_with_own_workspace).
static cudaError_t arc_lt_gemm(const arc_lt_plan* table, long long m, long long n, long long k,
                               cudaDataType_t type, const void* a, const void* b, const void* c,
                               void* d, void* ws, cudaStream_t stream) {
  arc_lt::Shape* s = nullptr;
  cudaError_t e = arc_lt::shape_for(table, m, n, k, type, c != nullptr, &s);
  if (e != cudaSuccess) return e;
  auto matmul = [&](void* workspace) -> cudaError_t {
    const float alpha = 1.0f, beta = c != nullptr ? 1.0f : 0.0f;
    const cublasStatus_t st =
        cublasLtMatmul(s->handle, s->desc.get(), &alpha, b, s->a.get(), a, s->b.get(), &beta,
                       c != nullptr ? c : d, s->d.get(), d, s->d.get(), &s->algo, workspace,
                       s->workspace, stream);
    if (st != CUBLAS_STATUS_SUCCESS) return arc_lt::lt_error(st, "cublasLtMatmul");
    return cudaSuccess;
  };
  if (ws != nullptr || s->workspace == 0) return matmul(ws);
  return arc_with_own_workspace(s->device, stream, s->workspace, matmul);
}

// The workspace the shape's algorithm uses on the current device (the most any may use when it
// cannot be set up: the launch then reports why).
static size_t arc_lt_workspace_bytes(const arc_lt_plan* table, long long m, long long n,
                                     long long k, cudaDataType_t type, bool accumulate) {
  arc_lt::Shape* s = nullptr;
  if (arc_lt::shape_for(table, m, n, k, type, accumulate, &s) != cudaSuccess) {
    return arc_lt::kMaxWorkspace;
  }
  return s->workspace;
}

// Which algorithm the shape runs on the current device, and why; the error when none.
static const char* arc_lt_plan_in_use(const arc_lt_plan* table, long long m, long long n,
                                      long long k, cudaDataType_t type, bool accumulate) {
  arc_lt::Shape* s = nullptr;
  if (arc_lt::shape_for(table, m, n, k, type, accumulate, &s) != cudaSuccess) {
    return arc_last_error_text.c_str();
  }
  return s->plan.c_str();
}

)ARC";

std::string enum_of(const std::string& name, const char* prefix) {
  if (name == "auto") return "0";
  if (name[0] == '#') return name.substr(1);
  return std::string(prefix) + name;
}

}  // namespace

LtPlanRow parse_lt_plan(const LtRecord& rec) {
  LtPlanRow r;
  const std::string& d = rec.plan;
  std::smatch m;
  static const std::regex kConfig(
      R"(algo (-?\d+), tile ([0-9x#a-z]+), stages ([0-9x#a-z]+), splitk (-?\d+), reduction ([a-z?]+), swizzle (\d+))");
  if (!std::regex_search(d, m, kConfig)) return r;
  r.algo = std::stoi(m[1]);
  r.tile = enum_of(m[2], "CUBLASLT_MATMUL_TILE_");
  r.stages = enum_of(m[3], "CUBLASLT_MATMUL_STAGES_");
  r.splitk = std::stoi(m[4]);
  const std::string red = m[5];
  r.reduction = red == "inplace"   ? "CUBLASLT_REDUCTION_SCHEME_INPLACE"
                : red == "compute" ? "CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE"
                : red == "output"  ? "CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE"
                                   : "CUBLASLT_REDUCTION_SCHEME_NONE";
  r.swizzle = std::stoi(m[6]);
  static const std::regex kShapes(R"(custom (\d+), inner (\d+), cluster (\d+))");
  if (std::regex_search(d, m, kShapes)) {
    r.custom = std::stoi(m[1]);
    r.inner = std::stoi(m[2]);
    r.cluster = std::stoi(m[3]);
  }
  static const std::regex kBytes(R"(bytes ([0-9a-f]{128})\b)");
  if (std::regex_search(d, m, kBytes)) {
    const std::string hex = m[1];
    for (size_t i = 0; i < 8; ++i)
      r.bytes.push_back(std::stoull(hex.substr(16 * i, 16), nullptr, 16));
  }
  static const std::regex kVersion(R"(cuBLASLt (\d+))");
  if (std::regex_search(rec.library, m, kVersion)) r.lt_version = std::stoull(m[1]);
  return r;
}

int recorded_sm(const std::string& device) {
  static const std::regex kSm(R"(\bsm_(\d+))");
  std::smatch m;
  return std::regex_search(device, m, kSm) ? std::stoi(m[1]) : 0;
}

std::vector<std::string> lt_runtime_includes() {
  return {"#include <cublasLt.h>",   "#include <map>",   "#include <memory>",
          "#include <shared_mutex>", "#include <tuple>", "#include <type_traits>"};
}

std::string lt_runtime(int sm) {
  std::string s = kRuntime;
  const std::string mark = "@SM@";
  s.replace(s.find(mark), mark.size(), std::to_string(sm));
  return s;
}

std::string lt_plan_table(const problem::Family& f, const std::vector<problem::Workload>& workloads,
                          const std::map<std::string, LtRecord>& records, int heur,
                          const std::string& table) {
  std::ostringstream cu;
  cu << "static const arc_lt_plan " << table << "[] = {\n";
  for (const auto& w : workloads) {
    auto it = records.find(w.name);
    const LtPlanRow r = it == records.end() ? LtPlanRow{} : parse_lt_plan(it->second);
    const std::string recorded =
        it == records.end() || it->second.plan.empty()
            ? "not recorded"
            : it->second.plan + (it->second.library.empty() ? "" : " (" + it->second.library + ")");
    cu << "  {" << w.axes.at(f.gemm.m) << ", " << w.axes.at(f.gemm.n) << ", " << w.axes.at(f.gemm.k)
       << ", " << r.algo << ", " << r.tile << ", " << r.stages << ", " << r.splitk << ", "
       << r.reduction << ", " << r.swizzle << ", " << r.custom << ", " << r.inner << ", "
       << r.cluster << ", " << r.lt_version << "ULL, {";
    for (size_t i = 0; i < 8; ++i) {
      char word[24];
      std::snprintf(word, sizeof word, "0x%016llxULL",
                    static_cast<unsigned long long>(i < r.bytes.size() ? r.bytes[i] : 0));
      cu << (i ? ", " : "") << word;
    }
    cu << "}, " << heur << ", \"" << escape_c(w.name + ": " + recorded) << "\"},\n";
  }
  cu << "  {0, 0, 0, -1, 0, 0, 1, 0, 0, -1, -1, -1, 0ULL, {0}, " << heur
     << ", \"any other shape\"}};\n\n";
  return cu.str();
}

}  // namespace arc::replay
