//===- Transforms.h - CPU rewrites applied to one region --------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The rewrites behind the CPU passes, applied to the ops nested in one op:
// the passes and the transform dialect's attn ops
// (Dialect/Attn/TransformOps/AttnTransformOps.td) both call these.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_TRANSFORMS_TRANSFORMS_H
#define ATTN_TARGET_CPU_TRANSFORMS_TRANSFORMS_H

#include "attn/Target/Cpu/Transforms/Passes.h"

namespace mlir {
namespace attn {

/// attn-vectorize-tiles on the ops nested in `root`: register-blocked
/// contractions and vectorised row ops. Emits an error on `root` and fails
/// for non-positive sizes or where the vector lowering does not converge.
LogicalResult vectorizeTiles(Operation *root,
                             const AttnVectorizeTilesOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPU_TRANSFORMS_TRANSFORMS_H
