//===- Passes.h - attn dialect transformation passes ------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace attn {

/// Marks attn-tile's key loops, each iteration of which reads one tile of
/// the keys and values (and of a mask) from buffers larger than the L2, for
/// attn-prefetch-streams (which removes it).
inline constexpr llvm::StringLiteral kKeyTileLoopAttr = "attn.key_tile_loop";

/// Marks the row maximum of attn-tile's online softmax, which only keeps
/// the exponentials in range: any value at least the row's largest score
/// that is not NaN serves (the output does not depend on it, and a NaN
/// score reaches the output through its own exp2 whatever the maximum
/// is). attn-vectorize-tiles computes it with compare-and-selects (one
/// vmaxps on x86) instead of NaN-propagating maximums (removing the mark).
inline constexpr llvm::StringLiteral kSoftmaxMaxAttr = "attn.softmax_max";

/// Marks the Q K^T contraction of each score op attn-lower-to-linalg
/// lowers (with fusion-marks), for attn-fuse-weights, which makes it read
/// K transposed and removes the mark.
inline constexpr llvm::StringLiteral kScoresMarker = "attn.scores";

/// Marks the last op of the probabilities attn-lower-to-linalg makes of an
/// attn.weights (with fusion-marks), whose steps attn-fuse-weights fuses
/// into row blocks, removing the mark.
inline constexpr llvm::StringLiteral kProbabilitiesMarker =
    "attn.probabilities";

#define GEN_PASS_DECL
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

/// Adds the pattern that rewrites attn.multihead into projections around
/// attn.sdpa (or attn.weights when the weights are returned).
void populateDecomposeMultiheadPatterns(RewritePatternSet &patterns);

/// A pass option that must be at least `minimum` (0: non-negative, 1:
/// positive): an error on `op` naming `pass`, the option and its value
/// otherwise.
inline LogicalResult verifyOptionAtLeast(Operation *op, StringRef pass,
                                         StringRef option, int64_t value,
                                         int64_t minimum) {
  assert((minimum == 0 || minimum == 1) && "worded for 0 or 1");
  if (value >= minimum)
    return success();
  return op->emitError() << pass << ": " << option << " must be "
                         << (minimum ? "positive" : "non-negative") << ", got "
                         << value;
}

/// The attention tile sizes passes take as options (attn-sparsify and
/// attn-tile must agree on them): an error on `op` naming `pass` and both
/// sizes unless they are positive (and `smallHeadKvTile` 0 or positive).
LogicalResult verifyTileSizes(Operation *op, StringRef pass, int64_t qTile,
                              int64_t kvTile, int64_t smallHeadKvTile = 0);

/// The key tile `op` is tiled with: `smallHeadKvTile` when it is positive
/// and the op's head sizes (query/key and value) are static and at most 64,
/// `kvTile` otherwise (getAttentionTiles, where an op's `block_size`
/// overrides both; the backward's tiler).
int64_t getKeyTileSize(int64_t d, int64_t dv, int64_t kvTile,
                       int64_t smallHeadKvTile);
int64_t getKeyTileSize(SdpaOp op, int64_t kvTile, int64_t smallHeadKvTile);

/// The query and key tiles of one attn.sdpa.
struct AttentionTiles {
  int64_t qTile, kvTile;
  /// Whether they are the op's blocks (`block_size`) rather than the
  /// options' sizes.
  bool fromBlockSize;
};

/// The tiles `op` is classified (attn-sparsify) and tiled (attn-tile) with,
/// decided here alone: an op with a block layout or block classes
/// (`block_size`) is tiled by its blocks, which is what its classes
/// describe; any other by `qTile` rows and getKeyTileSize's keys.
AttentionTiles getAttentionTiles(SdpaOp op, int64_t qTile, int64_t kvTile,
                                 int64_t smallHeadKvTile);

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
