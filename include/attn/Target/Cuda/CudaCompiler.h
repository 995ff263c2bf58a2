//===- CudaCompiler.h - the CUDA pipeline's output to files -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What the CUDA drivers share after `buildCudaPipeline`: the translations a
// module with gpu.binary ops needs, the device code the binaries hold (PTX
// or cubin, for --emit=ptx|cubin), and where the runtime library that the
// host code calls was built.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CUDA_CUDACOMPILER_H
#define ATTN_TARGET_CUDA_CUDACOMPILER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
class DialectRegistry;

namespace attn {

/// Adds the translations to LLVM IR of host code that embeds and launches
/// GPU binaries (LLVM, GPU offloading, NVVM) and the NVVM target's
/// serialisation (gpu-module-to-binary through the toolkit's ptxas).
void registerCudaTranslations(DialectRegistry &registry);

/// libattn_cuda_runtime as built, or "" when the build found no CUDA
/// toolkit.
llvm::StringRef getCudaRuntimeLibraryPath();

/// The device code of one kernel module after gpu-module-to-binary.
struct GpuObject {
  std::string module;
  /// "isa" (PTX text), "bin" (cubin), "fatbin", "offload" (LLVM bitcode).
  std::string format;
  std::string bytes;
};

/// Every object of every gpu.binary in `module`, in order.
SmallVector<GpuObject> collectGpuObjects(ModuleOp module);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CUDA_CUDACOMPILER_H
