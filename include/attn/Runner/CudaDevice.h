//===- CudaDevice.h - device memory and timing for the runners --*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The drivers' handle on a GPU: libattn_cuda_runtime is loaded at run time
// (so that attn-run starts, and runs CPU code, on machines without the
// NVIDIA driver), its C API (include/attn/Runtime/CudaRuntime.h) resolved,
// and every failure turned into an llvm::Error carrying the runtime's
// message, which names the driver call that failed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_CUDADEVICE_H
#define ATTN_RUNNER_CUDADEVICE_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
namespace attn {

class CudaDevice {
public:
  /// Loads the runtime and initialises device `ordinal`. Fails with the
  /// reason: no runtime in this build, the library (or the driver's
  /// libcuda.so.1) cannot be loaded, no such device.
  static llvm::Expected<std::unique_ptr<CudaDevice>> open(int ordinal = 0);

  /// "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string &getDescription() const { return description; }
  /// Compute capability, major * 10 + minor.
  int getCapability() const { return capability; }

  llvm::Expected<void *> allocate(size_t bytes);
  llvm::Error free(void *device);
  llvm::Error copyToDevice(void *device, const void *host, size_t bytes);
  llvm::Error copyToHost(void *host, const void *device, size_t bytes);

  /// Event timing on the stream compiled code runs on.
  llvm::Error startTimer();
  llvm::Expected<float> stopTimer();

  /// The runtime's first error since the last call (failures inside
  /// compiled code have no other channel), as an llvm::Error; success if
  /// none.
  llvm::Error takeError();

private:
  struct Api;
  explicit CudaDevice(std::unique_ptr<Api> api);
  llvm::Error check(int status, const char *what);

  std::unique_ptr<Api> api;
  std::string description;
  int capability = 0;

public:
  ~CudaDevice();
};

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_CUDADEVICE_H
