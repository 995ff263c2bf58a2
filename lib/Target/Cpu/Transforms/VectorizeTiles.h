//===- VectorizeTiles.h - the stages of attn-vectorize-tiles ----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn-vectorize-tiles in stages, one file each, driven by vectorizeTiles
// (VectorizeTiles.cpp):
//   1. RegisterBlocks.cpp: contractions tiled into register blocks (or
//      dot-form blocks), peeled so that all but the last are static;
//   2. RowTiles.cpp: the other ops of a tile one row (or one transpose
//      block) at a time, vectorised with masks for partial rows;
//   3. BlockLowering.cpp: static blocks to vector code, dot-form blocks to
//      lanes of partial sums, and the vector patterns that lower a block's
//      K step to outer products / FMAs (or AVX512-BF16 dot products).
// Between the stages an op is found by the marker its stage left on it
// (below); every marker is gone when the pass ends.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TARGET_CPU_TRANSFORMS_VECTORIZETILES_H
#define ATTN_LIB_TARGET_CPU_TRANSFORMS_VECTORIZETILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn::cpu {

/// Marks the register blocks between tiling and vectorisation; removed by
/// the end of the pass.
inline constexpr llvm::StringLiteral kBlockMarker = "attn.register_block";

/// Marks the dot-form blocks (isDotForm) between tiling and their lowering
/// (lowerDotBlock); removed by the end of the pass.
inline constexpr llvm::StringLiteral kDotMarker = "attn.dot_block";

/// Marks the row-at-a-time ops between tiling and vectorisation with their
/// vector sizes; removed by the end of the pass.
inline constexpr llvm::StringLiteral kRowMarker = "attn.vector_row";

/// The dimensions of a contraction this pass blocks.
struct BlockableDims {
  linalg::ContractionDimensions dims;
  /// The reduced dimension of static size 2 innermost in both inputs (bf16
  /// pairs, see attn-tile bf16-pairs), when there is one; dims.k then holds
  /// the other, the K loop.
  std::optional<unsigned> pair;
};

//===----------------------------------------------------------------------===//
// Register blocks (RegisterBlocks.cpp)
//===----------------------------------------------------------------------===//

/// The contraction dimensions of `op` if it is a contraction on tensors the
/// pass blocks (the last N innermost in the result), else failure.
FailureOr<BlockableDims> getBlockableDims(linalg::LinalgOp op);

/// Tiles `op` by `sizes` (0: not tiled) into scf.for loops nested in the
/// order `interchange` gives and replaces it with the result.
FailureOr<scf::SCFTilingResult> tileInPlace(RewriterBase &rewriter,
                                            linalg::LinalgOp op,
                                            ArrayRef<OpFoldResult> sizes,
                                            ArrayRef<int64_t> interchange = {});

/// Tiles the contraction `op` into mBlock x nBlock register blocks (or
/// dot-form blocks of `lanes` partial sums), marked kBlockMarker or
/// kDotMarker; other ops are left alone. Fails with an error on `op`.
LogicalResult tileIntoBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
                             int64_t mBlock, int64_t nBlock, int64_t maxMBlock,
                             int64_t lanes);

/// Splits the static register block `op` whose innermost N is not a power
/// of two into blocks whose widths are.
void splitIntoPowerOfTwoColumns(RewriterBase &rewriter, linalg::LinalgOp op);

//===----------------------------------------------------------------------===//
// Rows (RowTiles.cpp)
//===----------------------------------------------------------------------===//

/// A transpose of the last two dimensions tiled into square blocks marked
/// kRowMarker; whether it was.
bool tileTransposeIntoBlocks(RewriterBase &rewriter, linalg::LinalgOp op);

/// An elementwise or row-reduction op tiled one row (at most `maxRow`
/// elements, else `chunk` at a time) at a time and marked kRowMarker.
void tileIntoRows(RewriterBase &rewriter, linalg::LinalgOp op, int64_t maxRow,
                  int64_t chunk);

/// `op` replaced by its vectorisation with `vectorSizes` (empty: static);
/// the replacements, or none where the vectoriser rejects it.
SmallVector<Value> vectorizeInPlace(RewriterBase &rewriter, linalg::LinalgOp op,
                                    ArrayRef<int64_t> vectorSizes);

/// The vectorised softmax row maximum `replacements` write as a tree of
/// compare-and-selects.
void lowerSoftmaxMax(RewriterBase &rewriter, ArrayRef<Value> replacements);

/// `generic` without its unit dimensions `dims`, replacing it; null where
/// upstream cannot drop them.
linalg::LinalgOp dropDims(RewriterBase &rewriter, linalg::GenericOp generic,
                          ArrayRef<unsigned> dims);

/// A row op whose body reads loop indices without its unit dimensions, with
/// the vector sizes of those left; other rows as they are.
std::pair<linalg::LinalgOp, SmallVector<int64_t>>
dropRowUnitDims(RewriterBase &rewriter, linalg::LinalgOp op,
                ArrayRef<int64_t> sizes);

//===----------------------------------------------------------------------===//
// Block lowering (BlockLowering.cpp)
//===----------------------------------------------------------------------===//

/// The static dot-form block `op` as a loop of `lanes`-wide partial sums,
/// reduced once at the end.
void lowerDotBlock(RewriterBase &rewriter, linalg::LinalgOp op, int64_t lanes);

/// The static register block `block` without its inner unit dimensions.
linalg::LinalgOp dropInnerUnitDims(RewriterBase &rewriter,
                                   linalg::LinalgOp block);

/// The patterns that lower vectorised register blocks: reductions to
/// contractions, each K step an outer product or row FMAs (with `bf16Dot`,
/// bf16 pair steps as AVX512-BF16 dot products), transposes as shuffles,
/// masked and min/max reductions as trees of vector ops.
void populateBlockLoweringPatterns(RewritePatternSet &patterns, bool bf16Dot);

} // namespace mlir::attn::cpu

#endif // ATTN_LIB_TARGET_CPU_TRANSFORMS_VECTORIZETILES_H
