//===- CudaRuntime.cpp - attn-mlir's CUDA runtime (driver API) ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Debian's MLIR ships no CUDA runtime wrappers, so this library provides
// the entry points that upstream's gpu-to-llvm lowering calls (`mgpu*`:
// module load, kernel launch, streams, events, memory) on top of the CUDA
// driver API, plus the small C API of include/attn/Runtime/CudaRuntime.h
// that drivers use. It links against the toolkit's libcuda stub at build
// time; the real libcuda.so.1 comes from the NVIDIA driver at load time.
//
// Every driver call goes through `check`, which names the failing call in
// the message. The generated code has no error channel of its own, so a
// failure is printed to stderr once and recorded; attnCudaGetError() tells
// the caller after the call returns.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

namespace {

std::mutex errorMutex;
std::string firstError;
bool hasError = false;

/// Records a failed driver call: `call` is its source text.
bool check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  std::string message = std::string(call) +
                        " failed: " + (name ? name : "unknown CUDA error") +
                        " (" + (text ? text : "no description") + ")";
  std::fprintf(stderr, "attn-mlir CUDA runtime: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!hasError) {
    firstError = message;
    hasError = true;
  }
  return false;
}

#define CHECK(call) check((call), #call)

CUcontext context = nullptr;
CUstream currentStream = nullptr;
CUstream ownStream = nullptr;
CUevent timerStart = nullptr, timerStop = nullptr;

/// Makes the primary context of the device chosen by attnCudaInit (device
/// 0 unless told otherwise) current on the calling thread.
bool ensureContext(int ordinal = 0) {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [&] {
    CUdevice device;
    ok = CHECK(cuInit(0)) && CHECK(cuDeviceGet(&device, ordinal)) &&
         CHECK(cuDevicePrimaryCtxRetain(&context, device));
  });
  return ok && CHECK(cuCtxSetCurrent(context));
}

CUstream stream() {
  if (currentStream)
    return currentStream;
  if (!ownStream && ensureContext())
    CHECK(cuStreamCreate(&ownStream, CU_STREAM_DEFAULT));
  return ownStream;
}

} // namespace

//===----------------------------------------------------------------------===//
// The entry points generated code calls (upstream's mgpu* ABI)
//===----------------------------------------------------------------------===//

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  if (ensureContext())
    CHECK(cuModuleLoadData(&module, data));
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  if (!ensureContext())
    return nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  if (!CHECK(cuModuleLoadDataEx(&module, data, 3, options, values)) && log[0])
    std::fprintf(stderr, "attn-mlir CUDA runtime: PTX JIT log:\n%s\n", log);
  return module;
}

void mgpuModuleUnload(void *module) {
  // At exit the driver may already be shutting down; nothing to report.
  if (module)
    cuModuleUnload(static_cast<CUmodule>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  if (module)
    CHECK(cuModuleGetFunction(&function, static_cast<CUmodule>(module), name));
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *launchStream,
                      void **params, void **extra, size_t /*paramCount*/) {
  if (!function || !ensureContext())
    return;
  auto fn = static_cast<CUfunction>(function);
  // Past 48 KiB, dynamic shared memory must be opted into per function.
  if (sharedBytes > 48 * 1024)
    CHECK(cuFuncSetAttribute(
        fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes));
  // An empty grid (a zero-sized problem) is not an error, just no work.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  CHECK(cuLaunchKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ,
                       sharedBytes, static_cast<CUstream>(launchStream), params,
                       extra));
}

// Generated functions create a stream, enqueue, synchronise and destroy it;
// they all share the runtime's current stream instead, so that callers can
// order and time the work.
void *mgpuStreamCreate() { return stream(); }
void mgpuStreamDestroy(void * /*stream*/) {}
void mgpuStreamSynchronize(void *s) {
  if (ensureContext())
    CHECK(cuStreamSynchronize(static_cast<CUstream>(s)));
}
void mgpuStreamWaitEvent(void *s, void *event) {
  CHECK(cuStreamWaitEvent(static_cast<CUstream>(s), static_cast<CUevent>(event),
                          0));
}

void *mgpuEventCreate() {
  CUevent event = nullptr;
  if (ensureContext())
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}
void mgpuEventDestroy(void *event) {
  CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}
void mgpuEventSynchronize(void *event) {
  CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}
void mgpuEventRecord(void *event, void *s) {
  CHECK(cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(s)));
}

void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool /*hostShared*/) {
  CUdeviceptr pointer = 0;
  if (bytes && ensureContext())
    CHECK(cuMemAlloc(&pointer, bytes));
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, void * /*stream*/) {
  if (pointer && ensureContext())
    CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)));
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *s) {
  if (bytes && ensureContext())
    CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                        reinterpret_cast<CUdeviceptr>(src), bytes,
                        static_cast<CUstream>(s)));
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *s) {
  if (count && ensureContext())
    CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                           static_cast<CUstream>(s)));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *s) {
  if (count && ensureContext())
    CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                           static_cast<CUstream>(s)));
}

void mgpuSetDefaultDevice(int32_t device) { ensureContext(device); }

//===----------------------------------------------------------------------===//
// The driver-facing C API (include/attn/Runtime/CudaRuntime.h)
//===----------------------------------------------------------------------===//

int attnCudaInit(int ordinal) {
  int count = 0;
  if (!CHECK(cuInit(0)) || !CHECK(cuDeviceGetCount(&count)))
    return 1;
  if (ordinal < 0 || ordinal >= count) {
    std::lock_guard<std::mutex> lock(errorMutex);
    firstError = "device " + std::to_string(ordinal) + " requested, but " +
                 std::to_string(count) + " CUDA device(s) present";
    hasError = true;
    return 1;
  }
  return ensureContext(ordinal) ? 0 : 1;
}

int attnCudaDeviceInfo(char *name, size_t nameSize, int *capability) {
  CUdevice device;
  int major = 0, minor = 0;
  if (!ensureContext() || !CHECK(cuCtxGetDevice(&device)) ||
      !CHECK(cuDeviceGetName(name, static_cast<int>(nameSize), device)) ||
      !CHECK(cuDeviceGetAttribute(
          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)) ||
      !CHECK(cuDeviceGetAttribute(
          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)))
    return 1;
  *capability = major * 10 + minor;
  return 0;
}

const char *attnCudaGetError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  return hasError ? firstError.c_str() : nullptr;
}

void attnCudaClearError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  hasError = false;
  firstError.clear();
}

void *attnCudaMalloc(size_t bytes) {
  return mgpuMemAlloc(bytes ? bytes : 1, nullptr, false);
}

int attnCudaFree(void *device) {
  return ensureContext() &&
                 CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(device)))
             ? 0
             : 1;
}

int attnCudaCopyToDevice(void *device, const void *host, size_t bytes) {
  return ensureContext() &&
                 CHECK(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device), host,
                                    bytes))
             ? 0
             : 1;
}

int attnCudaCopyToHost(void *host, const void *device, size_t bytes) {
  return ensureContext() &&
                 CHECK(cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device),
                                    bytes))
             ? 0
             : 1;
}

int attnCudaFill32(void *device, uint32_t word, size_t bytes) {
  return ensureContext() &&
                 CHECK(cuMemsetD32(reinterpret_cast<CUdeviceptr>(device), word,
                                   bytes / 4))
             ? 0
             : 1;
}

void attnCudaSetStream(void *s) { currentStream = static_cast<CUstream>(s); }
void *attnCudaGetStream(void) { return stream(); }

int attnCudaTimerStart(void) {
  if (!ensureContext())
    return 1;
  if (!timerStart && (!CHECK(cuEventCreate(&timerStart, CU_EVENT_DEFAULT)) ||
                      !CHECK(cuEventCreate(&timerStop, CU_EVENT_DEFAULT))))
    return 1;
  return CHECK(cuEventRecord(timerStart, stream())) ? 0 : 1;
}

int attnCudaTimerStop(float *milliseconds) {
  return ensureContext() && CHECK(cuEventRecord(timerStop, stream())) &&
                 CHECK(cuEventSynchronize(timerStop)) &&
                 CHECK(cuEventElapsedTime(milliseconds, timerStart, timerStop))
             ? 0
             : 1;
}

} // extern "C"
