#pragma once
// The CUDA driver API, loaded with dlopen("libcuda.so.1") on first use, so every KernelArc
// binary starts on a machine without an NVIDIA driver and says so plainly ("no NVIDIA driver:
// ..."). Every handle has an RAII owner; every failure is a Status that names the driver call,
// the CUresult name and the driver's description of it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <cuda.h>

#include "base/status.h"

namespace arc::cuda {

// The driver entry points KernelArc uses. Versioned names (cuMemAlloc -> cuMemAlloc_v2) come
// from cuda.h's macros, so dlsym looks up the symbol the header declares.
#define ARC_CU_FUNCTIONS(X)    \
  X(cuInit)                    \
  X(cuDriverGetVersion)        \
  X(cuDeviceGetCount)          \
  X(cuDeviceGet)               \
  X(cuDeviceGetName)           \
  X(cuDeviceGetAttribute)      \
  X(cuDeviceTotalMem)          \
  X(cuDeviceGetUuid)           \
  X(cuDeviceGetPCIBusId)       \
  X(cuDevicePrimaryCtxRetain)  \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent)           \
  X(cuCtxSynchronize)          \
  X(cuModuleLoadData)          \
  X(cuModuleUnload)            \
  X(cuModuleGetFunction)       \
  X(cuFuncSetAttribute)        \
  X(cuFuncGetAttribute)        \
  X(cuLaunchKernel)            \
  X(cuTensorMapEncodeTiled)    \
  X(cuMemAlloc)                \
  X(cuMemFree)                 \
  X(cuMemGetInfo)              \
  X(cuMemcpyHtoD)              \
  X(cuMemcpyDtoH)              \
  X(cuMemcpyDtoDAsync)         \
  X(cuMemsetD8Async)           \
  X(cuMemsetD16Async)          \
  X(cuMemsetD32Async)          \
  X(cuStreamCreate)            \
  X(cuStreamDestroy)           \
  X(cuStreamSynchronize)       \
  X(cuEventCreate)             \
  X(cuEventDestroy)            \
  X(cuEventRecord)             \
  X(cuEventSynchronize)        \
  X(cuEventElapsedTime)        \
  X(cuGetErrorName)            \
  X(cuGetErrorString)

struct Driver {
#define ARC_CU_MEMBER(name) decltype(&::name) name = nullptr;
  ARC_CU_FUNCTIONS(ARC_CU_MEMBER)
#undef ARC_CU_MEMBER
};

// Loads libcuda.so.1 and calls cuInit(0) once per process. kUnavailable with a plain sentence
// when there is no driver, a symbol is missing, or cuInit fails (no device).
Result<const Driver*> driver();

// Turns the driver's compute cache (~/.nv/ComputeCache) off for this process, once, before
// cuInit. Where a driver is installed, NVRTC answers a program it compiled before from that
// cache and then leaves ptxas's report (registers, spills, shared memory) out of its log;
// KernelArc keeps its own cache of cubins and never JIT-compiles PTX, so nothing is lost.
void disable_driver_compute_cache();

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string describe(CUresult r);
// OK, or kUnavailable "<call> failed: <describe(r)>".
Status check(CUresult r, const char* call);

// Whether a result leaves the context unusable (sticky errors: illegal address, trap, launch
// failure, misaligned address, ...). After one, the process must be replaced.
bool is_sticky(CUresult r);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-xxxxxxxx-..." (hex)
  std::string pci_bus_id;  // "0000:19:00.0"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;  // e.g. 13000
  int l2_bytes = 0;
  int max_shared_per_block_optin = 0;
  int sm_clock_khz = 0;      // the maximum, as the driver reports it
  int memory_clock_khz = 0;  // the maximum
  int memory_bus_bits = 0;
  uint64_t total_memory = 0;
  // "sm_90a" for compute capability 9.0 (the arch-specific target: wgmma, setmaxnreg), else
  // "sm_<major><minor>".
  std::string arch() const;
  // "NVIDIA H200 (sm_90, 132 SMs, 140 GiB, driver 13.0, GPU-...)".
  std::string describe() const;
};

Result<DeviceInfo> device_info(int ordinal = 0);
// The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies); 0 without a driver.
int device_count();

// The primary context of a device, current on the calling thread while this lives.
class Context {
 public:
  static Result<std::unique_ptr<Context>> open(int ordinal = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  const DeviceInfo& info() const { return info_; }
  CUcontext get() const { return ctx_; }
  Status synchronize() const;

 private:
  Context(CUdevice dev, CUcontext ctx, DeviceInfo info)
      : dev_(dev), ctx_(ctx), info_(std::move(info)) {}
  CUdevice dev_;
  CUcontext ctx_;
  DeviceInfo info_;
};

// Device memory. Empty (0 bytes) is allowed and owns nothing.
class Buffer {
 public:
  Buffer() = default;
  static Result<Buffer> allocate(size_t bytes);
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void reset();
  CUdeviceptr get() const { return ptr_; }
  void* ptr() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

class Stream {
 public:
  static Result<std::unique_ptr<Stream>> create();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return s_; }
  Status synchronize() const;

 private:
  explicit Stream(CUstream s) : s_(s) {}
  CUstream s_;
};

class Event {
 public:
  static Result<std::unique_ptr<Event>> create();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return e_; }
  Status record(CUstream s) const;
  // Milliseconds from `start` to this event; both must have completed.
  Result<float> since(const Event& start) const;

 private:
  explicit Event(CUevent e) : e_(e) {}
  CUevent e_;
};

// A loaded cubin.
class Module {
 public:
  static Result<std::unique_ptr<Module>> load(const std::string& image, const std::string& what);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // The kernel `name`, with its dynamic shared memory limit raised to `shared_bytes` when that
  // is above the default 48 KiB.
  Result<CUfunction> function(const std::string& name, size_t shared_bytes = 0) const;

 private:
  Module(CUmodule m, std::string what) : m_(m), what_(std::move(what)) {}
  CUmodule m_;
  std::string what_;
};

}  // namespace arc::cuda
