//===- attn-opt.cpp - attn-mlir optimizer driver --------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// mlir-opt with the attn dialect, its passes and its named pipelines added.
// Every upstream dialect, extension and pass is registered too, so any
// pipeline the attn pipelines build on can be run and debugged piecewise.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAllAttn.h"
#include "attn/Target/Cuda/CudaCompiler.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllAttnPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerAllAttnDialects(registry);
  // --attn-cuda-pipeline ends in gpu-module-to-binary.
  mlir::attn::registerCudaTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn-mlir optimizer driver\n", registry));
}
