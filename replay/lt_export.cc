#include "replay/lt_export.h"

#include <cstdio>
#include <regex>
#include <sstream>

#include "problem/expression.h"
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

// A library variant: its plan table and the product it computes, as the KernelArc worker runs
// it (cuda/cublaslt.cc).
struct arc_lt_variant {
  const arc_lt_plan* plans;
  cudaDataType_t ab_type; /* A and B */
  cudaDataType_t cd_type; /* C and D */
  int fp8;                /* 1: fp8 A and B: FAST_ACCUM is set and each call passes its scales */
  int fast_accum;         /* CUBLASLT_MATMUL_DESC_FAST_ACCUM (fp8 only): the knob FAST_ACCUM */
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
  // fp8: every call sets its own scale pointers on `desc`, which the shape's calls share; held
  // from setting them until cublasLtMatmul has read them (it reads the descriptor as it
  // enqueues).
  std::mutex scales;
};

struct Key {
  int device;
  long long m, n, k;
  bool accumulate;
  uintptr_t variant;  // the variant's types and FAST_ACCUM come with it
  bool operator<(const Key& o) const {
    return std::tie(device, m, n, k, accumulate, variant) <
           std::tie(o.device, o.m, o.n, o.k, o.accumulate, o.variant);
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
std::string use_recorded(Shape& s, const arc_lt_plan& row, const arc_lt_variant& v, int sm) {
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
    cublasStatus_t st = cublasLtMatmulAlgoInit(s.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F,
                                               v.ab_type, v.ab_type, v.cd_type, v.cd_type,
                                               row.algo, &s.algo);
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
cudaError_t make_shape(Cache& c, const Key& key, const arc_lt_variant& v,
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
  if (v.fp8) {
    const int8_t fast = static_cast<int8_t>(v.fast_accum);
    ARC_LT_TRY(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                              sizeof fast));
  }
  cublasLtMatrixLayout_t layout = nullptr;
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, v.ab_type, key.k, key.n, key.k));
  s->a.reset(layout);
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, v.ab_type, key.k, key.m, key.k));
  s->b.reset(layout);
  ARC_LT_TRY(cublasLtMatrixLayoutCreate(&layout, v.cd_type, key.n, key.m, key.n));
  s->d.reset(layout);

  int major = 0, minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, key.device);
  if (e != cudaSuccess) return arc_error(e, "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, key.device);
  if (e != cudaSuccess) return arc_error(e, "cudaDeviceGetAttribute(ComputeCapabilityMinor)");

  const arc_lt_plan* row = v.plans;
  while (row->m != 0 && !(row->m == key.m && row->n == key.n && row->k == key.k)) ++row;
  const std::string why = use_recorded(*s, *row, v, major * 10 + minor);
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
cudaError_t shape_for(const arc_lt_variant* v, long long m, long long n, long long k,
                      bool accumulate, Shape** out) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return arc_error(e, "cudaGetDevice");
  const Key key{device, m, n, k, accumulate, reinterpret_cast<uintptr_t>(v)};
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
    e = make_shape(c, key, *v, &s);
    if (e != cudaSuccess) return e;  // not cached: the next call tries again
    it = c.shapes.emplace(key, std::move(s)).first;
  }
  *out = it->second.get();
  return cudaSuccess;
}

// Sets a call's per-tensor scales (device pointers to one float each; null: a factor of 1) on an
// fp8 shape's descriptor, as the worker does: cuBLASLt's A is our B, so its A scale is b_scale
// and its B scale a_scale. The caller holds s.scales.
cudaError_t set_scales(Shape& s, const void* a_scale, const void* b_scale) {
  const void* lt_a_scale = b_scale;
  const void* lt_b_scale = a_scale;
  ARC_LT_TRY(cublasLtMatmulDescSetAttribute(s.desc.get(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                            &lt_a_scale, sizeof lt_a_scale));
  ARC_LT_TRY(cublasLtMatmulDescSetAttribute(s.desc.get(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                            &lt_b_scale, sizeof lt_b_scale));
  return cudaSuccess;
}

#undef ARC_LT_TRY

}  // namespace arc_lt

// D = A B^T (+ C when c is not null; C may be D itself): A row-major [m, k], B row-major
// [n, k], C and D row-major [m, n]; an fp8 variant multiplies A B^T by *a_scale and *b_scale
// (device pointers to one float each; null: 1). `ws`: arc_lt_workspace_bytes bytes, or null
// for the launcher's own (arc_with_own_workspace).
static cudaError_t arc_lt_gemm(const arc_lt_variant* v, long long m, long long n, long long k,
                               const void* a, const void* b, const void* c, void* d,
                               const float* a_scale, const float* b_scale, void* ws,
                               cudaStream_t stream) {
  arc_lt::Shape* s = nullptr;
  cudaError_t e = arc_lt::shape_for(v, m, n, k, c != nullptr, &s);
  if (e != cudaSuccess) return e;
  auto matmul = [&](void* workspace) -> cudaError_t {
    const float alpha = 1.0f, beta = c != nullptr ? 1.0f : 0.0f;
    std::unique_lock<std::mutex> scales_held;
    if (v->fp8) {
      scales_held = std::unique_lock<std::mutex>(s->scales);
      const cudaError_t se = arc_lt::set_scales(*s, a_scale, b_scale);
      if (se != cudaSuccess) return se;
    }
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
static size_t arc_lt_workspace_bytes(const arc_lt_variant* v, long long m, long long n,
                                     long long k, bool accumulate) {
  arc_lt::Shape* s = nullptr;
  if (arc_lt::shape_for(v, m, n, k, accumulate, &s) != cudaSuccess) {
    return arc_lt::kMaxWorkspace;
  }
  return s->workspace;
}

// Which algorithm the shape runs on the current device, and why; the error when none.
static const char* arc_lt_plan_in_use(const arc_lt_variant* v, long long m, long long n,
                                      long long k, bool accumulate) {
  arc_lt::Shape* s = nullptr;
  if (arc_lt::shape_for(v, m, n, k, accumulate, &s) != cudaSuccess) {
    return arc_last_error_text.c_str();
  }
  return s->plan.c_str();
}

)ARC";

// cuBLASLt's type of a 2-byte or 4-byte float dtype; null for any other.
const char* cuda_type(const std::string& dtype) {
  if (dtype == "bf16") return "CUDA_R_16BF";
  if (dtype == "f16") return "CUDA_R_16F";
  if (dtype == "f32") return "CUDA_R_32F";
  return nullptr;
}

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
  return {"#include <cublasLt.h>", "#include <map>",          "#include <memory>",
          "#include <mutex>",      "#include <shared_mutex>", "#include <tuple>",
          "#include <type_traits>"};
}

std::string lt_runtime(int sm) {
  std::string s = kRuntime;
  const std::string mark = "@SM@";
  s.replace(s.find(mark), mark.size(), std::to_string(sm));
  return s;
}

Result<LtVariant> lt_variant(const problem::Problem& p, const problem::Family& f,
                             const problem::Variant& v,
                             const std::vector<problem::Workload>& workloads,
                             const std::map<std::string, LtRecord>& records,
                             const std::string& name) {
  const problem::GemmSpec& g = f.gemm;
  const int ia = problem::tensor_index(p.inputs, g.a), ib = problem::tensor_index(p.inputs, g.b);
  const int ic = g.c.empty() ? -1 : problem::tensor_index(p.inputs, g.c);
  const int id = problem::tensor_index(p.outputs, g.d);
  const int isa = g.a_scale.empty() ? -1 : problem::tensor_index(p.inputs, g.a_scale);
  const int isb = g.b_scale.empty() ? -1 : problem::tensor_index(p.inputs, g.b_scale);
  if (ia < 0 || ib < 0 || id < 0 || (!g.c.empty() && ic < 0) || (!g.a_scale.empty() && isa < 0) ||
      (!g.b_scale.empty() && isb < 0)) {
    return Status::invalid_argument("family " + f.name + ": gemm tensors not found");
  }
  const std::string& dtype = p.inputs[static_cast<size_t>(ia)].dtype;
  const std::string& out_dtype = p.outputs[static_cast<size_t>(id)].dtype;
  const bool fp8 = dtype == "fp8_e4m3";
  const char* ab_type = fp8 ? "CUDA_R_8F_E4M3" : cuda_type(dtype);
  const char* cd_type = cuda_type(out_dtype);
  if (ab_type == nullptr || cd_type == nullptr) {
    return Status::invalid_argument(
        "family " + f.name + ": the export's cuBLASLt runtime runs bf16, f16 and f32 products " +
        "and fp8_e4m3 operands with a bf16, f16 or f32 output, not " + dtype + " x " + dtype +
        " -> " + out_dtype);
  }
  std::map<std::string, std::string> knobs = f.knob_values(v);
  int64_t heur = 0, fast_accum = 0;
  if (!problem::parse_integer(knobs["HEUR"], heur)) heur = 0;
  if (!fp8 || !problem::parse_integer(knobs["FAST_ACCUM"], fast_accum)) fast_accum = 0;

  std::ostringstream cu;
  const std::string table = name + "_plans";
  cu << "static const arc_lt_plan " << table << "[] = {\n";
  for (const auto& w : workloads) {
    auto it = records.find(w.name);
    const LtPlanRow r = it == records.end() ? LtPlanRow{} : parse_lt_plan(it->second);
    const std::string recorded =
        it == records.end() || it->second.plan.empty()
            ? "not recorded"
            : it->second.plan + (it->second.library.empty() ? "" : " (" + it->second.library + ")");
    cu << "  {" << w.axes.at(g.m) << ", " << w.axes.at(g.n) << ", " << w.axes.at(g.k) << ", "
       << r.algo << ", " << r.tile << ", " << r.stages << ", " << r.splitk << ", " << r.reduction
       << ", " << r.swizzle << ", " << r.custom << ", " << r.inner << ", " << r.cluster << ", "
       << r.lt_version << "ULL, {";
    for (size_t i = 0; i < 8; ++i) {
      char word[24];
      std::snprintf(word, sizeof word, "0x%016llxULL",
                    static_cast<unsigned long long>(i < r.bytes.size() ? r.bytes[i] : 0));
      cu << (i ? ", " : "") << word;
    }
    cu << "}, " << heur << ", \"" << escape_c(w.name + ": " + recorded) << "\"},\n";
  }
  cu << "  {0, 0, 0, -1, 0, 0, 1, 0, 0, -1, -1, -1, 0ULL, {0}, " << heur
     << ", \"any other shape\"}};\n";
  cu << "// " << dtype << " x " << dtype << " -> " << out_dtype
     << (fp8 ? ", FAST_ACCUM " + std::to_string(fast_accum) : std::string()) << "\n";
  cu << "static const arc_lt_variant " << name << " = {" << table << ", " << ab_type << ", "
     << cd_type << ", " << (fp8 ? 1 : 0) << ", " << fast_accum << "};\n\n";

  auto tensor = [](const char* list, int index) {
    return index < 0 ? std::string("nullptr")
                     : std::string(list) + "[" + std::to_string(index) + "]";
  };
  LtVariant out;
  out.definitions = cu.str();
  out.shape = "&" + name + ", llround(" + g.m + "), llround(" + g.n + "), llround(" + g.k + ")";
  // The scales as the worker passes them: the inputs gemm.a_scale and gemm.b_scale.
  auto scale = [&](int index) {
    return index < 0 ? std::string("nullptr")
                     : "static_cast<const float*>(" + tensor("inputs", index) + ")";
  };
  out.tensors = tensor("inputs", ia) + ", " + tensor("inputs", ib) + ", " + tensor("inputs", ic) +
                ", " + tensor("outputs", id) + ", " + scale(isa) + ", " + scale(isb);
  out.accumulate = ic >= 0;
  return out;
}

}  // namespace arc::replay
