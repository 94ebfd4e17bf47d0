// Tensor maps resolved for a workload and variant (problem/tensor_map.h).
#include "problem/tensor_map.h"

#include <cmath>

#include "problem/expression.h"

namespace arc::problem {

std::map<std::string, int64_t> check_device_names() { return {{kSmCountName, kCheckSmCount}}; }

namespace {

// Evaluates an expression to an integer in [lo, hi]; else fills *why.
bool integer_in(const std::string& expr, const std::map<std::string, int64_t>& names, int64_t lo,
                int64_t hi, int64_t* out, std::string* why) {
  auto v = evaluate_in_scope(expr, names, NameScope{"name", "names"});
  if (!v) {
    *why = "\"" + expr + "\" (" + v.status().message() + ")";
    return false;
  }
  if (*v != std::floor(*v) || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) {
    *why = "\"" + expr + "\" = " + number_text(*v);
    return false;
  }
  *out = static_cast<int64_t>(*v);
  return true;
}

}  // namespace

Result<std::vector<ResolvedTensorMap>> resolve_tensor_maps(
    const Problem& p, const Family& f, const Workload& w,
    const std::map<std::string, std::string>& knobs, const std::map<std::string, int64_t>& device) {
  std::map<std::string, int64_t> names = expression_names(w, knobs);
  names.insert(device.begin(), device.end());
  const std::map<std::string, int64_t> shape_names = expression_names(w, {});
  std::vector<ResolvedTensorMap> out;
  for (size_t i = 0; i < f.tensor_maps.size(); ++i) {
    const TensorMapSpec& s = f.tensor_maps[i];
    const std::string at = "tensor_maps[" + std::to_string(i) + "]";
    auto fail = [&](const std::string& field, const std::string& expected, const std::string& got) {
      std::string m = at;
      m += ".";
      m += field;
      m += ": expected ";
      m += expected;
      m += ", got ";
      m += got;
      m += " for workload '" + w.name + "'";
      return Status::invalid_argument(m);
    };
    ResolvedTensorMap m;
    const TensorSpec* t = nullptr;
    for (size_t j = 0; j < p.inputs.size(); ++j) {
      if (p.inputs[j].name == s.tensor) {
        t = &p.inputs[j];
        m.index = static_cast<int>(j);
      }
    }
    for (size_t j = 0; j < p.outputs.size() && t == nullptr; ++j) {
      if (p.outputs[j].name == s.tensor) {
        t = &p.outputs[j];
        m.index = static_cast<int>(j);
        m.output = true;
      }
    }
    if (t == nullptr) return fail("tensor", "an input or output name", "\"" + s.tensor + "\"");
    m.dtype = t->dtype;
    const int64_t elem = dtype_bytes(t->dtype);
    const size_t rank = t->shape.size();
    if (rank < 1 || rank > 5) {
      return fail("tensor", "a tensor of 1 to 5 dimensions", std::to_string(rank) + " dimensions");
    }
    if (s.box.size() != rank) {
      return fail("box", std::to_string(rank) + " extents (one per dimension of " + s.tensor + ")",
                  std::to_string(s.box.size()));
    }
    if (!s.element_strides.empty() && s.element_strides.size() != rank) {
      return fail("element_strides", std::to_string(rank) + " strides or none",
                  std::to_string(s.element_strides.size()));
    }
    std::string why;
    // Shape order is outermost first; the driver's is innermost first.
    std::vector<int64_t> extent(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (!integer_in(t->shape[d], shape_names, 1, int64_t{1} << 32, &extent[d], &why)) {
        return fail("tensor", "dimensions from 1 to 2^32 (" + s.tensor + "'s shape)", why);
      }
    }
    uint64_t stride = static_cast<uint64_t>(elem);
    for (size_t d = rank; d-- > 0;) {
      m.dims.push_back(static_cast<uint64_t>(extent[d]));
      if (d + 1 < rank) {
        if (stride % 16 != 0 || stride >= (uint64_t{1} << 40)) {
          return fail("tensor",
                      "row strides that are multiples of 16 bytes below 2^40 (TMA's rule)",
                      std::to_string(stride) + " bytes between entries of dimension " +
                          std::to_string(d) + " of " + s.tensor);
        }
        m.strides.push_back(stride);
      }
      stride *= static_cast<uint64_t>(extent[d]);
    }
    for (size_t d = rank; d-- > 0;) {
      int64_t b = 0;
      if (!integer_in(s.box[d], names, 1, 256, &b, &why)) {
        return fail("box[" + std::to_string(d) + "]", "an integer from 1 to 256", why);
      }
      m.box.push_back(static_cast<uint32_t>(b));
      int64_t e = 1;
      if (!s.element_strides.empty() && !integer_in(s.element_strides[d], names, 1, 8, &e, &why)) {
        return fail("element_strides[" + std::to_string(d) + "]", "an integer from 1 to 8", why);
      }
      m.element_strides.push_back(static_cast<uint32_t>(e));
    }
    const int64_t inner_bytes = static_cast<int64_t>(m.box[0]) * elem;
    if (inner_bytes % 16 != 0) {
      return fail("box[" + std::to_string(rank - 1) + "]",
                  "an innermost box of a multiple of 16 bytes (TMA's rule)",
                  std::to_string(m.box[0]) + " elements of " + std::to_string(elem) + " bytes");
    }
    int64_t swz = 0;
    why.clear();
    if (!integer_in(s.swizzle, names, 0, 128, &swz, &why) ||
        (swz != 0 && swz != 32 && swz != 64 && swz != 128)) {
      return fail("swizzle", "0, 32, 64 or 128 (bytes)", why.empty() ? std::to_string(swz) : why);
    }
    if (swz != 0 && inner_bytes > swz) {
      return fail(
          "box[" + std::to_string(rank - 1) + "]",
          "an innermost box of at most the swizzle span (" + std::to_string(swz) + " bytes)",
          std::to_string(inner_bytes) + " bytes");
    }
    m.swizzle = static_cast<uint32_t>(swz);
    int64_t l2 = 0;
    why.clear();
    if (!integer_in(s.l2_promotion, names, 0, 256, &l2, &why) ||
        (l2 != 0 && l2 != 64 && l2 != 128 && l2 != 256)) {
      return fail("l2_promotion", "0, 64, 128 or 256 (bytes)",
                  why.empty() ? std::to_string(l2) : why);
    }
    m.l2_promotion = static_cast<uint32_t>(l2);
    if (s.oob_fill != "zero" && s.oob_fill != "nan") {
      return fail("oob_fill", "\"zero\" or \"nan\"", "\"" + s.oob_fill + "\"");
    }
    m.nan_fill = s.oob_fill == "nan";
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace arc::problem
