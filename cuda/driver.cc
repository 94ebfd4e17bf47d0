#include "cuda/driver.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <dlfcn.h>

namespace arc::cuda {
namespace {

#define ARC_STR2(x) #x
#define ARC_STR(x) ARC_STR2(x)

struct Loaded {
  Driver api;
  Status status;
};

Loaded load() {
  disable_driver_compute_cache();
  Loaded l;
  void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    l.status = Status::unavailable(std::string("no NVIDIA driver: dlopen(libcuda.so.1) failed: ") +
                                   (e != nullptr ? e : "unknown error"));
    return l;
  }
#define ARC_CU_LOAD(name)                                                                    \
  l.api.name = reinterpret_cast<decltype(l.api.name)>(::dlsym(h, ARC_STR(name)));            \
  if (l.api.name == nullptr) {                                                               \
    l.status = Status::unavailable(std::string("the NVIDIA driver lacks ") + ARC_STR(name) + \
                                   " (driver too old?)");                                    \
    return l;                                                                                \
  }
  ARC_CU_FUNCTIONS(ARC_CU_LOAD)
#undef ARC_CU_LOAD
  const CUresult r = l.api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.api.cuGetErrorName(r, &name);
    l.status = Status::unavailable(std::string("no CUDA device: cuInit failed: ") +
                                   (name != nullptr ? name : "unknown error"));
    return l;
  }
  int count = 0;
  if (l.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.status = Status::unavailable("no CUDA device: the driver reports none");
  }
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

const Driver& api() { return loaded().api; }

}  // namespace

void disable_driver_compute_cache() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("CUDA_CACHE_DISABLE", "1", 1); });
}

Result<const Driver*> driver() {
  const Loaded& l = loaded();
  if (!l.status) return l.status;
  return &l.api;
}

std::string describe(CUresult r) {
  const Loaded& l = loaded();
  const char* name = nullptr;
  const char* text = nullptr;
  if (l.api.cuGetErrorName != nullptr) l.api.cuGetErrorName(r, &name);
  if (l.api.cuGetErrorString != nullptr) l.api.cuGetErrorString(r, &text);
  std::string s = name != nullptr ? name : "CUresult " + std::to_string(static_cast<int>(r));
  if (text != nullptr) s += std::string(" (") + text + ")";
  return s;
}

Status check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return Status::ok();
  return Status::unavailable(std::string(call) + " failed: " + describe(r));
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

std::string DeviceInfo::arch() const {
  if (cc_major == 9 && cc_minor == 0) return "sm_90a";
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::string DeviceInfo::describe() const {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %.0f GiB, driver %d.%d, %s)", name.c_str(),
                cc_major, cc_minor, sm_count, static_cast<double>(total_memory) / (1ull << 30),
                driver_version / 1000, (driver_version % 1000) / 10, uuid.c_str());
  return buf;
}

int device_count() {
  auto d = driver();
  if (!d) return 0;
  int count = 0;
  if ((*d)->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

Result<DeviceInfo> device_info(int ordinal) {
  auto d = driver();
  if (!d) return d.status();
  const Driver& a = **d;
  DeviceInfo info;
  info.ordinal = ordinal;
  CUdevice dev = 0;
  if (Status s = check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"); !s) return s;
  char name[256] = {};
  if (Status s = check(a.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName"); !s) return s;
  info.name = name;
  CUuuid uuid{};
  if (a.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
    char hex[64];
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::snprintf(hex, sizeof hex,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    info.uuid = hex;
  }
  char bus[64] = {};
  if (a.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == CUDA_SUCCESS) info.pci_bus_id = bus;
  auto attr = [&](CUdevice_attribute at, int* out) {
    return check(a.cuDeviceGetAttribute(out, at, dev), "cuDeviceGetAttribute");
  };
  for (auto [at, out] :
       {std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.cc_major},
        std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.cc_minor},
        std::pair{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.sm_count},
        std::pair{CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info.l2_bytes},
        std::pair{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                  &info.max_shared_per_block_optin},
        std::pair{CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info.sm_clock_khz},
        std::pair{CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info.memory_clock_khz},
        std::pair{CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &info.memory_bus_bits}}) {
    if (Status s = attr(at, out); !s) return s;
  }
  size_t total = 0;
  if (Status s = check(a.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem"); !s) return s;
  info.total_memory = total;
  a.cuDriverGetVersion(&info.driver_version);
  return info;
}

Result<std::unique_ptr<Context>> Context::open(int ordinal) {
  auto info = device_info(ordinal);
  if (!info) return info.status();
  const Driver& a = api();
  CUdevice dev = 0;
  if (Status s = check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"); !s) return s;
  CUcontext ctx = nullptr;
  if (Status s = check(a.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"); !s)
    return s;
  if (Status s = check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); !s) {
    a.cuDevicePrimaryCtxRelease(dev);
    return s;
  }
  return std::unique_ptr<Context>(new Context(dev, ctx, std::move(*info)));
}

Context::~Context() {
  api().cuCtxSetCurrent(nullptr);
  api().cuDevicePrimaryCtxRelease(dev_);
}

Status Context::synchronize() const { return check(api().cuCtxSynchronize(), "cuCtxSynchronize"); }

Result<Buffer> Buffer::allocate(size_t bytes) {
  Buffer b;
  if (bytes == 0) return b;
  if (Status s = check(api().cuMemAlloc(&b.ptr_, bytes), "cuMemAlloc"); !s) {
    return Status::unavailable(s.message() + " (" + std::to_string(bytes) + " bytes)");
  }
  b.bytes_ = bytes;
  return b;
}

void Buffer::reset() {
  if (ptr_ != 0) api().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}

Result<std::unique_ptr<Stream>> Stream::create() {
  CUstream s = nullptr;
  if (Status st = check(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"); !st)
    return st;
  return std::unique_ptr<Stream>(new Stream(s));
}

Stream::~Stream() { api().cuStreamDestroy(s_); }

Status Stream::synchronize() const {
  return check(api().cuStreamSynchronize(s_), "cuStreamSynchronize");
}

Result<std::unique_ptr<Event>> Event::create() {
  CUevent e = nullptr;
  if (Status s = check(api().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"); !s) return s;
  return std::unique_ptr<Event>(new Event(e));
}

Event::~Event() { api().cuEventDestroy(e_); }

Status Event::record(CUstream s) const {
  return check(api().cuEventRecord(e_, s), "cuEventRecord");
}

Result<float> Event::since(const Event& start) const {
  float ms = 0;
  if (Status s = check(api().cuEventElapsedTime(&ms, start.e_, e_), "cuEventElapsedTime"); !s)
    return s;
  return ms;
}

Result<std::unique_ptr<Module>> Module::load(const std::string& image, const std::string& what) {
  CUmodule m = nullptr;
  if (Status s = check(api().cuModuleLoadData(&m, image.data()), "cuModuleLoadData"); !s) {
    return Status::unavailable(s.message() + " for " + what);
  }
  return std::unique_ptr<Module>(new Module(m, what));
}

Module::~Module() { api().cuModuleUnload(m_); }

Result<CUfunction> Module::function(const std::string& name, size_t shared_bytes) const {
  CUfunction f = nullptr;
  if (Status s = check(api().cuModuleGetFunction(&f, m_, name.c_str()), "cuModuleGetFunction");
      !s) {
    return Status::unavailable(s.message() + ": no kernel '" + name + "' in " + what_);
  }
  if (shared_bytes > 48 * 1024) {
    Status s = check(api().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(shared_bytes)),
                     "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    if (!s) {
      return Status::unavailable(s.message() + ": kernel '" + name + "' asks for " +
                                 std::to_string(shared_bytes) + " bytes of shared memory");
    }
  }
  return f;
}

}  // namespace arc::cuda
