//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The CPU layer: passes that run after attn-tile and the reference
// lowering, on linalg, vector and memref code, with sizes the CPU target
// model chose. The attn dialect's own passes (Dialect/Attn/Transforms)
// are target-neutral and include nothing of this layer.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_TRANSFORMS_PASSES_H
#define ATTN_TARGET_CPU_TRANSFORMS_PASSES_H

// The marks attn-tile leaves for this layer (kKeyTileLoopAttr,
// kSoftmaxMaxAttr) and the shared option checks.
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

namespace mlir {
namespace attn {

/// Marks the contractions attn-parallelize-contractions blocked for the
/// cache, whose register blocks attn-vectorize-tiles then takes from its
/// contraction-m-block and contraction-n-block options (and removes it).
inline constexpr llvm::StringLiteral kCacheBlockedAttr = "attn.cache_blocked";

/// Marks the K loops of those contractions' register blocks, which stream
/// a row of the right operand from the L2 per iteration, for
/// attn-prefetch-streams (which removes it).
inline constexpr llvm::StringLiteral kStreamLoopAttr = "attn.stream_loop";

#define GEN_PASS_DECL
#include "attn/Target/Cpu/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Target/Cpu/Transforms/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPU_TRANSFORMS_PASSES_H
