#include "replay/kernel_export.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/arc_home.h"
#include "events/printer.h"
#include "problem/shared_sources.h"
#include "replay/reconstruct.h"
#include "replay/summary.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The KernelArc CUDA ABI header, inlined so the export needs nothing of KernelArc's tree.
Result<std::string> arc_cuda_header() {
  const fs::path path = arc_home() / "cuda/include/arc_cuda.h";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  if (!in) return Status::not_found("cannot read " + path.string() + " (set ARC_HOME)");
  return os.str();
}

const char* cuda_type(const std::string& dtype) {
  if (dtype == "bf16") return "CUDA_R_16BF";
  if (dtype == "f16") return "CUDA_R_16F";
  return "CUDA_R_32F";
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

// A launch expression as C++ over doubles: cdiv/min/max become the launcher's helpers.
std::string cxx_expr(const std::string& e) {
  static const std::regex fn(R"(\b(cdiv|min|max)\s*\()");
  return std::regex_replace(e, fn, "arc_$1(");
}

// Macro names a source #defines (undefined again after its variant).
std::set<std::string> defined_macros(const std::string& src) {
  static const std::regex def(R"(^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*))");
  std::set<std::string> out;
  std::istringstream in(src);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, def)) out.insert(m[1]);
  }
  return out;
}

bool is_include(const std::string& line) {
  static const std::regex inc(R"(^\s*#\s*include\b)");
  return std::regex_search(line, inc);
}

struct LtPlanRow {
  std::string workload;
  int64_t m = 0, n = 0, k = 0;
  int algo = -1;  // -1: not recorded; the heuristic decides
  std::string tile = "0", stages = "0", reduction = "0";
  int splitk = 1, swizzle = 0;
  std::string recorded;
};

// Parses "algo 66, tile 128x256, stages 64x4, splitk 1, reduction none, swizzle 0, ...".
LtPlanRow parse_plan(const std::string& d) {
  LtPlanRow r;
  r.recorded = d;
  std::smatch m;
  static const std::regex re(
      R"(algo (-?\d+), tile ([0-9x#a-z]+), stages ([0-9x#a-z]+), splitk (-?\d+), reduction ([a-z?]+), swizzle (\d+))");
  if (!std::regex_search(d, m, re)) return r;
  r.algo = std::stoi(m[1]);
  auto enum_of = [](const std::string& name, const char* prefix) -> std::string {
    if (name == "auto") return "0";
    if (name[0] == '#') return name.substr(1);
    return std::string(prefix) + name;
  };
  r.tile = enum_of(m[2], "CUBLASLT_MATMUL_TILE_");
  r.stages = enum_of(m[3], "CUBLASLT_MATMUL_STAGES_");
  r.splitk = std::stoi(m[4]);
  const std::string red = m[5];
  r.reduction = red == "inplace"   ? "CUBLASLT_REDUCTION_SCHEME_INPLACE"
                : red == "compute" ? "CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE"
                : red == "output"  ? "CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE"
                                   : "CUBLASLT_REDUCTION_SCHEME_NONE";
  r.swizzle = std::stoi(m[6]);
  return r;
}

std::string escape_c(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

int index_of(const std::vector<problem::TensorSpec>& ts, const std::string& name) {
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string gen_header(const problem::Problem& p, const std::string& name) {
  std::ostringstream h;
  h << "/* KernelArc export of problem " << p.name << ": " << p.description << "\n";
  h << " * Inputs, in order:";
  for (const auto& t : p.inputs) {
    h << " " << t.name << " (" << t.dtype << " [";
    for (size_t i = 0; i < t.shape.size(); ++i) h << (i ? ", " : "") << t.shape[i];
    h << "])";
  }
  h << "\n * Outputs, in order:";
  for (const auto& t : p.outputs) {
    h << " " << t.name << " (" << t.dtype << " [";
    for (size_t i = 0; i < t.shape.size(); ++i) h << (i ? ", " : "") << t.shape[i];
    h << "]" << (t.alias.empty() ? "" : ", in place over input " + t.alias) << ")";
  }
  h << "\n * Axes, in order:";
  for (const auto& a : p.axes) h << " " << a;
  h << "\n * Tensors are dense and row-major. */\n";
  h << "#ifndef " << name << "_KERNELARC_H_\n#define " << name << "_KERNELARC_H_\n";
  h << "#include <cuda_runtime.h>\n#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" "
       "{\n#endif\n\n";
  h << "#define " << name << "_NUM_INPUTS " << p.inputs.size() << "\n";
  h << "#define " << name << "_NUM_OUTPUTS " << p.outputs.size() << "\n";
  h << "#define " << name << "_NUM_AXES " << p.axes.size() << "\n\n";
  h << "/* The variant serving these axis values (0: the base variant). */\n";
  h << "int " << name << "_variant_for(const long long* axes);\n";
  h << "/* Bytes of device workspace " << name << "_launch needs for these axis values. */\n";
  h << "size_t " << name << "_workspace_bytes(const long long* axes);\n";
  h << "/* Enqueues the computation on `stream`; `workspace` holds " << name
    << "_workspace_bytes(axes) bytes\n * (null when 0). Returns the first CUDA error. */\n";
  h << "cudaError_t " << name
    << "_launch(const void* const* inputs, void* const* outputs, const long long* axes,\n"
       "                        void* workspace, cudaStream_t stream);\n";
  h << "\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return h.str();
}

}  // namespace

std::string export_name(const problem::Problem& p) {
  std::string n = p.name;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) n = "k_" + n;
  return n;
}

Result<std::vector<ExportedFile>> export_cuda(const KernelExportInput& in) {
  const problem::Problem& p = *in.problem;
  if (p.backend != "cuda") {
    return Status::invalid_argument("problem " + p.name + " has backend \"" + p.backend +
                                    "\": expected a CUDA problem (--format cuda and "
                                    "sol-execbench export CUDA kernels)");
  }
  const std::string name = export_name(p);
  // Distinct variants: the base first, then each gate's in workload order.
  std::vector<problem::Variant> variants = {in.candidate.base};
  std::map<std::string, size_t> variant_of;  // workload -> index
  for (const auto& w : p.workloads) {
    const problem::Variant& v = in.candidate.variant_for(w.name);
    auto it = std::find(variants.begin(), variants.end(), v);
    if (it == variants.end()) {
      variants.push_back(v);
      it = variants.end() - 1;
    }
    variant_of[w.name] = static_cast<size_t>(it - variants.begin());
  }
  std::vector<const problem::Family*> families;
  bool uses_lt = false;
  for (const auto& v : variants) {
    const problem::Family* f = p.family(v.family);
    if (f == nullptr) {
      return Status::invalid_argument("variant " + v.key() +
                                      ": no family to take its launches from in problem " + p.name);
    }
    families.push_back(f);
    uses_lt |= !f->library.empty() && v.source.empty();
  }

  std::ostringstream cu;
  cu << "// KernelArc export of " << p.name << ", candidate " << in.candidate_hash << "\n";
  if (!in.note.empty()) cu << "// " << in.note << "\n";
  cu << "// Variants:";
  for (size_t i = 0; i < variants.size(); ++i) cu << " [" << i << "] " << variants[i].key();
  cu << "\n// Build: nvcc -std=c++17 -arch=sm_90a -c " << name << ".cu"
     << (uses_lt ? "   (link with -lcublasLt)" : "") << "\n";
  cu << "#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n#include <string.h>\n";
  if (uses_lt) cu << "#include <cublasLt.h>\n";
  // Every variant's own includes, hoisted out of the namespaces.
  std::set<std::string> includes;
  for (size_t i = 0; i < variants.size(); ++i) {
    if (!families[i]->library.empty() && variants[i].source.empty()) continue;
    const std::string src = problem::inline_shared_sources(
        variants[i].source.empty() ? in.family_sources.at(families[i]->name) : variants[i].source,
        p.headers);
    std::istringstream ss(src);
    std::string line;
    while (std::getline(ss, line)) {
      if (is_include(line) && line.find("arc_cuda.h") == std::string::npos) includes.insert(line);
    }
  }
  for (const auto& l : includes) cu << l << "\n";
  auto abi = arc_cuda_header();
  if (!abi) return abi.status();
  cu << "#include \"" << name
     << ".h\"\n\n// ---- the KernelArc kernel ABI (cuda/include/arc_cuda.h) ----\n"
     << abi.value() << "\n";

  for (size_t i = 0; i < variants.size(); ++i) {
    const problem::Variant& v = variants[i];
    const problem::Family& f = *families[i];
    if (!f.library.empty() && v.source.empty()) continue;
    auto src_it = in.family_sources.find(f.name);
    if (v.source.empty() && src_it == in.family_sources.end()) {
      return Status::not_found("family " + f.name + ": its source text is missing");
    }
    const std::string src =
        problem::inline_shared_sources(v.source.empty() ? src_it->second : v.source, p.headers);
    cu << "// ---- variant " << i << ": " << v.key() << " ----\n";
    std::set<std::string> undef = defined_macros(src);
    // Every knob, the family's defaults overridden by the variant's, and the problem's params:
    // what the evaluator's compile defined.
    std::map<std::string, std::string> knobs = f.knob_values(v);
    for (const auto& [k, val] : p.param_defines()) knobs[k] = val;
    for (const auto& [k, val] : knobs) {
      cu << "#define " << k << " " << val << "\n";
      undef.insert(k);
    }
    for (const auto& l : f.launches) {
      cu << "#define " << l.kernel << " arc_v" << i << "_" << l.kernel << "\n";
      undef.insert(l.kernel);
    }
    cu << "namespace arc_v" << i << " {\n";
    std::istringstream ss(src);
    std::string line;
    while (std::getline(ss, line)) {
      if (is_include(line)) {
        cu << "// (hoisted) " << line << "\n";
      } else {
        cu << line << "\n";
      }
    }
    cu << "}  // namespace arc_v" << i << "\n";
    for (const auto& m : undef) cu << "#undef " << m << "\n";
    cu << "\n";
  }

  // cuBLASLt: the plan table and its runner.
  if (uses_lt) {
    cu << "// ---- cuBLASLt plan table: the algorithm recorded per workload ----\n";
    cu << "struct arc_lt_plan {\n  long long m, n, k;\n  int algo;  /* -1: heuristic */\n"
          "  int tile, stages, splitk, reduction, swizzle;\n  int heur;\n  const char* "
          "recorded;\n};\n";
    for (size_t i = 0; i < variants.size(); ++i) {
      const problem::Family& f = *families[i];
      if (f.library.empty() || !variants[i].source.empty()) continue;
      std::map<std::string, std::string> knobs = f.knob_values(variants[i]);
      const int heur = is_number(knobs["HEUR"]) ? std::stoi(knobs["HEUR"]) : 0;
      cu << "static const arc_lt_plan arc_v" << i << "_plans[] = {\n";
      for (const auto& w : p.workloads) {
        if (variant_of[w.name] != i) continue;
        auto pit = in.plans.find(w.name);
        LtPlanRow r = pit == in.plans.end() ? LtPlanRow{} : parse_plan(pit->second);
        cu << "  {" << w.axes.at(f.gemm.m) << ", " << w.axes.at(f.gemm.n) << ", "
           << w.axes.at(f.gemm.k) << ", " << r.algo << ", " << r.tile << ", " << r.stages << ", "
           << r.splitk << ", " << r.reduction << ", " << r.swizzle << ", " << heur << ", \""
           << escape_c(w.name + ": " + (r.recorded.empty() ? "not recorded" : r.recorded))
           << "\"},\n";
      }
      cu << "  {0, 0, 0, -1, 0, 0, 1, 0, 0, " << heur << ", \"default\"}};\n\n";
    }
    cu << R"(static const size_t arc_lt_workspace = size_t(64) << 20;

// D = A B^T (+ C): A row-major [m, k], B row-major [n, k], D row-major [m, n]; in cuBLASLt's
// column-major terms D^T (n x m) = B^T (op T on k x n) * A (k x m).
static cudaError_t arc_lt_gemm(const arc_lt_plan* table, long long m, long long n, long long k,
                               cudaDataType_t type, const void* a, const void* b, const void* c,
                               void* d, void* ws, cudaStream_t stream) {
  static cublasLtHandle_t handle = nullptr;
  if (handle == nullptr && cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    return cudaErrorNotSupported;
  }
  const arc_lt_plan* plan = table;
  while (plan->m != 0 && !(plan->m == m && plan->n == n && plan->k == k)) ++plan;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasStatus_t st = cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
  if (st == CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN);
    st = cublasLtMatrixLayoutCreate(&la, type, k, n, k);
  }
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lb, type, k, m, k);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&lc, type, n, m, n);
  cublasLtMatmulAlgo_t algo;
  bool have_algo = false;
  if (st == CUBLAS_STATUS_SUCCESS && plan->algo >= 0 &&
      cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, type, type, type, type,
                             plan->algo, &algo) == CUBLAS_STATUS_SUCCESS) {
    const uint32_t tile = static_cast<uint32_t>(plan->tile), stages = static_cast<uint32_t>(plan->stages);
    const int32_t splitk = plan->splitk;
    const uint32_t red = static_cast<uint32_t>(plan->reduction), swz = static_cast<uint32_t>(plan->swizzle);
    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages);
    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk);
    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red);
    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz);
    cublasLtMatmulHeuristicResult_t check;
    have_algo = cublasLtMatmulAlgoCheck(handle, desc, la, lb, lc, lc, &algo, &check) ==
                    CUBLAS_STATUS_SUCCESS &&
                check.workspaceSize <= arc_lt_workspace;
  }
  if (st == CUBLAS_STATUS_SUCCESS && !have_algo) {
    // Not recorded, or refused here: the heuristic's choice of the recorded rank.
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulPreferenceCreate(&pref);
    const size_t max_ws = arc_lt_workspace;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                         sizeof max_ws);
    cublasLtMatmulHeuristicResult_t results[8];
    int returned = 0;
    cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, 8, results, &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (returned > 0) {
      algo = results[plan->heur < returned ? plan->heur : 0].algo;
      have_algo = true;
    }
  }
  const float alpha = 1.0f, beta = c != nullptr ? 1.0f : 0.0f;
  if (st == CUBLAS_STATUS_SUCCESS && have_algo) {
    st = cublasLtMatmul(handle, desc, &alpha, b, la, a, lb, &beta, c != nullptr ? c : d, lc, d,
                        lc, &algo, ws, arc_lt_workspace, stream);
  } else if (st == CUBLAS_STATUS_SUCCESS) {
    st = CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (lc) cublasLtMatrixLayoutDestroy(lc);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (desc) cublasLtMatmulDescDestroy(desc);
  return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorNotSupported;
}

)";
  }

  // The host launcher.
  cu << "namespace {\ninline double arc_cdiv(double a, double b) { return ceil(a / b); }\n"
        "inline double arc_min(double a, double b) { return a < b ? a : b; }\n"
        "inline double arc_max(double a, double b) { return a > b ? a : b; }\n"
        "inline unsigned arc_dim(double v) { return static_cast<unsigned>(llround(v)); }\n"
        "}  // namespace\n\n";
  cu << "extern \"C\" int " << name << "_variant_for(const long long* axes) {\n";
  for (const auto& w : p.workloads) {
    const size_t vi = variant_of[w.name];
    if (vi == 0) continue;
    cu << "  if (";
    for (size_t a = 0; a < p.axes.size(); ++a) {
      cu << (a ? " && " : "") << "axes[" << a << "] == " << w.axes.at(p.axes[a]) << "LL";
    }
    cu << ") return " << vi << ";  // " << w.name << "\n";
  }
  cu << "  return 0;\n}\n\n";

  auto axis_locals = [&p]() {
    std::string s;
    for (size_t a = 0; a < p.axes.size(); ++a) {
      s += "  [[maybe_unused]] const double " + p.axes[a] + " = static_cast<double>(axes[" +
           std::to_string(a) + "]);\n";
    }
    return s;
  };
  // Launch and workspace expressions name knobs and integer params.
  auto knob_locals = [&p](const problem::Family& f, const problem::Variant& v) {
    std::map<std::string, std::string> knobs = f.knob_values(v);
    for (const auto& prm : p.params) {
      if (prm.integer) knobs[prm.name] = prm.text;
    }
    std::string s;
    for (const auto& [k, val] : knobs) {
      if (is_number(val)) s += "      [[maybe_unused]] const double " + k + " = " + val + ";\n";
    }
    return s;
  };

  cu << "extern \"C\" size_t " << name << "_workspace_bytes(const long long* axes) {\n"
     << axis_locals() << "  switch (" << name << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const problem::Family& f = *families[i];
    cu << "    case " << i << ": {\n" << knob_locals(f, variants[i]);
    if (!f.library.empty() && variants[i].source.empty()) {
      cu << "      return arc_lt_workspace;\n    }\n";
    } else {
      cu << "      return static_cast<size_t>(llround(" << cxx_expr(f.workspace) << "));\n    }\n";
    }
  }
  cu << "  }\n  return 0;\n}\n\n";

  cu << "extern \"C\" cudaError_t " << name
     << "_launch(const void* const* inputs, void* const* outputs, const long long* axes,\n"
        "                        void* workspace, cudaStream_t stream) {\n"
     << axis_locals() << "  arc_args a;\n  memset(&a, 0, sizeof a);\n"
     << "  for (int i = 0; i < " << p.inputs.size()
     << "; ++i) a.in[i] = const_cast<void*>(inputs[i]);\n"
     << "  for (int i = 0; i < " << p.outputs.size() << "; ++i) a.out[i] = outputs[i];\n"
     << "  for (int i = 0; i < " << p.axes.size() << "; ++i) a.axes[i] = axes[i];\n"
     << "  a.ws = workspace;\n  a.n_in = " << p.inputs.size()
     << ";\n  a.n_out = " << p.outputs.size() << ";\n  a.n_axes = " << p.axes.size() << ";\n"
     << "  cudaError_t err = cudaSuccess;\n  switch (" << name << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const problem::Family& f = *families[i];
    cu << "    case " << i << ": {  // " << variants[i].key() << "\n"
       << knob_locals(f, variants[i]);
    if (!f.library.empty() && variants[i].source.empty()) {
      const int ia = index_of(p.inputs, f.gemm.a), ib = index_of(p.inputs, f.gemm.b);
      const int ic = f.gemm.c.empty() ? -1 : index_of(p.inputs, f.gemm.c);
      const int id = index_of(p.outputs, f.gemm.d);
      if (ia < 0 || ib < 0 || id < 0) {
        return Status::invalid_argument("family " + f.name + ": gemm tensors not found");
      }
      cu << "      return arc_lt_gemm(arc_v" << i << "_plans, llround(" << f.gemm.m << "), llround("
         << f.gemm.n << "), llround(" << f.gemm.k << "), "
         << cuda_type(p.inputs[static_cast<size_t>(ia)].dtype) << ", inputs[" << ia << "], inputs["
         << ib << "], " << (ic >= 0 ? "inputs[" + std::to_string(ic) + "]" : "nullptr")
         << ", outputs[" << id << "], workspace, stream);\n    }\n";
      continue;
    }
    for (const auto& l : f.launches) {
      auto dims = [](const std::vector<std::string>& d) {
        std::string s = "dim3(";
        for (size_t j = 0; j < 3; ++j) {
          s += (j ? ", " : "") +
               (j < d.size() ? "arc_dim(" + cxx_expr(d[j]) + ")" : std::string("1"));
        }
        return s + ")";
      };
      const std::string kernel =
          "arc_v" + std::to_string(i) + "::arc_v" + std::to_string(i) + "_" + l.kernel;
      cu << "      {\n        const size_t shared = static_cast<size_t>(llround("
         << cxx_expr(l.shared)
         << "));\n        if (shared > 48 * 1024) {\n          err = cudaFuncSetAttribute("
         << kernel
         << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));\n"
            "          if (err != cudaSuccess) return err;\n        }\n        "
         << kernel << "<<<" << dims(l.grid) << ", " << dims(l.block) << ", shared, stream>>>(a);\n"
         << "        err = cudaGetLastError();\n        if (err != cudaSuccess) return err;\n      "
            "}\n";
    }
    cu << "      return cudaSuccess;\n    }\n";
  }
  cu << "  }\n  return cudaErrorInvalidValue;\n}\n";

  return std::vector<ExportedFile>{{name + ".h", gen_header(p, name)}, {name + ".cu", cu.str()}};
}

Result<std::vector<ExportedFile>> export_sol_execbench(const KernelExportInput& in) {
  auto files = export_cuda(in);
  if (!files) return files.status();
  const problem::Problem& p = *in.problem;
  const std::string name = export_name(p);
  bool uses_lt = files.value()[1].content.find("#include <cublasLt.h>") != std::string::npos;

  std::ostringstream k;
  k << "// SOL-ExecBench entry point for the KernelArc export of " << p.name
    << ": destination-passing style,\n// inputs then outputs in the definition's order.\n"
    << "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n#include \"" << name
    << "_impl.cuh\"\n\nvoid run(";
  std::vector<std::string> params;
  for (const auto& t : p.inputs) params.push_back("torch::Tensor " + t.name);
  for (const auto& t : p.outputs) params.push_back("torch::Tensor " + t.name);
  for (size_t i = 0; i < params.size(); ++i) k << (i ? ", " : "") << params[i];
  k << ") {\n  const long long axes[] = {";
  for (size_t a = 0; a < p.axes.size(); ++a) {
    std::string from;
    for (const auto* list : {&p.inputs, &p.outputs}) {
      for (const auto& t : *list) {
        auto it = std::find(t.shape.begin(), t.shape.end(), p.axes[a]);
        if (from.empty() && it != t.shape.end()) {
          from = t.name + ".size(" + std::to_string(it - t.shape.begin()) + ")";
        }
      }
    }
    if (from.empty()) {
      return Status::invalid_argument("axis '" + p.axes[a] + "' of problem " + p.name +
                                      " is in no tensor's shape: SOL-ExecBench cannot pass it");
    }
    k << (a ? ", " : "") << from;
  }
  k << "};\n  const void* in[] = {";
  for (size_t i = 0; i < p.inputs.size(); ++i)
    k << (i ? ", " : "") << p.inputs[i].name << ".data_ptr()";
  k << "};\n  void* out[] = {";
  for (size_t i = 0; i < p.outputs.size(); ++i)
    k << (i ? ", " : "") << p.outputs[i].name << ".data_ptr()";
  k << "};\n  cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n";
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const auto& t = p.outputs[i];
    if (t.alias.empty()) continue;
    const int ai = index_of(p.inputs, t.alias);
    // KernelArc updates the aliased input in place; here the output is separate.
    k << "  cudaMemcpyAsync(out[" << i << "], in[" << ai << "], " << t.alias
      << ".nbytes(), cudaMemcpyDeviceToDevice, stream);\n  in[" << ai << "] = out[" << i << "];\n";
  }
  k << "  const size_t ws_bytes = " << name << "_workspace_bytes(axes);\n"
    << "  torch::Tensor ws;\n  if (ws_bytes > 0) {\n    ws = "
       "torch::empty({static_cast<int64_t>(ws_bytes)}, "
    << p.inputs[0].name << ".options().dtype(torch::kUInt8));\n  }\n"
    << "  const cudaError_t err = " << name
    << "_launch(in, out, axes, ws_bytes > 0 ? ws.data_ptr() : nullptr, stream);\n"
    << "  TORCH_CHECK(err == cudaSuccess, \"KernelArc launch failed: \", "
       "cudaGetErrorString(err));\n}\n\n"
    << "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"run\", &run); }\n";

  json deps = json::array();
  json ld = json::array({"-lcuda"});
  if (uses_lt) {
    deps.push_back("cublas");
    ld.push_back("-lcublasLt");
  }
  json solution = {
      {"name", "kernelarc_" + name + "_" + in.candidate_hash.substr(0, 12)},
      {"definition", p.name},
      {"author", "KernelArc"},
      {"description", "KernelArc search result: " + in.note},
      {"spec",
       {{"languages", json::array({"cuda_cpp"})},
        {"target_hardware", json::array({"LOCAL"})},
        {"entry_point", "kernel.cu::run"},
        {"destination_passing_style", true},
        {"binding", "torch"},
        {"dependencies", deps},
        {"compile_options",
         {{"cflags", json::array({"-std=c++17"})},
          {"cuda_cflags", json::array({"-O3", "-std=c++17"})},
          {"ld_flags", ld}}}}},
      {"sources",
       json::array({{{"path", "kernel.cu"}, {"content", k.str()}},
                    {{"path", name + ".h"}, {"content", files.value()[0].content}},
                    {{"path", name + "_impl.cuh"}, {"content", files.value()[1].content}}})}};
  return std::vector<ExportedFile>{{"solution.json", solution.dump(2) + "\n"}};
}

Result<std::vector<fs::path>> export_run(const fs::path& run_dir, const std::string& format,
                                         const fs::path& out_dir,
                                         const std::function<void(const std::string&)>& notice) {
  if (format != "cuda" && format != "sol-execbench") {
    return Status::invalid_argument("--format: expected \"cuda\" or \"sol-execbench\", got \"" +
                                    format + "\"");
  }
  std::vector<events::Event> log;
  auto inputs = run_problem(run_dir, log);
  if (!inputs) return inputs.status();
  tell_input_notices(inputs.value(), notice);
  const problem::Problem& problem = inputs->problem;
  CampaignSummary s = summarize(log, &problem);
  if (s.best_canonical.empty()) {
    return Status::invalid_argument(run_dir.string() + ": the run has no kept candidate to export");
  }
  auto cand = problem::Candidate::from_canonical(s.best_canonical);
  if (!cand) return cand.status();
  auto sources = problem::read_family_sources(problem);
  if (!sources) return sources.status();
  KernelExportInput in;
  in.problem = &problem;
  in.candidate = std::move(cand.value());
  in.candidate_hash = s.best_hash;
  in.family_sources = std::move(sources.value());
  char note[256];
  std::snprintf(note, sizeof note, "campaign %s, score %.3fx over the baseline, on %s",
                s.campaign_id.c_str(), s.best_score, s.device.c_str());
  in.note = note;
  // The plans the best's evaluation recorded, per workload.
  for (const auto& e : log) {
    if (e.payload.type != fb::Payload::CandidateEvaluated) continue;
    const auto* ev = e.payload.AsCandidateEvaluated();
    if (ev->candidate_hash != s.best_hash) continue;
    for (const auto& w : ev->workloads) {
      for (const auto& d : w->details) {
        if (d->key == "plan") in.plans[w->workload] = d->value;
      }
    }
  }
  auto files = format == "cuda" ? export_cuda(in) : export_sol_execbench(in);
  if (!files) return files.status();
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::io_error("cannot create " + out_dir.string() + ": " + ec.message());
  std::vector<fs::path> written;
  for (const auto& f : files.value()) {
    const fs::path path = out_dir / f.path;
    std::ofstream out(path, std::ios::binary);
    out << f.content;
    if (!out) return Status::io_error("cannot write " + path.string());
    written.push_back(path);
  }
  return written;
}

}  // namespace arc::replay
