//===- CudaCompiler.cpp - from the CUDA pipeline's output to files --------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cuda/CudaCompiler.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;
using namespace mlir::attn;

void attn::registerCudaTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

llvm::StringRef attn::getCudaRuntimeLibraryPath() {
  return ATTN_CUDA_RUNTIME_LIBRARY;
}

SmallVector<GpuObject> attn::collectGpuObjects(ModuleOp module) {
  SmallVector<GpuObject> objects;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      objects.push_back(
          {binary.getSymName().str(),
           gpu::stringifyCompilationTarget(object.getFormat()).str(),
           object.getObject().getValue().str()});
    }
  });
  return objects;
}
