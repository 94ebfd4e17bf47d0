#include "cuda/cublaslt.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include <cublasLt.h>
#include <dlfcn.h>

namespace arc::cuda {
namespace {

#include "cuda/cublaslt_names.inc"

#define ARC_LT_FUNCTIONS(X)               \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusName)                \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulAlgoConfigSetAttribute) \
  X(cublasLtMatmulAlgoConfigGetAttribute) \
  X(cublasLtMatmulAlgoCapGetAttribute)    \
  X(cublasLtMatmulAlgoCheck)              \
  X(cublasLtMatmul)

static_assert(sizeof(cublasLtMatmulAlgo_t) <= 64, "algo storage");

std::string tile_name(uint32_t id) {
#define ARC_TILE_CASE(name, value) \
  if (id == static_cast<uint32_t>(value)) return name;
  ARC_LT_TILES(ARC_TILE_CASE)
#undef ARC_TILE_CASE
  return id == 0 ? "auto" : "#" + std::to_string(id);
}

int tile_id(const std::string& s) {
#define ARC_TILE_CASE(name, value) \
  if (s == name) return static_cast<int>(value);
  ARC_LT_TILES(ARC_TILE_CASE)
#undef ARC_TILE_CASE
  return -1;
}

std::string stages_name(uint32_t id) {
#define ARC_STAGES_CASE(name, value) \
  if (id == static_cast<uint32_t>(value)) return name;
  ARC_LT_STAGES(ARC_STAGES_CASE)
#undef ARC_STAGES_CASE
  return id == 0 ? "auto" : "#" + std::to_string(id);
}

const char* reduction_name(uint32_t r) {
  switch (r) {
    case CUBLASLT_REDUCTION_SCHEME_NONE:
      return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE:
      return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE:
      return "compute";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE:
      return "output";
    default:
      return "?";
  }
}

}  // namespace

struct Lt::Impl {
#define ARC_LT_MEMBER(name) decltype(&::name) name = nullptr;
  ARC_LT_FUNCTIONS(ARC_LT_MEMBER)
#undef ARC_LT_MEMBER
  void* lib = nullptr;
  cublasLtHandle_t handle = nullptr;

  std::string status(cublasStatus_t s) const {
    const char* n = cublasLtGetStatusName != nullptr ? cublasLtGetStatusName(s) : nullptr;
    return n != nullptr ? n : "cublasStatus " + std::to_string(static_cast<int>(s));
  }
  Status check(cublasStatus_t s, const char* call) const {
    if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
    return Status::unavailable(std::string(call) + " failed: " + status(s));
  }
};

Lt::Lt(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Lt::~Lt() {
  if (impl_ && impl_->handle != nullptr) impl_->cublasLtDestroy(impl_->handle);
}

Result<std::unique_ptr<Lt>> Lt::open() {
  auto impl = std::make_unique<Impl>();
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"}) {
    impl->lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (impl->lib != nullptr) break;
  }
  if (impl->lib == nullptr) {
    const char* e = ::dlerror();
    return Status::unavailable(std::string("cuBLASLt is not available: dlopen(libcublasLt.so.13) "
                                           "failed: ") +
                               (e != nullptr ? e : "unknown error"));
  }
#define ARC_LT_LOAD(name)                                                         \
  impl->name = reinterpret_cast<decltype(impl->name)>(::dlsym(impl->lib, #name)); \
  if (impl->name == nullptr) return Status::unavailable("libcublasLt lacks " #name);
  ARC_LT_FUNCTIONS(ARC_LT_LOAD)
#undef ARC_LT_LOAD
  if (Status s = impl->check(impl->cublasLtCreate(&impl->handle), "cublasLtCreate"); !s) return s;
  return std::unique_ptr<Lt>(new Lt(std::move(impl)));
}

std::string Lt::version() const {
  return "cuBLASLt " + std::to_string(impl_->cublasLtGetVersion());
}

LtPlan::~LtPlan() {
  if (lt_ == nullptr) return;
  if (matmul_ != nullptr)
    lt_->cublasLtMatmulDescDestroy(static_cast<cublasLtMatmulDesc_t>(matmul_));
  for (void* l : {layout_a_, layout_b_, layout_c_}) {
    if (l != nullptr) lt_->cublasLtMatrixLayoutDestroy(static_cast<cublasLtMatrixLayout_t>(l));
  }
}

Result<std::unique_ptr<LtPlan>> Lt::plan(const GemmProblem& g, const LtConfig& c,
                                         size_t max_workspace) {
  const Impl& L = *impl_;
  std::unique_ptr<LtPlan> p(new LtPlan());
  p->lt_ = impl_.get();
  auto type_of = [](const std::string& d, cudaDataType_t* t) {
    if (d == "bf16") {
      *t = CUDA_R_16BF;
    } else if (d == "f16") {
      *t = CUDA_R_16F;
    } else if (d == "f32") {
      *t = CUDA_R_32F;
    } else {
      return false;
    }
    return true;
  };
  cudaDataType_t dt = CUDA_R_16BF, out = CUDA_R_16BF;
  p->fp8_ = g.dtype == "fp8_e4m3";
  if (p->fp8_) {
    dt = CUDA_R_8F_E4M3;
    if (!type_of(g.out_dtype, &out)) {
      return Status::invalid_argument(
          "cuBLASLt family: fp8_e4m3 operands need a bf16, f16 or f32 output, not \"" +
          g.out_dtype + "\"");
    }
  } else if (!type_of(g.dtype, &dt)) {
    return Status::invalid_argument("cuBLASLt family: dtype \"" + g.dtype +
                                    "\" is not one of \"bf16\", \"f16\", \"f32\", \"fp8_e4m3\"");
  } else if (!g.out_dtype.empty() && g.out_dtype != g.dtype) {
    return Status::invalid_argument("cuBLASLt family: a " + g.dtype + " product has a " + g.dtype +
                                    " output, not \"" + g.out_dtype + "\"");
  } else {
    out = dt;
  }
  if (c.fast_accum != 0 && (!p->fp8_ || c.fast_accum != 1)) {
    return Status::invalid_argument("knob FAST_ACCUM = " + std::to_string(c.fast_accum) +
                                    ": expected 0, or 1 with fp8 operands");
  }
  cublasLtMatmulDesc_t desc = nullptr;
  if (Status s = L.check(L.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                         "cublasLtMatmulDescCreate");
      !s)
    return s;
  p->matmul_ = desc;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (p->fp8_) {
    const int8_t fast = static_cast<int8_t>(c.fast_accum);
    if (Status s = L.check(L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                            &fast, sizeof fast),
                           "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
        !s)
      return s;
  }
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  // cuBLASLt's A is our B (k x n, ld k, transposed); its B is our A (k x m, ld k).
  if (Status s = L.check(L.cublasLtMatrixLayoutCreate(&la, dt, static_cast<uint64_t>(g.k),
                                                      static_cast<uint64_t>(g.n), g.k),
                         "cublasLtMatrixLayoutCreate(B)");
      !s)
    return s;
  p->layout_a_ = la;
  if (Status s = L.check(L.cublasLtMatrixLayoutCreate(&lb, dt, static_cast<uint64_t>(g.k),
                                                      static_cast<uint64_t>(g.m), g.k),
                         "cublasLtMatrixLayoutCreate(A)");
      !s)
    return s;
  p->layout_b_ = lb;
  if (Status s = L.check(L.cublasLtMatrixLayoutCreate(&lc, out, static_cast<uint64_t>(g.n),
                                                      static_cast<uint64_t>(g.m), g.n),
                         "cublasLtMatrixLayoutCreate(D)");
      !s)
    return s;
  p->layout_c_ = lc;

  cublasLtMatmulPreference_t pref = nullptr;
  if (Status s = L.check(L.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
      !s)
    return s;
  uint64_t ws = max_workspace;
  L.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int returned = 0;
  cublasStatus_t hs =
      L.cublasLtMatmulAlgoGetHeuristic(L.handle, desc, la, lb, lc, lc, pref, 8, results, &returned);
  L.cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS || returned == 0) {
    return Status::invalid_argument(
        "cuBLASLt heuristic found no algorithm for m=" + std::to_string(g.m) +
        " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) + " (" + L.status(hs) + ")");
  }
  p->heuristic_count_ = returned;
  if (c.heur < 0 || c.heur >= returned) {
    return Status::invalid_argument("knob HEUR = " + std::to_string(c.heur) +
                                    ": the cuBLASLt heuristic returned only " +
                                    std::to_string(returned) + " algorithms for this shape");
  }
  cublasLtMatmulAlgo_t algo = results[c.heur].algo;
  size_t workspace = results[c.heur].workspaceSize;
  float waves = results[c.heur].wavesCount;
  const bool overridden = c.tile != "auto" || c.stages != "auto" || c.splitk > 0 ||
                          c.reduction != "auto" || c.swizzle >= 0;
  if (overridden) {
    auto caps = [&](cublasLtMatmulAlgoCapAttributes_t attr) {
      size_t n = 0;
      L.cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &n);
      std::vector<uint32_t> ids(n / sizeof(uint32_t));
      if (!ids.empty()) {
        L.cublasLtMatmulAlgoCapGetAttribute(&algo, attr, ids.data(), n, &n);
      }
      return ids;
    };
    auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const void* v, size_t n) {
      return L.cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, v, n) == CUBLAS_STATUS_SUCCESS;
    };
    if (c.tile != "auto") {
      const int id = tile_id(c.tile);
      if (id < 0)
        return Status::invalid_argument("knob TILE = \"" + c.tile + "\": no such cuBLASLt tile");
      std::vector<uint32_t> ok = caps(CUBLASLT_ALGO_CAP_TILE_IDS);
      if (std::find(ok.begin(), ok.end(), static_cast<uint32_t>(id)) == ok.end()) {
        std::string list;
        for (uint32_t t : ok) list += (list.empty() ? "" : ", ") + tile_name(t);
        return Status::invalid_argument(
            "knob TILE = \"" + c.tile + "\": the algorithm of heuristic rank " +
            std::to_string(c.heur) + " supports only " + (list.empty() ? "its own" : list));
      }
      const uint32_t v = static_cast<uint32_t>(id);
      set(CUBLASLT_ALGO_CONFIG_TILE_ID, &v, sizeof v);
    }
    if (c.stages != "auto") {
      std::vector<uint32_t> ok = caps(CUBLASLT_ALGO_CAP_STAGES_IDS);
      uint32_t chosen = 0;
      for (uint32_t s : ok) {
        const std::string name = stages_name(s);
        const std::string count = name.substr(name.find('x') + 1);
        if (name == c.stages || count == c.stages) {
          chosen = s;
          break;
        }
      }
      if (chosen == 0) {
        std::string list;
        for (uint32_t s : ok) list += (list.empty() ? "" : ", ") + stages_name(s);
        return Status::invalid_argument("knob STAGES = \"" + c.stages +
                                        "\": the algorithm supports only " +
                                        (list.empty() ? "its own" : list));
      }
      set(CUBLASLT_ALGO_CONFIG_STAGES_ID, &chosen, sizeof chosen);
    }
    if (c.splitk > 0) {
      const int32_t v = c.splitk;
      set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &v, sizeof v);
    }
    if (c.reduction != "auto") {
      uint32_t r = CUBLASLT_REDUCTION_SCHEME_NONE;
      if (c.reduction == "inplace")
        r = CUBLASLT_REDUCTION_SCHEME_INPLACE;
      else if (c.reduction == "compute")
        r = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      else if (c.reduction == "output")
        r = CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
      else if (c.reduction != "none")
        return Status::invalid_argument("knob REDUCTION = \"" + c.reduction +
                                        "\": expected auto, none, inplace, compute or output");
      set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &r, sizeof r);
    }
    if (c.swizzle >= 0) {
      const uint32_t v = static_cast<uint32_t>(c.swizzle);
      set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &v, sizeof v);
    }
    cublasLtMatmulHeuristicResult_t checked{};
    cublasStatus_t cs = L.cublasLtMatmulAlgoCheck(L.handle, desc, la, lb, lc, lc, &algo, &checked);
    if (cs != CUBLAS_STATUS_SUCCESS) {
      return Status::invalid_argument(
          "cuBLASLt refuses the configuration (TILE=" + c.tile + " STAGES=" + c.stages +
          " SPLITK=" + std::to_string(c.splitk) + " REDUCTION=" + c.reduction +
          " SWIZZLE=" + std::to_string(c.swizzle) + ") for m=" + std::to_string(g.m) +
          " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
          ": cublasLtMatmulAlgoCheck: " + L.status(cs));
    }
    if (checked.workspaceSize > max_workspace) {
      return Status::invalid_argument(
          "cuBLASLt configuration needs " + std::to_string(checked.workspaceSize) +
          " bytes of workspace, more than the " + std::to_string(max_workspace) + " allowed");
    }
    workspace = checked.workspaceSize;
    waves = checked.wavesCount;
  }
  std::memcpy(p->algo_, &algo, sizeof algo);
  p->workspace_ = workspace;
  int32_t algo_id = 0, splitk = 0;
  uint32_t tile = 0, stages = 0, red = 0, swz = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value) {
    size_t n = 0;
    L.cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, value, sizeof *value, &n);
  };
  get(CUBLASLT_ALGO_CONFIG_ID, &algo_id);
  get(CUBLASLT_ALGO_CONFIG_TILE_ID, &tile);
  get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages);
  get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk);
  get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red);
  get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz);
  get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom);
  get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner);
  get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster);
  // The algorithm's bytes, which cuBLASLt documents as restorable with the same library
  // version: what an export (replay/lt_export.h) replays exactly.
  std::string bytes;
  for (uint64_t word : algo.data) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(word));
    bytes += hex;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "algo %d, tile %s, stages %s, splitk %d, reduction %s, swizzle %u, workspace %zu, "
                "waves %.2f, heuristic rank %d of %d, custom %u, inner %u, cluster %u, bytes %s",
                algo_id, tile_name(tile).c_str(), stages_name(stages).c_str(), splitk,
                reduction_name(red), swz, workspace, static_cast<double>(waves), c.heur, returned,
                custom, static_cast<unsigned>(inner), static_cast<unsigned>(cluster),
                bytes.c_str());
  p->description_ = buf;
  if (p->fp8_) {
    p->description_ += ", types " + g.dtype + " x " + g.dtype + " -> " + g.out_dtype +
                       ", fast_accum " + std::to_string(c.fast_accum);
  }
  return p;
}

Status Lt::run(const LtPlan& p, const void* a, const void* b, const void* c, void* d, void* ws,
               CUstream stream, const float* a_scale, const float* b_scale) const {
  const Impl& L = *impl_;
  if (p.fp8_) {
    // cuBLASLt's A is our B and its B our A. Set at every call: the plan serves every buffer
    // set, and null restores a factor of 1.
    auto desc = static_cast<cublasLtMatmulDesc_t>(p.matmul_);
    const void* sa = b_scale;
    const void* sb = a_scale;
    if (Status s = L.check(L.cublasLtMatmulDescSetAttribute(
                               desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa),
                           "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
        !s)
      return s;
    if (Status s = L.check(L.cublasLtMatmulDescSetAttribute(
                               desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb),
                           "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
        !s)
      return s;
  } else if (a_scale != nullptr || b_scale != nullptr) {
    return Status::invalid_argument("cuBLASLt family: scales apply to fp8 operands only");
  }
  const float alpha = 1.0f;
  const float beta = c != nullptr ? 1.0f : 0.0f;
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, p.algo_, sizeof algo);
  auto la = static_cast<cublasLtMatrixLayout_t>(p.layout_a_);
  auto lb = static_cast<cublasLtMatrixLayout_t>(p.layout_b_);
  auto lc = static_cast<cublasLtMatrixLayout_t>(p.layout_c_);
  return L.check(L.cublasLtMatmul(L.handle, static_cast<cublasLtMatmulDesc_t>(p.matmul_), &alpha, b,
                                  la, a, lb, &beta, c != nullptr ? c : d, lc, d, lc, &algo, ws,
                                  p.workspace_, reinterpret_cast<cudaStream_t>(stream)),
                 "cublasLtMatmul");
}

}  // namespace arc::cuda
