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
#include "replay/export_text.h"
#include "replay/host_export.h"
#include "replay/lt_export.h"
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

// What every CUDA export's launcher uses: the thread's last error and the launcher's own
// workspace (docs/export.md).
constexpr const char* kCommon = R"ARC(// ---- the launcher's errors and workspace ----
namespace {

// The last failure of a call on this thread, naming the call (NAME_last_error).
thread_local std::string arc_last_error_text;

cudaError_t arc_error(cudaError_t e, const char* what) {
  if (e != cudaSuccess) arc_last_error_text = std::string(what) + " failed: " + cudaGetErrorString(e);
  return e;
}

// The launcher's own workspaces, one per (device, stream): used when a caller passes none.
struct arc_owned_workspaces {
  std::shared_mutex mu;
  std::map<std::pair<int, cudaStream_t>, std::pair<void*, size_t>> buffers;  // pointer, bytes
};

// Never destroyed: a CUDA call during static destruction may find the driver gone.
arc_owned_workspaces& arc_owned() {
  static arc_owned_workspaces* w = new arc_owned_workspaces();
  return *w;
}

// Calls enqueue(workspace) with the launcher's workspace of at least `bytes` for (device,
// stream), holding it while the work is enqueued. The workspace is allocated with
// cudaMallocAsync on `stream` the first time; when a shape needs more, the old one is freed
// with cudaFreeAsync on the same stream (after all work enqueued on it) and a larger one
// allocated. Work on one stream runs in order, so calls on a stream share its workspace; a
// stream's workspace lives until the process exits (destroy a stream only after its work is
// done if another may get its handle).
template <class Enqueue>
cudaError_t arc_with_own_workspace(int device, cudaStream_t stream, size_t bytes,
                                   Enqueue enqueue) {
  arc_owned_workspaces& o = arc_owned();
  const std::pair<int, cudaStream_t> key(device, stream);
  for (;;) {
    {
      std::shared_lock<std::shared_mutex> lock(o.mu);
      auto it = o.buffers.find(key);
      if (it != o.buffers.end() && it->second.second >= bytes) return enqueue(it->second.first);
    }
    std::unique_lock<std::shared_mutex> lock(o.mu);
    std::pair<void*, size_t>& buf = o.buffers[key];
    if (buf.second >= bytes) continue;
    if (buf.first != nullptr) {
      const cudaError_t e = cudaFreeAsync(buf.first, stream);
      if (e != cudaSuccess) return arc_error(e, "cudaFreeAsync(the launcher's workspace)");
      buf = {nullptr, 0};
    }
    void* p = nullptr;
    const cudaError_t e = cudaMallocAsync(&p, bytes, stream);
    if (e != cudaSuccess) return arc_error(e, "cudaMallocAsync(the launcher's workspace)");
    buf = {p, bytes};
  }
}

}  // namespace

)ARC";

// What a launcher whose launch expressions name the device's sm_count or whose families
// declare tensor maps uses (docs/export.md, "Tensor maps").
constexpr const char* kDeviceCommon = R"ARC(// ---- the device's SM count and tensor maps ----
namespace {

// The current device's multiprocessor count (sm_count in launch expressions), cached per device.
[[maybe_unused]] double arc_sm_count() {
  static std::atomic<int> counts[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return 1;
  int v = counts[device].load(std::memory_order_relaxed);
  if (v == 0) {
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || v < 1) v = 1;
    counts[device].store(v, std::memory_order_relaxed);
  }
  return v;
}

[[maybe_unused]] CUtensorMapSwizzle arc_swizzle(double bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
       : bytes == 32  ? CU_TENSOR_MAP_SWIZZLE_32B  : CU_TENSOR_MAP_SWIZZLE_NONE;
}
[[maybe_unused]] CUtensorMapL2promotion arc_l2_promotion(double bytes) {
  return bytes == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
       : bytes == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B  : CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

// Encodes one tensor map as the KernelArc engine does (dense row-major; dims and box innermost
// first; the row strides follow from the dims and the element size), through the runtime's
// driver entry point, so nothing links libcuda.
[[maybe_unused]] cudaError_t arc_encode_tensor_map(arc_tensor_map* out, CUtensorMapDataType type,
                                                   unsigned elem_bytes, unsigned rank, void* base,
                                                   const cuuint64_t* dims, const cuuint32_t* box,
                                                   const cuuint32_t* element_strides,
                                                   CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2, bool nan_fill) {
  typedef CUresult (*Encode)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                             const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                             CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<Encode>(nullptr);
    return reinterpret_cast<Encode>(fn);
  }();
  if (encode == nullptr) return arc_error(cudaErrorNotSupported, "finding cuTensorMapEncodeTiled");
  cuuint64_t strides[4];
  cuuint64_t stride = elem_bytes;
  for (unsigned j = 0; j + 1 < rank && j < 4; ++j) {
    stride *= dims[j];
    strides[j] = stride;
  }
  const CUresult r = encode(reinterpret_cast<CUtensorMap*>(out), type, rank, base, dims, strides, box,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
                            nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                     : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return arc_error(cudaErrorInvalidValue, "cuTensorMapEncodeTiled");
  return cudaSuccess;
}

}  // namespace

)ARC";

// The driver's tensor-map element type of a dtype (1-byte types move as bytes).
const char* tensor_map_type(const std::string& dtype) {
  if (dtype == "f32") return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  if (dtype == "f64") return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
  if (dtype == "bf16") return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  if (dtype == "f16") return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  if (dtype == "i32") return "CU_TENSOR_MAP_DATA_TYPE_INT32";
  return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
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
  h << "/* Bytes of device workspace " << name
    << "_launch uses for these axis values on the current device. */\n";
  h << "size_t " << name << "_workspace_bytes(const long long* axes);\n";
  h << "/* Enqueues the computation on `stream` and returns the first CUDA error (then " << name
    << "_last_error\n * says which call failed). `workspace` holds " << name
    << "_workspace_bytes(axes) bytes, or is null: the\n * launcher then uses its own, allocated "
       "once per device and stream in stream order\n * (cudaMallocAsync) and kept for the life of "
       "the process. Thread-safe; a cuBLASLt variant\n * sets up its descriptors and algorithm on "
       "the first call for a shape and device. */\n";
  h << "cudaError_t " << name
    << "_launch(const void* const* inputs, void* const* outputs, const long long* axes,\n"
       "                        void* workspace, cudaStream_t stream);\n";
  h << "/* What runs for these axis values on the current device: the variant, and for a "
       "cuBLASLt\n * variant its algorithm (\"recorded algorithm ...\", or \"heuristic rank R of "
       "N, because ...\"). */\n";
  h << "const char* " << name << "_plan(const long long* axes);\n";
  h << "/* The last failure on this thread, naming the call that failed (\"\" when none). */\n";
  h << "const char* " << name << "_last_error(void);\n";
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
                                    "sol-execbench export CUDA kernels; --format cpp exports "
                                    "host problems)");
  }
  const std::string name = export_name(p);
  const ExportVariants ev = distinct_variants(p, in.candidate);
  const std::vector<problem::Variant>& variants = ev.variants;
  std::vector<const problem::Family*> families;
  std::vector<bool> library;  // variant i runs through cuBLASLt
  bool uses_lt = false;
  for (const auto& v : variants) {
    const problem::Family* f = p.family(v.family);
    if (f == nullptr) {
      return Status::invalid_argument("variant " + v.key() +
                                      ": no family to take its launches from in problem " + p.name);
    }
    families.push_back(f);
    library.push_back(!f->library.empty() && v.source.empty());
    uses_lt |= library.back();
  }
  // Each kernel variant's source with the problem's shared sources written in.
  std::vector<std::string> sources(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    if (library[i]) continue;
    auto src_it = in.family_sources.find(families[i]->name);
    if (variants[i].source.empty() && src_it == in.family_sources.end()) {
      return Status::not_found("family " + families[i]->name + ": its source text is missing");
    }
    sources[i] = problem::inline_shared_sources(
        variants[i].source.empty() ? src_it->second : variants[i].source, p.headers);
  }

  std::ostringstream cu;
  cu << "// KernelArc export of " << p.name << ", candidate " << in.candidate_hash << "\n";
  if (!in.note.empty()) cu << "// " << in.note << "\n";
  cu << "// Variants:";
  for (size_t i = 0; i < variants.size(); ++i) cu << " [" << i << "] " << variants[i].key();
  cu << "\n// Build: nvcc -std=c++17 -arch=sm_90a -c " << name << ".cu"
     << (uses_lt ? "   (link with -lcublasLt)" : "") << "\n";
  // Every variant's own includes, hoisted out of the namespaces.
  std::set<std::string> includes = {
      "#include <cuda_runtime.h>", "#include <math.h>", "#include <stdint.h>",
      "#include <string.h>",       "#include <map>",    "#include <mutex>",
      "#include <shared_mutex>",   "#include <string>", "#include <utility>"};
  if (uses_lt) {
    for (const auto& l : lt_runtime_includes()) includes.insert(l);
  }
  includes.insert("#include <atomic>");
  includes.insert("#include <cuda.h>");
  for (const auto& src : sources) {
    for (const auto& l : hoisted_includes(src, {"arc_cuda.h"})) includes.insert(l);
  }
  for (const auto& l : includes) cu << l << "\n";
  auto abi = arc_cuda_header();
  if (!abi) return abi.status();
  cu << "#include \"" << name
     << ".h\"\n\n// ---- the KernelArc kernel ABI (cuda/include/arc_cuda.h) ----\n"
     << abi.value() << "\n"
     << kCommon << kDeviceCommon;

  for (size_t i = 0; i < variants.size(); ++i) {
    if (library[i]) continue;
    const problem::Variant& v = variants[i];
    const problem::Family& f = *families[i];
    // Every knob, the family's defaults overridden by the variant's, and the problem's params:
    // what the evaluator's compile defined.
    std::map<std::string, std::string> knobs = f.knob_values(v);
    for (const auto& [k, val] : p.param_defines()) knobs[k] = val;
    std::map<std::string, std::string> renames;
    for (const auto& l : f.launches)
      renames[l.kernel] = "arc_v" + std::to_string(i) + "_" + l.kernel;
    cu << variant_block("arc_v" + std::to_string(i),
                        "variant " + std::to_string(i) + ": " + v.key(), sources[i], knobs,
                        renames);
  }

  // cuBLASLt: the runtime, and per library variant its plan table and product.
  std::vector<LtVariant> lt(variants.size());
  if (uses_lt) {
    cu << lt_runtime(recorded_sm(in.device));
    cu << "// ---- cuBLASLt plan tables: the algorithm recorded per workload ----\n";
    for (size_t i = 0; i < variants.size(); ++i) {
      if (!library[i]) continue;
      std::vector<problem::Workload> served;
      for (const auto& w : p.workloads) {
        if (ev.variant_of.at(w.name) == i) served.push_back(w);
      }
      auto v = lt_variant(p, *families[i], variants[i], served, in.lt_records,
                          "arc_v" + std::to_string(i) + "_lt");
      if (!v) return v.status();
      cu << v->definitions;
      lt[i] = std::move(v.value());
    }
  }

  // The host launcher.
  cu << "namespace {\n[[maybe_unused]] inline double arc_cdiv(double a, double b) { return "
        "ceil(a / b); }\n"
        "[[maybe_unused]] inline double arc_min(double a, double b) { return a < b ? a : b; }\n"
        "[[maybe_unused]] inline double arc_max(double a, double b) { return a > b ? a : b; }\n"
        "[[maybe_unused]] inline unsigned arc_dim(double v) { return "
        "static_cast<unsigned>(llround(v)); }\n"
        "}  // namespace\n\n";
  cu << variant_for_function(p, ev, name);

  auto axis_locals = [&p]() {
    std::string s = "  [[maybe_unused]] const double sm_count = arc_sm_count();\n";
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
    if (library[i]) {
      cu << "      return arc_lt_workspace_bytes(" << lt[i].shape << ", "
         << (lt[i].accumulate ? "true" : "false") << ");\n    }\n";
    } else {
      cu << "      return static_cast<size_t>(llround(" << cxx_expr(f.workspace) << "));\n    }\n";
    }
  }
  cu << "  }\n  return 0;\n}\n\n";

  cu << "extern \"C\" const char* " << name << "_plan(const long long* axes) {\n"
     << axis_locals() << "  switch (" << name << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    if (library[i]) {
      cu << "    case " << i << ":\n      return arc_lt_plan_in_use(" << lt[i].shape << ", "
         << (lt[i].accumulate ? "true" : "false") << ");\n";
    } else {
      cu << "    case " << i << ":\n      return \""
         << escape_c("variant " + std::to_string(i) + ": " + variants[i].key()) << "\";\n";
    }
  }
  cu << "  }\n  return \"no variant\";\n}\n\n";
  cu << "extern \"C\" const char* " << name
     << "_last_error(void) { return arc_last_error_text.c_str(); }\n\n";

  cu << "extern \"C\" cudaError_t " << name
     << "_launch(const void* const* inputs, void* const* outputs, const long long* axes,\n"
        "                        void* workspace, cudaStream_t stream) {\n"
     << axis_locals() << "  switch (" << name << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const problem::Family& f = *families[i];
    cu << "    case " << i << ": {  // " << variants[i].key() << "\n"
       << knob_locals(f, variants[i]);
    if (library[i]) {
      cu << "      return arc_lt_gemm(" << lt[i].shape << ", " << lt[i].tensors
         << ", workspace, stream);\n    }\n";
      continue;
    }
    cu << "      arc_args a;\n      memset(&a, 0, sizeof a);\n"
       << "      for (int i = 0; i < " << p.inputs.size()
       << "; ++i) a.in[i] = const_cast<void*>(inputs[i]);\n"
       << "      for (int i = 0; i < " << p.outputs.size() << "; ++i) a.out[i] = outputs[i];\n"
       << "      for (int i = 0; i < " << p.axes.size() << "; ++i) a.axes[i] = axes[i];\n"
       << "      a.n_in = " << p.inputs.size() << ";\n      a.n_out = " << p.outputs.size()
       << ";\n      a.n_axes = " << p.axes.size() << ";\n"
       << "      auto run = [&](void* ws) -> cudaError_t {\n        a.ws = ws;\n"
       << "        cudaError_t err = cudaSuccess;\n";
    if (!f.tensor_maps.empty()) {
      cu << "        arc_tensor_maps maps;\n        memset(&maps, 0, sizeof maps);\n";
      for (size_t m = 0; m < f.tensor_maps.size(); ++m) {
        const problem::TensorMapSpec& spec = f.tensor_maps[m];
        int index = problem::tensor_index(p.inputs, spec.tensor);
        bool output = false;
        if (index < 0) {
          index = problem::tensor_index(p.outputs, spec.tensor);
          output = true;
        }
        if (index < 0)
          return Status::invalid_argument("tensor map of unknown tensor " + spec.tensor);
        const problem::TensorSpec& t =
            output ? p.outputs[static_cast<size_t>(index)] : p.inputs[static_cast<size_t>(index)];
        auto innermost_first = [](const std::vector<std::string>& v, const char* fallback) {
          std::string out;
          for (size_t d = v.size(); d-- > 0;)
            out += std::string(out.empty() ? "" : ", ") + "static_cast<cuuint64_t>(llround(" +
                   cxx_expr(v[d]) + "))";
          return out.empty() ? std::string(fallback) : out;
        };
        std::string es;
        for (size_t d = t.shape.size(); d-- > 0;) {
          es += std::string(es.empty() ? "" : ", ") +
                (spec.element_strides.empty() ? std::string("1")
                                              : "static_cast<cuuint32_t>(llround(" +
                                                    cxx_expr(spec.element_strides[d]) + "))");
        }
        std::string box;
        for (size_t d = spec.box.size(); d-- > 0;)
          box += std::string(box.empty() ? "" : ", ") + "static_cast<cuuint32_t>(llround(" +
                 cxx_expr(spec.box[d]) + "))";
        cu << "        {  // tensor map " << m << ": " << spec.tensor << "\n"
           << "          const cuuint64_t dims[] = {" << innermost_first(t.shape, "1") << "};\n"
           << "          const cuuint32_t box[] = {" << box << "};\n"
           << "          const cuuint32_t element_strides[] = {" << es << "};\n"
           << "          err = arc_encode_tensor_map(&maps.map[" << m << "], "
           << tensor_map_type(t.dtype) << ", " << problem::dtype_bytes(t.dtype) << ", "
           << t.shape.size() << ", a." << (output ? "out" : "in") << "[" << index
           << "], dims, box, element_strides, arc_swizzle(" << cxx_expr(spec.swizzle)
           << "), arc_l2_promotion(" << cxx_expr(spec.l2_promotion) << "), "
           << (spec.oob_fill == "nan" ? "true" : "false") << ");\n"
           << "          if (err != cudaSuccess) return err;\n        }\n";
      }
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
      cu << "        {\n          const size_t shared = static_cast<size_t>(llround("
         << cxx_expr(l.shared) << "));\n          if (shared > 48 * 1024) {\n"
         << "            err = cudaFuncSetAttribute(" << kernel
         << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));\n"
         << "            if (err != cudaSuccess) return arc_error(err, \"cudaFuncSetAttribute("
         << l.kernel << ", MaxDynamicSharedMemorySize)\");\n          }\n          " << kernel
         << "<<<" << dims(l.grid) << ", " << dims(l.block) << ", shared, stream>>>(a"
         << (f.tensor_maps.empty() ? "" : ", maps") << ");\n"
         << "          err = cudaGetLastError();\n          if (err != cudaSuccess) return "
            "arc_error(err, \"the launch of "
         << l.kernel << "\");\n        }\n";
    }
    cu << "        return cudaSuccess;\n      };\n"
       << "      const size_t ws_bytes = static_cast<size_t>(llround(" << cxx_expr(f.workspace)
       << "));\n"
       << "      if (workspace != nullptr || ws_bytes == 0) return run(workspace);\n"
       << "      int device = 0;\n      const cudaError_t err = cudaGetDevice(&device);\n"
       << "      if (err != cudaSuccess) return arc_error(err, \"cudaGetDevice\");\n"
       << "      return arc_with_own_workspace(device, stream, ws_bytes, run);\n    }\n";
  }
  cu << "  }\n  return arc_error(cudaErrorInvalidValue, \"" << name
     << "_launch: no variant for these axes\");\n}\n";

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
    const int ai = problem::tensor_index(p.inputs, t.alias);
    // KernelArc updates the aliased input in place; here the output is separate.
    k << "  cudaMemcpyAsync(out[" << i << "], in[" << ai << "], " << t.alias
      << ".nbytes(), cudaMemcpyDeviceToDevice, stream);\n  in[" << ai << "] = out[" << i << "];\n";
  }
  // No workspace: the launcher's own, allocated once per device and stream (stream-ordered).
  k << "  const cudaError_t err = " << name << "_launch(in, out, axes, nullptr, stream);\n"
    << "  TORCH_CHECK(err == cudaSuccess, \"KernelArc launch failed: \", " << name
    << "_last_error());\n}\n\n"
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
  if (format != "cuda" && format != "sol-execbench" && format != "cpp") {
    return Status::invalid_argument(
        "--format: expected \"cuda\", \"sol-execbench\" or \"cpp\", "
        "got \"" +
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
  in.device = s.device;
  // The cuBLASLt plans (and library versions) the best's evaluation recorded, per workload.
  for (const auto& e : log) {
    if (e.payload.type != fb::Payload::CandidateEvaluated) continue;
    const auto* ev = e.payload.AsCandidateEvaluated();
    if (ev->candidate_hash != s.best_hash) continue;
    for (const auto& w : ev->workloads) {
      for (const auto& d : w->details) {
        if (d->key == "plan") in.lt_records[w->workload].plan = d->value;
        if (d->key == "library") in.lt_records[w->workload].library = d->value;
      }
    }
  }
  auto files = format == "cuda"  ? export_cuda(in)
               : format == "cpp" ? export_cpp(in)
                                 : export_sol_execbench(in);
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
