#include "cuda/cupti.h"

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>
#include <dlfcn.h>

namespace arc::cuda {
namespace {

#define ARC_CUPTI_FUNCTIONS(X)              \
  X(cuptiGetResultString)                   \
  X(cuptiGetVersion)                        \
  X(cuptiActivityRegisterCallbacks)         \
  X(cuptiActivityEnable)                    \
  X(cuptiActivityDisable)                   \
  X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNextRecord)             \
  X(cuptiActivityGetNumDroppedRecords)      \
  X(cuptiActivityPushExternalCorrelationId) \
  X(cuptiActivityPopExternalCorrelationId)

struct Cupti {
#define ARC_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
  ARC_CUPTI_FUNCTIONS(ARC_CUPTI_MEMBER)
#undef ARC_CUPTI_MEMBER
};

Cupti api;  // filled once by load(), inside instance()'s one-time initialization

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMCPY};

const char* kind_name(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return "CUPTI_ACTIVITY_KIND_DRIVER";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "CUPTI_ACTIVITY_KIND_MEMSET";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "CUPTI_ACTIVITY_KIND_MEMCPY";
    default:
      return "CUPTI activity kind";
  }
}

// OK, or kUnavailable "<call> failed: <cuptiGetResultString's text>".
Status check(CUptiResult r, const std::string& call) {
  if (r == CUPTI_SUCCESS) return Status::ok();
  const char* text = nullptr;
  if (api.cuptiGetResultString != nullptr) api.cuptiGetResultString(r, &text);
  return Status::unavailable(
      call + " failed: " +
      (text != nullptr ? std::string(text) : "CUptiResult " + std::to_string(static_cast<int>(r))));
}

// Buffers CUPTI filled and handed back, waiting for collect(). Leaked on purpose: CUPTI's
// thread may complete a buffer while the process exits.
struct Delivered {
  std::mutex mu;
  std::vector<std::pair<uint8_t*, size_t>> buffers;  // (buffer, valid bytes)
};
Delivered& delivered() {
  static auto* d = new Delivered;
  return *d;
}

constexpr size_t kBufferBytes = size_t{8} << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // Records are 8-byte aligned; declining (nullptr) makes CUPTI drop records, which collect()
  // reports through the dropped count.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext /*ctx*/, uint32_t /*stream*/, uint8_t* buffer,
                               size_t /*size*/, size_t valid) {
  Delivered& d = delivered();
  std::lock_guard<std::mutex> lock(d.mu);
  d.buffers.emplace_back(buffer, valid);
}

// Decodes one buffer into `out`, with the record layouts of the CUDA 13 headers
// (CUpti_ActivityKernel10, CUpti_ActivityMemset4, CUpti_ActivityMemcpy6), the versions
// libcupti.so.13 delivers.
Status decode(uint8_t* buffer, size_t valid, ActivityRecords* out) {
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = api.cuptiActivityGetNextRecord(buffer, valid, &record);
    // INVALID_KIND: an incomplete record ends what can be read of the buffer; a repetition
    // that loses records that way is caught by repetition_spans.
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED || r == CUPTI_ERROR_INVALID_KIND) return Status::ok();
    if (r != CUPTI_SUCCESS) return check(r, "cuptiActivityGetNextRecord");
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        out->activities.push_back(
            {k->correlationId, k->name != nullptr ? k->name : "", k->start, k->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        out->activities.push_back({m->correlationId, "memset", m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        out->activities.push_back({m->correlationId, "memcpy", m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          out->correlations.push_back({e->correlationId, e->externalId});
        }
        break;
      }
      default:  // driver API records and anything else: only their correlations matter
        break;
    }
  }
}

Result<std::string> load() {
  const char* candidates[] = {
      "libcupti.so.13",
      "libcupti.so",
      "/usr/local/cuda/lib64/libcupti.so.13",
      "/usr/local/cuda/lib64/libcupti.so",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
      "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
      "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so",
  };
  void* h = nullptr;
  std::string loaded, first_error;
  for (const char* c : candidates) {
    h = ::dlopen(c, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      loaded = c;
      break;
    }
    if (first_error.empty()) {
      const char* e = ::dlerror();
      first_error = e != nullptr ? e : "unknown error";
    }
  }
  if (h == nullptr) {
    return Status::unavailable(
        "no libcupti: dlopen(libcupti.so.13) and the CUDA toolkit's "
        "lib64, extras/CUPTI/lib64 and targets/x86_64-linux/lib failed (" +
        first_error + ")");
  }
#define ARC_STR2(x) #x
#define ARC_STR(x) ARC_STR2(x)
#define ARC_CUPTI_LOAD(name)                                                                 \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(h, ARC_STR(name)));                \
  if (api.name == nullptr) {                                                                 \
    return Status::unavailable(loaded + " lacks " + ARC_STR(name) + " (libcupti too old?)"); \
  }
  ARC_CUPTI_FUNCTIONS(ARC_CUPTI_LOAD)
#undef ARC_CUPTI_LOAD
  return loaded;
}

}  // namespace

Result<ActivityTracer*> ActivityTracer::instance() {
  static Result<ActivityTracer*> tracer = []() -> Result<ActivityTracer*> {
    auto loaded = load();
    if (!loaded) return loaded.status();
    static ActivityTracer t;  // lives to the end of the process, as CUPTI's callbacks do
    uint32_t version = 0;
    if (Status s = check(api.cuptiGetVersion(&version), "cuptiGetVersion"); !s) return s;
    t.library_ = *loaded + " (CUPTI API " + std::to_string(version) + ")";
    if (Status s = check(api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                         "cuptiActivityRegisterCallbacks");
        !s) {
      return s;
    }
    if (Status s = t.set_enabled(true); !s) return s;
    return &t;
  }();
  return tracer;
}

Status ActivityTracer::set_enabled(bool enabled) {
  if (enabled == enabled_) return Status::ok();
  for (CUpti_ActivityKind k : kKinds) {
    const std::string call =
        std::string(enabled ? "cuptiActivityEnable(" : "cuptiActivityDisable(") + kind_name(k) +
        ")";
    Status s = check(enabled ? api.cuptiActivityEnable(k) : api.cuptiActivityDisable(k), call);
    if (!s) {
      for (CUpti_ActivityKind undo : kKinds) api.cuptiActivityDisable(undo);
      enabled_ = false;
      return s;
    }
  }
  enabled_ = enabled;
  return Status::ok();
}

Status ActivityTracer::push(uint64_t external_id) {
  return check(
      api.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                 external_id),
      "cuptiActivityPushExternalCorrelationId(CUSTOM0, " + std::to_string(external_id) + ")");
}

Status ActivityTracer::pop(uint64_t external_id) {
  uint64_t last = 0;
  if (Status s = check(
          api.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
          "cuptiActivityPopExternalCorrelationId(CUSTOM0)");
      !s) {
    return s;
  }
  if (last != external_id) {
    return Status::internal("cuptiActivityPopExternalCorrelationId(CUSTOM0) popped " +
                            std::to_string(last) + ", not the " + std::to_string(external_id) +
                            " pushed");
  }
  return Status::ok();
}

Result<ActivityRecords> ActivityTracer::collect() {
  Status flushed = check(api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                         "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)");
  std::vector<std::pair<uint8_t*, size_t>> buffers;
  {
    Delivered& d = delivered();
    std::lock_guard<std::mutex> lock(d.mu);
    buffers.swap(d.buffers);
  }
  ActivityRecords out;
  Status decoded = Status::ok();
  for (auto& [buffer, valid] : buffers) {
    if (decoded) decoded = decode(buffer, valid, &out);
    std::free(buffer);  // every buffer is freed, decoded or not
  }
  if (!flushed) return flushed;
  if (!decoded) return decoded;
  size_t dropped = 0;
  if (Status s = check(api.cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped),
                       "cuptiActivityGetNumDroppedRecords");
      !s) {
    return s;
  }
  out.dropped = dropped;
  return out;
}

}  // namespace arc::cuda
