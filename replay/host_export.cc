#include "replay/host_export.h"

#include <fstream>
#include <set>
#include <sstream>

#include "base/arc_home.h"
#include "problem/shared_sources.h"
#include "replay/export_text.h"

namespace arc::replay {
namespace {

namespace fs = std::filesystem;

// The host ABI header, inlined so the export needs nothing of KernelArc's tree.
Result<std::string> host_abi_header() {
  const fs::path path = arc_home() / "eval/host_abi.h";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  if (!in) return Status::not_found("cannot read " + path.string() + " (set ARC_HOME)");
  return os.str();
}

std::string shape_text(const problem::TensorSpec& t) {
  std::string s = t.name + " (" + t.dtype + " [";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + t.shape[i];
  return s + "]" + (t.alias.empty() ? "" : ", in place over input " + t.alias) + ")";
}

std::string gen_header(const problem::Problem& p, const std::string& name) {
  std::ostringstream h;
  h << "/* KernelArc export of host problem " << p.name << ": " << p.description << "\n";
  h << " * Inputs, in order:";
  for (const auto& t : p.inputs) h << " " << shape_text(t);
  h << "\n * Outputs, in order:";
  for (const auto& t : p.outputs) h << " " << shape_text(t);
  h << "\n * Axes, in order:";
  for (const auto& a : p.axes) h << " " << a;
  h << "\n * Tensors are dense, row-major float arrays. */\n";
  h << "#ifndef " << name << "_KERNELARC_H_\n#define " << name << "_KERNELARC_H_\n\n";
  h << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h << "#define " << name << "_NUM_INPUTS " << p.inputs.size() << "\n";
  h << "#define " << name << "_NUM_OUTPUTS " << p.outputs.size() << "\n";
  h << "#define " << name << "_NUM_AXES " << p.axes.size() << "\n\n";
  h << "/* The variant serving these axis values (0: the base variant). */\n";
  h << "int " << name << "_variant_for(const long long* axes);\n";
  h << "/* Computes the outputs from the inputs on the calling thread. Returns 0, or the "
       "variant's\n * nonzero code for arguments it refuses. Thread-safe when calls do not share "
       "outputs. */\n";
  h << "int " << name
    << "_run(const float* const* inputs, float* const* outputs, const long long* axes);\n";
  h << "/* The variant serving these axis values, in words. */\n";
  h << "const char* " << name << "_plan(const long long* axes);\n";
  h << "\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return h.str();
}

}  // namespace

Result<std::vector<ExportedFile>> export_cpp(const KernelExportInput& in) {
  const problem::Problem& p = *in.problem;
  if (p.backend != "host") {
    return Status::invalid_argument("problem " + p.name + " has backend \"" + p.backend +
                                    "\": --format cpp exports host problems (use --format cuda "
                                    "or sol-execbench for CUDA problems)");
  }
  const std::string name = export_name(p);
  const ExportVariants ev = distinct_variants(p, in.candidate);
  std::vector<std::string> sources;
  for (const auto& v : ev.variants) {
    std::string text = v.source;
    if (text.empty()) {
      auto it = in.family_sources.find(v.family);
      if (it == in.family_sources.end()) {
        return Status::not_found("variant " + v.key() + ": the source of family '" + v.family +
                                 "' is missing");
      }
      text = it->second;
    }
    sources.push_back(problem::inline_shared_sources(text, p.headers));
  }
  auto abi = host_abi_header();
  if (!abi) return abi.status();

  std::ostringstream cpp;
  cpp << "// KernelArc export of " << p.name << ", candidate " << in.candidate_hash << "\n";
  if (!in.note.empty()) cpp << "// " << in.note << "\n";
  cpp << "// Variants:";
  for (size_t i = 0; i < ev.variants.size(); ++i) cpp << " [" << i << "] " << ev.variants[i].key();
  cpp << "\n// Build: g++ -O2 -std=c++17 -c " << name
      << ".cpp   (the options the run compiled with)\n";
  std::set<std::string> includes = {"#include <stdint.h>"};
  for (const auto& src : sources) {
    for (const auto& l : hoisted_includes(src, {"eval/host_abi.h"})) includes.insert(l);
  }
  for (const auto& l : includes) cpp << l << "\n";
  cpp << "#include \"" << name << ".h\"\n\n// ---- the KernelArc host ABI (eval/host_abi.h) ----\n"
      << abi.value() << "\n";
  for (size_t i = 0; i < ev.variants.size(); ++i) {
    const std::string vi = "arc_v" + std::to_string(i);
    cpp << variant_block(vi, "variant " + std::to_string(i) + ": " + ev.variants[i].key(),
                         sources[i], p.defines_for(ev.variants[i]),
                         {{"arc_kernel", vi + "_kernel"}});
  }
  cpp << variant_for_function(p, ev, name);

  cpp << "extern \"C\" int " << name
      << "_run(const float* const* inputs, float* const* outputs, const long long* axes) {\n"
      << "  int64_t axis_values[" << std::max<size_t>(p.axes.size(), 1) << "] = {0};\n"
      << "  for (int i = 0; i < " << p.axes.size() << "; ++i) axis_values[i] = axes[i];\n"
      << "  const arc_host_args args = {inputs, " << p.inputs.size() << ", outputs, "
      << p.outputs.size() << ", axis_values, " << p.axes.size() << "};\n"
      << "  switch (" << name << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < ev.variants.size(); ++i) {
    const std::string vi = "arc_v" + std::to_string(i);
    cpp << "    case " << i << ":\n      return " << vi << "::" << vi << "_kernel(&args);\n";
  }
  cpp << "  }\n  return -1;\n}\n\n";
  cpp << "extern \"C\" const char* " << name << "_plan(const long long* axes) {\n  switch (" << name
      << "_variant_for(axes)) {\n";
  for (size_t i = 0; i < ev.variants.size(); ++i) {
    cpp << "    case " << i << ":\n      return \""
        << escape_c("variant " + std::to_string(i) + ": " + ev.variants[i].key()) << "\";\n";
  }
  cpp << "  }\n  return \"no variant\";\n}\n";
  return std::vector<ExportedFile>{{name + ".h", gen_header(p, name)}, {name + ".cpp", cpp.str()}};
}

}  // namespace arc::replay
