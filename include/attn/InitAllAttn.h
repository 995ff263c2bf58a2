//===- InitAllAttn.h - register everything attn provides --------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITALLATTN_H
#define ATTN_INITALLATTN_H

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/TransformOps/AttnTransformOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/TilingInterfaceImpl.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/Cpu/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace attn {

/// Adds the attn dialect, its external interface models (upstream's
/// TilingInterface on attn.sdpa) and its transform dialect extension
/// (transform.attn.*) to `registry`.
inline void registerAllAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  registerTilingInterfaceExternalModels(registry);
  registerTransformDialectExtension(registry);
}

/// Registers every attn pass and named pipeline with the global registry.
inline void registerAllAttnPasses() {
  registerAttnPasses();
  registerAttnCpuPasses();
  registerAttnConversionPasses();
  registerAttnPipelines();
}

} // namespace attn
} // namespace mlir

#endif // ATTN_INITALLATTN_H
