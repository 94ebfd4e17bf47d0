#include "eval/cuda_request.h"

#include "cuda/include/arc_cuda.h"
#include "cuda/runtime_kernels.h"

namespace arc::eval::cuda_worker {

using json = nlohmann::json;

int dtype_code(const std::string& d) {
  if (d == "f32") return cuda::kF32;
  if (d == "bf16") return cuda::kBF16;
  if (d == "f16") return cuda::kF16;
  if (d == "f64") return cuda::kF64;
  if (d == "fp8_e4m3") return cuda::kFP8E4M3;
  if (d == "fp8_e5m2") return cuda::kFP8E5M2;
  return -1;
}

int code_bytes(int code) {
  switch (code) {
    case cuda::kF32:
      return 4;
    case cuda::kF64:
      return 8;
    case cuda::kFP8E4M3:
    case cuda::kFP8E5M2:
      return 1;
    default:
      return 2;
  }
}

namespace {

LaunchDesc parse_launch(const json& l) {
  LaunchDesc d;
  d.kernel = l.at("kernel").get<std::string>();
  auto g = l.at("grid").get<std::vector<int64_t>>();
  auto b = l.at("block").get<std::vector<int64_t>>();
  for (size_t i = 0; i < 3 && i < g.size(); ++i) d.grid[i] = static_cast<unsigned>(g[i]);
  for (size_t i = 0; i < 3 && i < b.size(); ++i) d.block[i] = static_cast<unsigned>(b[i]);
  d.shared = static_cast<unsigned>(l.value("shared", int64_t{0}));
  return d;
}

TensorDesc parse_tensor(const json& t) {
  TensorDesc d;
  d.name = t.at("name").get<std::string>();
  const std::string dtype = t.at("dtype").get<std::string>();
  d.dtype = dtype_code(dtype);
  if (d.dtype < 0) {
    throw json::other_error::create(501,
                                    "tensor " + d.name + ": dtype \"" + dtype +
                                        "\" is not supported by the GPU worker (f32, bf16, "
                                        "f16, f64, fp8_e4m3, fp8_e5m2)",
                                    &t);
  }
  d.elements = t.at("elements").get<int64_t>();
  d.init = t.value("init", d.init);
  d.low = t.value("low", d.low);
  d.high = t.value("high", d.high);
  d.alias = t.value("alias", -1);
  return d;
}

}  // namespace

Request parse_request(const json& j, const EvaluateSettings& settings) {
  Request r;
  static_cast<EvaluateSettings&>(r) = settings;
  for (const json& w : j.at("workloads")) {
    WorkloadJob job;
    job.name = w.at("name").get<std::string>();
    job.index = w.at("index").get<uint64_t>();
    job.axes = w.at("axes").get<std::vector<int64_t>>();
    job.flops = w.value("flops", 0.0);
    job.bytes = w.value("bytes", 0.0);
    for (const json& t : w.at("inputs")) job.inputs.push_back(parse_tensor(t));
    for (const json& t : w.at("outputs")) job.outputs.push_back(parse_tensor(t));
    job.module = w.value("module", "");
    for (const json& l : w.value("launches", json::array()))
      job.launches.push_back(parse_launch(l));
    job.workspace = w.value("workspace", uint64_t{0});
    for (const json& m : w.value("tensor_maps", json::array())) {
      TensorMapDesc d;
      d.output = m.at("output").get<bool>();
      d.index = m.at("index").get<int>();
      const std::string dtype = m.at("dtype").get<std::string>();
      d.dtype = dtype_code(dtype);
      if (d.dtype < 0) {
        throw json::other_error::create(
            501, "tensor map dtype \"" + dtype + "\" is not supported by the GPU worker", &m);
      }
      d.dims = m.at("dims").get<std::vector<uint64_t>>();
      d.strides = m.at("strides").get<std::vector<uint64_t>>();
      d.box = m.at("box").get<std::vector<uint32_t>>();
      d.element_strides = m.at("element_strides").get<std::vector<uint32_t>>();
      d.swizzle = m.at("swizzle").get<uint32_t>();
      d.l2_promotion = m.at("l2_promotion").get<uint32_t>();
      d.nan_fill = m.at("nan_fill").get<bool>();
      const size_t rank = d.dims.size();
      const auto limit = static_cast<size_t>(ARC_MAX_TENSOR_MAPS);
      if (rank < 1 || rank > 5 || d.strides.size() + 1 != rank || d.box.size() != rank ||
          d.element_strides.size() != rank || job.tensor_maps.size() >= limit) {
        throw json::other_error::create(501, "malformed tensor map", &m);
      }
      job.tensor_maps.push_back(std::move(d));
    }
    job.reference_module = w.at("reference_module").get<std::string>();
    for (const json& l : w.at("reference_launches"))
      job.reference_launches.push_back(parse_launch(l));
    if (w.contains("gemm") && !w.at("gemm").is_null()) {
      const json& g = w.at("gemm");
      job.library = true;
      job.gemm.a = g.at("a").get<int>();
      job.gemm.b = g.at("b").get<int>();
      job.gemm.c = g.value("c", -1);
      job.gemm.d = g.at("d").get<int>();
      job.gemm.a_scale = g.value("a_scale", -1);
      job.gemm.b_scale = g.value("b_scale", -1);
      job.gemm.problem.m = g.at("m").get<int64_t>();
      job.gemm.problem.n = g.at("n").get<int64_t>();
      job.gemm.problem.k = g.at("k").get<int64_t>();
      job.gemm.problem.dtype = g.value("dtype", "bf16");
      job.gemm.problem.out_dtype = g.value("out_dtype", "");
      job.gemm.problem.accumulate = job.gemm.c >= 0;
      job.gemm.variant = g.value("variant", "");
      const json& c = g.value("config", json::object());
      auto knob = [&](const char* k, const std::string& fallback) {
        return c.contains(k) ? c.at(k).get<std::string>() : fallback;
      };
      job.gemm.config.heur = std::stoi(knob("HEUR", "0"));
      job.gemm.config.tile = knob("TILE", "auto");
      job.gemm.config.stages = knob("STAGES", "auto");
      const std::string splitk = knob("SPLITK", "auto");
      job.gemm.config.splitk = splitk == "auto" ? 0 : std::stoi(splitk);
      job.gemm.config.reduction = knob("REDUCTION", "auto");
      const std::string swz = knob("SWIZZLE", "auto");
      job.gemm.config.swizzle = swz == "auto" ? -1 : std::stoi(swz);
      job.gemm.config.fast_accum = std::stoi(knob("FAST_ACCUM", "0"));
    }
    r.workloads.push_back(std::move(job));
  }
  return r;
}

}  // namespace arc::eval::cuda_worker
