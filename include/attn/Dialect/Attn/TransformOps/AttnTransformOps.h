//===- AttnTransformOps.h - attn ops of the transform dialect ---*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_H
#define ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_H

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/OpImplementation.h"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/TransformOps/AttnTransformOps.h.inc"

namespace mlir {
class DialectRegistry;

namespace attn {

/// Adds the transform dialect extension with transform.attn.sparsify,
/// transform.attn.tile and transform.attn.register_block to `registry`.
void registerTransformDialectExtension(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMOPS_ATTNTRANSFORMOPS_H
