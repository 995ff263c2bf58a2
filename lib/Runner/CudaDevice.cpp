//===- CudaDevice.cpp - device memory and timing for the runners ----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/CudaDevice.h"

#include "attn/Target/Cuda/CudaCompiler.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/DynamicLibrary.h"

using namespace mlir;
using namespace mlir::attn;

/// The runtime's C API, resolved by name.
struct CudaDevice::Api {
  int (*init)(int);
  int (*deviceInfo)(char *, size_t, int *);
  const char *(*getError)();
  void (*clearError)();
  void *(*malloc)(size_t);
  int (*free)(void *);
  int (*toDevice)(void *, const void *, size_t);
  int (*toHost)(void *, const void *, size_t);
  int (*timerStart)();
  int (*timerStop)(float *);
};

CudaDevice::CudaDevice(std::unique_ptr<Api> api) : api(std::move(api)) {}
CudaDevice::~CudaDevice() = default;

llvm::Expected<std::unique_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  llvm::StringRef path = getCudaRuntimeLibraryPath();
  if (path.empty())
    return llvm::createStringError(
        "this build found no CUDA toolkit: there is no CUDA runtime library");
  std::string error;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(
      path.str().c_str(), &error);
  if (!library.isValid())
    return llvm::createStringError("cannot load the CUDA runtime " + path +
                                   ": " + error +
                                   " (is the NVIDIA driver installed?)");
  auto api = std::make_unique<Api>();
  bool missing = false;
  auto resolve = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        library.getAddressOfSymbol(name));
    missing |= fn == nullptr;
  };
  resolve(api->init, "attnCudaInit");
  resolve(api->deviceInfo, "attnCudaDeviceInfo");
  resolve(api->getError, "attnCudaGetError");
  resolve(api->clearError, "attnCudaClearError");
  resolve(api->malloc, "attnCudaMalloc");
  resolve(api->free, "attnCudaFree");
  resolve(api->toDevice, "attnCudaCopyToDevice");
  resolve(api->toHost, "attnCudaCopyToHost");
  resolve(api->timerStart, "attnCudaTimerStart");
  resolve(api->timerStop, "attnCudaTimerStop");
  if (missing)
    return llvm::createStringError(path + " lacks the attnCuda* entry points");
  std::unique_ptr<CudaDevice> device(new CudaDevice(std::move(api)));
  if (llvm::Error err = device->check(device->api->init(ordinal),
                                      "initialising the CUDA device"))
    return std::move(err);
  char name[256] = {0};
  if (llvm::Error err = device->check(
          device->api->deviceInfo(name, sizeof(name), &device->capability),
          "querying the CUDA device"))
    return std::move(err);
  device->description =
      std::string(name) + " (sm_" + std::to_string(device->capability) + ")";
  return device;
}

llvm::Error CudaDevice::check(int status, const char *what) {
  if (status == 0)
    return llvm::Error::success();
  const char *message = api->getError();
  std::string text = std::string(what) + ": " +
                     (message ? message : "unknown CUDA runtime error");
  api->clearError();
  return llvm::createStringError(text);
}

llvm::Error CudaDevice::takeError() {
  const char *message = api->getError();
  if (!message)
    return llvm::Error::success();
  std::string text = message;
  api->clearError();
  return llvm::createStringError(text);
}

llvm::Expected<void *> CudaDevice::allocate(size_t bytes) {
  void *pointer = api->malloc(bytes);
  if (!pointer)
    return check(1, "allocating device memory");
  return pointer;
}

llvm::Error CudaDevice::free(void *device) {
  return check(api->free(device), "freeing device memory");
}

llvm::Error CudaDevice::copyToDevice(void *device, const void *host,
                                     size_t bytes) {
  return check(api->toDevice(device, host, bytes), "copying to the device");
}

llvm::Error CudaDevice::copyToHost(void *host, const void *device,
                                   size_t bytes) {
  return check(api->toHost(host, device, bytes), "copying to the host");
}

llvm::Error CudaDevice::startTimer() {
  return check(api->timerStart(), "starting the event timer");
}

llvm::Expected<float> CudaDevice::stopTimer() {
  float ms = 0;
  if (llvm::Error err = check(api->timerStop(&ms), "stopping the event timer"))
    return std::move(err);
  return ms;
}
