//===- attn-translate.cpp - attn-mlir translation driver ------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// mlir-translate with every upstream translation (--mlir-to-llvmir among
// them). Translations take IR that the attn pipelines have already lowered;
// attn ops themselves never reach a translation.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "attn-mlir translation driver\n"));
}
