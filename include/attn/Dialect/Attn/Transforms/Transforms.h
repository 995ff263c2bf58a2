//===- Transforms.h - attn rewrites applied to one op or region -*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The rewrites behind attn-sparsify and attn-tile, applied to one op rather
// than to every op a pass anchors on: the passes and the transform dialect's
// attn ops (TransformOps/AttnTransformOps.td) both call these, with the
// options of the pass they belong to. The CPU layer's rewrites are in
// Target/Cpu/Transforms/Transforms.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include "attn/Dialect/Attn/Transforms/Passes.h"

namespace mlir {
class RewriterBase;

namespace attn {

/// Why attn-tile cannot tile `op` (a block-sparse layout, which
/// attn-sparsify turns into block classes first), or nullopt.
std::optional<StringRef> getTilingBlocker(SdpaOp op);

/// Why attn-tile leaves `op` to the reference lowering (a block layout,
/// dynamic head sizes), or nullopt.
std::optional<StringRef> getTilingBlocker(SdpaGradOp op);

/// attn-tile on `op`: builds its loop nest in front of it with `options`'
/// sizes and replaces it. Returns the nest's parallel loop (over batch,
/// head and query tile, or key chunk for split decode), or failure where
/// getTilingBlocker names a reason (the op is then left as it is).
FailureOr<scf::ForallOp> tileSdpa(RewriterBase &rewriter, SdpaOp op,
                                  const AttnTileOptions &options);

/// The same for the backward: the FlashAttention-2 loop nest whose parallel
/// loop runs over (batch, key/value head[, key chunk]).
FailureOr<scf::ForallOp> tileSdpaGrad(RewriterBase &rewriter, SdpaGradOp op,
                                      const AttnTileOptions &options);

/// attn-sparsify on `op`: where its masks are not all bands, builds in
/// front of it the code that classifies its blocks at run time and attaches
/// the classes (dropping a block layout, which they now carry). Returns
/// false, changing nothing, where the band alone classifies it or it has
/// classes already.
bool classifyBlocksAtRunTime(RewriterBase &rewriter, SdpaOp op,
                             const AttnSparsifyOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
