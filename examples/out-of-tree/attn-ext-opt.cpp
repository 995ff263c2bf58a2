//===- attn-ext-opt.cpp - opt tool of the attn-ext example ----------------===//
//
// An example project built on the installed attn-mlir (docs/Install.md):
// mlir-opt with upstream MLIR, every attn dialect, pass and pipeline, and
// this project's own pass.
//
//===----------------------------------------------------------------------===//

#include "AttnExt/Passes.h"

#include "attn/InitAllAttn.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllAttnPasses();
  attn_ext::registerAttnExtPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerAllAttnDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn-ext: an optimizer built on attn-mlir\n", registry));
}
