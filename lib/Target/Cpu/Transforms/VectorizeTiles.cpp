//===- VectorizeTiles.cpp - register-blocked, vectorised tile bodies ------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The driver of attn-vectorize-tiles: the stages of VectorizeTiles.h in
// order, with the canonicalisation between them that folds peeled blocks'
// sizes into static types, then the hoisting of accumulators out of the K
// loops.
//
//===----------------------------------------------------------------------===//

#include "VectorizeTiles.h"
#include "attn/Target/Cpu/Transforms/Transforms.h"

#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNVECTORIZETILES
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn::cpu;

/// Applies the canonicalisation patterns of every loaded dialect and
/// registered op: it folds the peeled blocks' sizes into static types.
static LogicalResult canonicalize(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    name.getCanonicalizationPatterns(patterns, ctx);
  // The size of a loop-carried tile as the size of the loop's initial tile
  // (and affine.min/max of induction variables folded where their range
  // decides them): the row loops then run to one SSA value, not to
  // `tensor.dim` of an iteration argument. Otherwise every slice
  // comparison of subset hoisting here and of one-shot bufferization later
  // proves again, through every loop around it, that a dynamic tile keeps
  // its size: seconds of Presburger arithmetic for a shape-generic kernel.
  scf::populateSCFForLoopCanonicalizationPatterns(patterns);
  return applyPatternsGreedily(root, std::move(patterns));
}

/// Bound on the rewrites of step 3 (see there).
static constexpr int64_t kMaxVectorRewrites = 1'000'000;

LogicalResult attn::vectorizeTiles(Operation *root,
                                   const AttnVectorizeTilesOptions &options) {
  if (options.mBlock <= 0 || options.nBlock <= 0 || options.rowElements <= 0 ||
      options.lanes <= 0) {
    root->emitError() << "attn-vectorize-tiles: block sizes must be "
                         "positive, got m-block = "
                      << options.mBlock << ", n-block = " << options.nBlock
                      << ", row-elements = " << options.rowElements
                      << " and lanes = " << options.lanes;
    return failure();
  }
  if (options.contractionMBlock < 0 || options.contractionNBlock < 0) {
    root->emitError() << "attn-vectorize-tiles: contraction block sizes must "
                         "be positive (or 0: m-block and n-block), got "
                         "contraction-m-block = "
                      << options.contractionMBlock
                      << " and contraction-n-block = "
                      << options.contractionNBlock;
    return failure();
  }
  IRRewriter rewriter(root->getContext());

  // Ops with a loop of no iterations (a sequence of no keys) compute
  // nothing and are left to the loops they lower to: the block and row
  // sizes below divide by the extents.
  auto isEmpty = [](linalg::LinalgOp op) {
    return llvm::is_contained(op.getStaticLoopRanges(), 0);
  };

  // 1. Register blocks, peeled.
  SmallVector<linalg::LinalgOp> contractions;
  root->walk([&](linalg::LinalgOp op) {
    if (!isEmpty(op))
      contractions.push_back(op);
  });
  for (linalg::LinalgOp op : contractions) {
    // The marker stays on the blocks tiling makes (see 2b).
    bool cacheBlocked = op->hasAttr(kCacheBlockedAttr);
    int64_t mBlock = options.mBlock, nBlock = options.nBlock,
            maxMBlock = std::max(options.maxMBlock, options.mBlock);
    if (cacheBlocked && options.contractionMBlock > 0)
      mBlock = maxMBlock = options.contractionMBlock;
    if (cacheBlocked && options.contractionNBlock > 0)
      nBlock = options.contractionNBlock;
    if (failed(tileIntoBlocks(rewriter, op, mBlock, nBlock, maxMBlock,
                              options.lanes)))
      return failure();
  }
  // 1b. Everything else in the tiles, a row at a time.
  SmallVector<linalg::LinalgOp> others;
  root->walk([&](linalg::LinalgOp op) {
    if (!op->hasAttr(kBlockMarker) && !op->hasAttr(kDotMarker) && !isEmpty(op))
      others.push_back(op);
  });
  // Long rows a block of n-block lanes at a time: a few registers per
  // value, as in a register block.
  for (linalg::LinalgOp op : others)
    if (!tileTransposeIntoBlocks(rewriter, op))
      tileIntoRows(rewriter, op, options.rowElements, options.nBlock);
  if (failed(canonicalize(root)))
    return failure();
  // 1c. Static blocks as wide as a power of two.
  SmallVector<linalg::LinalgOp> ragged;
  root->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kBlockMarker) && !op.hasDynamicShape())
      ragged.push_back(op);
  });
  for (linalg::LinalgOp op : ragged)
    splitIntoPowerOfTwoColumns(rewriter, op);

  // 2a. Rows become (masked) vector code.
  SmallVector<linalg::LinalgOp> rows;
  root->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kRowMarker))
      rows.push_back(op);
  });
  for (linalg::LinalgOp op : rows) {
    auto sizes = cast<DenseI64ArrayAttr>(op->removeAttr(kRowMarker));
    bool softmaxMax = static_cast<bool>(op->removeAttr(kSoftmaxMaxAttr));
    auto [row, rowSizes] = dropRowUnitDims(rewriter, op, sizes.asArrayRef());
    SmallVector<Value> vectorized = vectorizeInPlace(rewriter, row, rowSizes);
    if (softmaxMax)
      lowerSoftmaxMax(rewriter, vectorized);
  }

  // 2b. Static blocks become vector code; partial ones stay scalar. The K
  // loop around a register block of a contraction blocked for the cache
  // streams its right operand from the L2: marked for attn-prefetch-streams.
  SmallVector<linalg::LinalgOp> blocks;
  root->walk([&](linalg::LinalgOp op) {
    bool streams = static_cast<bool>(op->removeAttr(kCacheBlockedAttr));
    if (!op->removeAttr(kBlockMarker) || op.hasDynamicShape())
      return;
    blocks.push_back(op);
    if (auto kLoop = dyn_cast<scf::ForOp>(op->getParentOp()); streams && kLoop)
      kLoop->setAttr(kStreamLoopAttr, UnitAttr::get(op->getContext()));
  });
  for (linalg::LinalgOp op : blocks)
    vectorizeInPlace(rewriter, dropInnerUnitDims(rewriter, op),
                     /*vectorSizes=*/{});
  // 2c. Static dot-form blocks: partial sums in lanes.
  SmallVector<linalg::LinalgOp> dotBlocks;
  root->walk([&](linalg::LinalgOp op) {
    if (op->removeAttr(kDotMarker) && !op.hasDynamicShape())
      dotBlocks.push_back(op);
  });
  for (linalg::LinalgOp op : dotBlocks)
    lowerDotBlock(rewriter, op, options.lanes);

  // 3. The vectorised multiply-reduce becomes vector.contract, each K
  // step an outer product, that is M broadcast FMAs;
  // transfers get minor-identity maps.
  {
    RewritePatternSet patterns(root->getContext());
    populateBlockLoweringPatterns(patterns, options.bf16Dot);
    // A block shape these patterns rewrite back and forth would
    // otherwise grow the IR until memory runs out; a bound makes it an
    // error instead (blocks are small: real work is a few thousand
    // rewrites per block).
    GreedyRewriteConfig config;
    config.setMaxNumRewrites(kMaxVectorRewrites);
    if (failed(applyPatternsGreedily(root, std::move(patterns), config))) {
      root->emitError("attn-vectorize-tiles: lowering the register blocks "
                      "did not converge within ")
          << kMaxVectorRewrites << " rewrites";
      return failure();
    }
  }

  // 4. The accumulator block is read before and written after the K loop
  // instead of in every iteration.
  root->walk([&](scf::ForOp loop) {
    hoistLoopInvariantSubsets(rewriter,
                              cast<LoopLikeOpInterface>(loop.getOperation()));
  });
  if (failed(canonicalize(root)))
    return failure();
  return success();
}

namespace {

struct AttnVectorizeTilesPass
    : attn::impl::AttnVectorizeTilesBase<AttnVectorizeTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(vectorizeTiles(
            getOperation(), attn::AttnVectorizeTilesOptions{
                                mBlock, nBlock, rowElements, bf16Dot, maxMBlock,
                                lanes, contractionMBlock, contractionNBlock})))
      signalPassFailure();
  }
};

} // namespace
