//===- FuseWeights.cpp - attn.weights' steps fused per block of rows ------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn-lower-to-linalg makes attn.weights one linalg op per step (scores,
// masks, row maximum, exponentials, row sum, normalisation), each over the
// whole [B, H, Sq, Skv] tensor. This pass, a schedule kept out of the
// conversion, tiles the last step into row blocks with upstream's
// tile-and-fuse and fuses the others into each block, finding them by the
// marks the conversion leaves (kProbabilitiesMarker, kScoresMarker).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNFUSEWEIGHTS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The product P V a multihead decomposition made of `probabilities`
/// (their user that contracts them, [B, H, Sq, Skv] with its reduction over
/// the keys), or null.
linalg::GenericOp getProbabilitiesProduct(linalg::GenericOp probabilities) {
  for (Operation *user : probabilities->getUsers()) {
    auto product = dyn_cast<linalg::GenericOp>(user);
    if (!product || product.getNumDpsInputs() != 2 ||
        product.getDpsInputs()[0] != probabilities->getResult(0) ||
        !linalg::isaContractionOpInterface(product))
      continue;
    AffineMap map =
        product.getMatchingIndexingMap(product.getDpsInputOperand(0));
    if (map.getNumResults() == 4 && map.isProjectedPermutation() &&
        linalg::isReductionIterator(
            product.getIteratorTypesArray()
                [cast<AffineDimExpr>(map.getResult(3)).getPosition()]))
      return product;
  }
  return nullptr;
}

/// Makes the Q K^T contraction `scores` (K read as [B, Hkv, Skv, D]) read
/// K^T [B, Hkv, D, Skv] instead: one transpose, composed with the transpose
/// that produces K where there is one (the head split of a projection).
/// With `ownLoop`, the transpose is computed in parallel blocks of one
/// (batch, head); without, it is left whole, for the row blocks' tiling to
/// fuse into their iterations.
LogicalResult readKeyTransposed(RewriterBase &rewriter,
                                linalg::GenericOp scores, bool ownLoop) {
  OpOperand &keyOperand = scores->getOpOperand(1);
  Value source = keyOperand.get();
  SmallVector<int64_t> permutation = {0, 1, 3, 2};
  if (auto producer = source.getDefiningOp<linalg::TransposeOp>()) {
    // transpose(transpose(x, p), q) is transpose(x, [p[q[i]]]).
    ArrayRef<int64_t> inner = producer.getPermutation();
    for (int64_t &dim : permutation)
      dim = inner[dim];
    source = producer.getInput();
  }
  rewriter.setInsertionPoint(scores);
  Value keyT = createTranspose(rewriter, scores.getLoc(), source, permutation);
  if (ownLoop) {
    auto transpose = cast<TilingInterface>(keyT.getDefiningOp());
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes({rewriter.getIndexAttr(1), rewriter.getIndexAttr(1),
                         rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)});
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    FailureOr<scf::SCFTilingResult> tiled =
        scf::tileUsingSCF(rewriter, transpose, tiling);
    if (failed(tiled))
      return scores.emitOpError(
          "attn-fuse-weights: cannot tile the transpose of the keys");
    rewriter.replaceOp(transpose, tiled->replacements);
    keyT = tiled->replacements.front();
  }

  SmallVector<AffineMap> maps = scores.getIndexingMapsArray();
  AffineMap key = maps[1];
  maps[1] = AffineMap::get(
      key.getNumDims(), 0,
      {key.getResult(0), key.getResult(1), key.getResult(3), key.getResult(2)},
      rewriter.getContext());
  rewriter.modifyOpInPlace(scores, [&] {
    keyOperand.set(keyT);
    scores.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  return success();
}

/// Whether a row block takes all of a head's query rows: a static Sq of at
/// most `rows` in [B, H, Sq, Skv] probabilities.
static bool isWholeHeadBlock(ShapedType probabilities, int64_t rows) {
  int64_t queries = probabilities.getDimSize(2);
  return !ShapedType::isDynamic(queries) && queries <= rows;
}

/// Blocks a row-block loop keeps at least when it groups heads: enough for
/// the threads of any CPU this runs on to balance (as many as
/// attn-parallelize-contractions gives a transpose).
constexpr int64_t kMinGroupedBlocks = 16;

/// The (batch, head, query rows) of a block of the row-block loop over
/// [B, H, Sq, Skv] probabilities: `rows` query rows of one head; or, where
/// a head has no more query rows than that (static), all of them, and with
/// `groupHeads` for as many heads as fit in `rows` rows while the loop
/// keeps kMinGroupedBlocks blocks (the largest divisor of H that does, so
/// that blocks are equal): 32 sequences of 10 tokens with 8 heads make 64
/// blocks of 4 heads, not 256 of one, each mostly the cost of being a
/// block.
static std::array<int64_t, 3> getRowBlock(ShapedType probabilities,
                                          int64_t rows, bool groupHeads) {
  if (!isWholeHeadBlock(probabilities, rows))
    return {1, 1, rows};
  int64_t batch = probabilities.getDimSize(0);
  int64_t heads = probabilities.getDimSize(1);
  int64_t queries = probabilities.getDimSize(2);
  int64_t group = 1;
  if (groupHeads && !ShapedType::isDynamic(batch) &&
      !ShapedType::isDynamic(heads))
    for (int64_t g = 2; g <= heads && g * queries <= rows; ++g)
      if (heads % g == 0 && batch * (heads / g) >= kMinGroupedBlocks)
        group = g;
  return {1, group, queries};
}

/// Whether the linalg ops computing `probabilities` (and `product`, when
/// not null) index every operand by a projected permutation, or by 0 for a
/// broadcast dimension (a mask shared by the heads), so that a block of
/// several heads reads a slice of each. Grouped-query attention reads K
/// and V at head h floordiv G, which a tiled block of heads not aligned
/// with the groups would read at the wrong head.
static bool hasPlainIndexing(linalg::GenericOp probabilities,
                             linalg::GenericOp product) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitUsesFromAbove = false;
  if (failed(getBackwardSlice(probabilities.getOperation(), &slice, options)))
    return false;
  if (product)
    slice.insert(product);
  return llvm::all_of(slice, [](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return !linalgOp ||
           llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
             return map.isProjectedPermutation(/*allowZeroInResults=*/true);
           });
  });
}

/// The tile-and-fuse control of the row blocks: the linalg steps that
/// compute the probabilities are fused, not V's producer (every block of a
/// head reads all of V) nor loops computed once (K^T's transpose in a
/// parallel loop of its own); the probabilities themselves are also yielded
/// by the loop, for their users outside it.
static scf::SCFTileAndFuseOptions::ControlFnTy
fuseProbabilitySteps(Operation *probabilities, Operation *valueProducer) {
  return
      [=](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *owner = producer.getOwner();
        if (!isa<linalg::LinalgOp>(owner) || owner == valueProducer)
          return std::nullopt;
        scf::SCFTileAndFuseOptions::ControlFnResult result;
        result.yieldProducerReplacement = owner == probabilities;
        return result;
      };
}

/// Makes the sizes taken from `probabilities` (a product's init, a loop's
/// bounds) come from their init instead: the loop that replaces them comes
/// after those uses.
static void sizeFromInit(RewriterBase &rewriter,
                         DestinationStyleOpInterface probabilities) {
  for (OpOperand &use : llvm::make_early_inc_range(probabilities->getUses()))
    if (auto dim = dyn_cast<tensor::DimOp>(use.getOwner()))
      rewriter.modifyOpInPlace(
          dim, [&] { use.set(probabilities.getDpsInitOperand(0)->get()); });
}

/// The mean over the heads that attn-decompose-multihead takes of
/// `probabilities` (their user that reduces [B, H, Sq, Skv] over the heads
/// alone), or null.
static linalg::ReduceOp getHeadMean(linalg::GenericOp probabilities) {
  for (Operation *user : probabilities->getUsers()) {
    auto reduce = dyn_cast<linalg::ReduceOp>(user);
    if (reduce && reduce.getNumDpsInputs() == 1 &&
        reduce.getInputs()[0] == probabilities->getResult(0) &&
        reduce.getDimensions() == ArrayRef<int64_t>{1})
      return reduce;
  }
  return nullptr;
}

/// Fewest query rows in a block of the head-mean loop: below that, each
/// block's reads of every head's keys and values cost more than the
/// probabilities it no longer stores.
constexpr int64_t kMinHeadMeanRows = 16;

/// The query rows of a block of the loop that accumulates the mean over
/// the heads of [B, H, Sq, Skv] probabilities (all of a head's rows where
/// there are at most `rows`, static): `rows`, halved down to
/// kMinHeadMeanRows while a static loop would have fewer than
/// kMinGroupedBlocks blocks; none where it would have fewer even then (a
/// loop over the blocks of one short sequence cannot keep the threads
/// busy: the heads are the parallel dimension there).
static std::optional<int64_t> getHeadMeanRows(ShapedType probabilities,
                                              int64_t rows) {
  int64_t batch = probabilities.getDimSize(0);
  int64_t queries = probabilities.getDimSize(2);
  if (ShapedType::isDynamic(batch) || ShapedType::isDynamic(queries))
    return rows;
  auto blocks = [&](int64_t r) { return batch * llvm::divideCeil(queries, r); };
  if (queries <= rows)
    rows = queries;
  else
    while (rows / 2 >= kMinHeadMeanRows && blocks(rows) < kMinGroupedBlocks)
      rows /= 2;
  if (blocks(rows) < kMinGroupedBlocks)
    return std::nullopt;
  return rows;
}

/// The op whose result `loop` (a tiling loop) assembles into its result
/// `index`: the source of that result's tensor.parallel_insert_slice or of
/// the tensor.insert_slice it yields.
static Operation *getTileOf(LoopLikeOpInterface loop, unsigned index) {
  if (auto forall = dyn_cast<scf::ForallOp>(loop.getOperation())) {
    for (Operation *op :
         forall.getCombiningOps(forall.getRegionIterArgs()[index]))
      if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op))
        return insert.getSource().getDefiningOp();
    return nullptr;
  }
  auto yield = cast<scf::YieldOp>(
      cast<scf::ForOp>(loop.getOperation()).getBody()->getTerminator());
  auto insert = yield.getOperand(index).getDefiningOp<tensor::InsertSliceOp>();
  return insert ? insert.getSource().getDefiningOp() : nullptr;
}

/// A loop of tileWithHeadMean and the tiles in its body.
struct HeadMeanTiles {
  LoopLikeOpInterface loop;
  Operation *product, *probabilities, *mean;
};

/// Tiles `product` (P V; tiles of `sizes`, in a loop of `loopType`), fuses
/// the steps of the probabilities it reads into the loop, then `mean`, the
/// other user of the probabilities, so that both use each tile of them
/// where it is computed. The loop is left assembling every tile of the
/// probabilities, which nothing reads: fuseHeadMean stops that.
static FailureOr<HeadMeanTiles>
tileWithHeadMean(RewriterBase &rewriter, Operation *product,
                 Operation *probabilities, Operation *mean,
                 ArrayRef<OpFoldResult> sizes,
                 scf::SCFTilingOptions::LoopType loopType) {
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(sizes);
  tiling.setLoopType(loopType);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  // The probabilities are also yielded, for the mean.
  options.setFusionControlFn(fuseProbabilitySteps(
      probabilities, product->getOperand(1).getDefiningOp()));
  rewriter.setInsertionPoint(product);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(product), options);
  if (failed(fused))
    return failure();
  HeadMeanTiles tiles;
  tiles.loop = fused->loops.front();
  // Tiling sized the product's tiles by the probabilities it reads.
  sizeFromInit(rewriter, cast<DestinationStyleOpInterface>(probabilities));
  for (Operation *replaced : {product, probabilities}) {
    Value replacement = fused->replacements.lookup(replaced->getResult(0));
    if (!replacement)
      return failure();
    // (Its dead untiled copy may still read it inside the loop.)
    rewriter.replaceUsesWithIf(replaced->getResult(0), replacement,
                               [&](OpOperand &use) {
                                 return !tiles.loop->isAncestor(use.getOwner());
                               });
    Operation *tile =
        getTileOf(tiles.loop, cast<OpResult>(replacement).getResultNumber());
    if (!tile)
      return failure();
    (replaced == product ? tiles.product : tiles.probabilities) = tile;
  }
  rewriter.eraseOp(product);
  SmallVector<LoopLikeOpInterface> loops = fused->loops;
  // Consumer fusion wants the mean's init defined before the loop.
  if (failed(moveValueDefinitions(
          rewriter, cast<DestinationStyleOpInterface>(mean).getDpsInits(),
          tiles.loop)))
    return failure();
  FailureOr<scf::SCFFuseConsumerOfSliceResult> fusedMean =
      scf::tileAndFuseConsumer(rewriter, mean, loops);
  if (failed(fusedMean))
    return failure();
  rewriter.eraseOp(mean);
  tiles.loop = loops.front();
  tiles.mean = fusedMean->tiledOps.front();
  return tiles;
}

/// need_weights' mean over the heads, fused: an scf.forall over (batch,
/// block of query rows) whose iteration loops over the heads (scf.for),
/// computing each head's probabilities for its rows, their product with V
/// and their share of the mean, accumulated in the block's [rows, Skv]
/// tile. No [B, H, Sq, Skv] tensor is written or read back: the per-head
/// probabilities live in a tile of one head's rows. Every block reads all
/// of its batch's keys and values, hence blocks of at least
/// kMinHeadMeanRows rows.
static FailureOr<Operation *>
fuseHeadMean(RewriterBase &rewriter, linalg::GenericOp probabilities,
             linalg::GenericOp product, linalg::ReduceOp mean, int64_t rows) {
  // The product's tiles have its loops: sizes for its (batch, head, query)
  // dimensions, the others whole.
  AffineMap map = product.getMatchingIndexingMap(product.getDpsInputOperand(0));
  unsigned numLoops = product.getNumLoops();
  auto sizesFor = [&](ArrayRef<int64_t> perDim) {
    SmallVector<OpFoldResult> sizes(numLoops, rewriter.getIndexAttr(0));
    for (auto [result, size] : llvm::zip(map.getResults(), perDim))
      sizes[cast<AffineDimExpr>(result).getPosition()] =
          rewriter.getIndexAttr(size);
    return sizes;
  };
  FailureOr<HeadMeanTiles> blocks = tileWithHeadMean(
      rewriter, product, probabilities, mean, sizesFor({1, 0, rows}),
      scf::SCFTilingOptions::LoopType::ForallOp);
  if (failed(blocks))
    return failure();
  // The block loop need not assemble the probabilities (and fusing the
  // mean into the head loop needs them used by the mean alone).
  auto blockLoop = cast<scf::ForallOp>(blocks->loop.getOperation());
  for (Operation &op :
       llvm::make_early_inc_range(blockLoop.getTerminator().getYieldingOps()))
    if (cast<tensor::ParallelInsertSliceOp>(op).getSource() ==
        blocks->probabilities->getResult(0))
      rewriter.eraseOp(&op);

  FailureOr<HeadMeanTiles> heads = tileWithHeadMean(
      rewriter, blocks->product, blocks->probabilities, blocks->mean,
      sizesFor({0, 1, 0}), scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(heads))
    return failure();
  // Nor need the head loop: each head's tile gets a tensor of its own and
  // the loop yields the iteration argument it was inserted into unchanged,
  // for canonicalization to drop.
  auto tile = cast<DestinationStyleOpInterface>(heads->probabilities);
  OpOperand &tileInit = *tile.getDpsInitOperand(0);
  rewriter.setInsertionPoint(tile);
  Value own = tensor::EmptyOp::create(
      rewriter, tile->getLoc(),
      tensor::getMixedSizes(rewriter, tile->getLoc(), tileInit.get()),
      getElementTypeOrSelf(tileInit.get().getType()));
  rewriter.modifyOpInPlace(tile, [&] { tileInit.set(own); });
  auto headLoop = cast<scf::ForOp>(heads->loop.getOperation());
  auto yield = cast<scf::YieldOp>(headLoop.getBody()->getTerminator());
  for (OpOperand &yielded : yield->getOpOperands())
    if (auto insert = yielded.get().getDefiningOp<tensor::InsertSliceOp>())
      if (insert.getSource() == tile->getResult(0))
        rewriter.modifyOpInPlace(yield, [&] {
          yielded.set(headLoop.getRegionIterArgs()[yielded.getOperandNumber()]);
        });
  return blockLoop.getOperation();
}

struct AttnFuseWeightsPass
    : attn::impl::AttnFuseWeightsBase<AttnFuseWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(verifyOptionAtLeast(getOperation(), getArgument(), "rows", rows,
                                   /*minimum=*/1)))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> probabilities, scores;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op->removeAttr(kProbabilitiesMarker))
        probabilities.push_back(op);
      if (op->removeAttr(kScoresMarker))
        scores.push_back(op);
    });
    // Nothing to fuse: no CSE over the whole module either.
    if (probabilities.empty())
      return;
    IRRewriter rewriter(&getContext());
    // Every row block of a head reads all of the head's keys: read them
    // from K^T [B, Hkv, D, Skv], transposed once per (batch, head) in
    // parallel, so the block's Q K^T has its keys innermost and contiguous
    // like any matrix product (read as K, each block would transpose the
    // whole head again, or contract across K's rows).
    // Where one block takes all of a head's query rows, the keys are read
    // once per block anyway: their transpose is fused into the block (a
    // parallel loop of its own would cost a parallel loop's overhead per
    // head for a transpose of a few rows).
    for (linalg::GenericOp op : scores) {
      auto shape = cast<ShapedType>(op.getDpsInits()[0].getType());
      if (failed(
              readKeyTransposed(rewriter, op, !isWholeHeadBlock(shape, rows))))
        return signalPassFailure();
    }
    // The row-block loops made below.
    SmallVector<Operation *> rowLoops;
    for (linalg::GenericOp op : probabilities) {
      // [B, H, Sq, Skv]: one (batch, head) and rows rows per
      // iteration, every key; the producers (scores, masks, row max, exp,
      // row sum) computed in the same iteration for the same rows. A
      // product P V that reads them (multihead's need_weights) is the loop's
      // consumer: each block's probabilities are multiplied while they are
      // in the cache, and also stored for the weights.
      linalg::GenericOp product = getProbabilitiesProduct(op);
      linalg::ReduceOp mean = product ? getHeadMean(op) : nullptr;
      std::optional<int64_t> meanRows =
          mean ? getHeadMeanRows(
                     cast<ShapedType>(op.getDpsInits()[0].getType()), rows)
               : std::nullopt;
      if (meanRows && llvm::all_of(op->getUsers(), [&](Operation *user) {
            return user == product || user == mean || isa<tensor::DimOp>(user);
          })) {
        Location loc = op.getLoc();
        FailureOr<Operation *> loop =
            fuseHeadMean(rewriter, op, product, mean, *meanRows);
        if (failed(loop)) {
          emitError(loc, "attn-fuse-weights: cannot fuse the mean over "
                         "the heads into row blocks");
          return signalPassFailure();
        }
        rowLoops.push_back(*loop);
        continue;
      }
      Operation *consumer = product ? product.getOperation() : op;
      AffineMap probsMap =
          product
              ? product.getMatchingIndexingMap(product.getDpsInputOperand(0))
              : op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      SmallVector<OpFoldResult> sizes(
          cast<linalg::LinalgOp>(consumer).getNumLoops(),
          rewriter.getIndexAttr(0));
      std::array<int64_t, 3> blockSizes =
          getRowBlock(cast<ShapedType>(op.getDpsInits()[0].getType()), rows,
                      hasPlainIndexing(op, product));
      for (auto [result, size] :
           llvm::zip(probsMap.getResults().take_front(3), blockSizes))
        sizes[cast<AffineDimExpr>(result).getPosition()] =
            rewriter.getIndexAttr(size);
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(sizes);
      tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      Operation *valueProducer =
          product ? product.getDpsInputs()[1].getDefiningOp() : nullptr;
      options.setFusionControlFn(fuseProbabilitySteps(op, valueProducer));
      rewriter.setInsertionPoint(consumer);
      FailureOr<scf::SCFTileAndFuseResult> fused =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, cast<TilingInterface>(consumer), options);
      if (failed(fused)) {
        op.emitOpError("attn-fuse-weights: cannot fuse the probabilities "
                       "into row blocks");
        return signalPassFailure();
      }
      sizeFromInit(rewriter, op);
      rowLoops.push_back(fused->loops.front());
      SmallVector<Operation *> replacedOps = {consumer};
      if (product)
        replacedOps.push_back(op);
      for (Operation *replaced : replacedOps) {
        for (OpResult result : replaced->getResults())
          if (Value replacement = fused->replacements.lookup(result))
            rewriter.replaceAllUsesWith(result, replacement);
        if (replaced->use_empty())
          rewriter.eraseOp(replaced);
      }
    }
    // A producer with two consumers in the chain (the masked scores feed
    // the row max and the exponentials) was fused once per consumer: the
    // copies are identical, and CSE keeps one. (The untiled producers are
    // left dead for the canonicalizer.)
    DominanceInfo dominance;
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    // The steps' intermediate tiles (scores, exponentials) are slices of
    // whole-tensor inits nothing else reads: as tensors of their own, each
    // block's live in a buffer of a block (on the stack), not in a
    // [B, H, Sq, Skv] buffer written block by block.
    SmallVector<Operation *> slicesOfEmpty;
    for (Operation *loop : rowLoops)
      loop->walk([&](tensor::ExtractSliceOp slice) {
        if (slice.getSource().getDefiningOp<tensor::EmptyOp>())
          slicesOfEmpty.push_back(slice);
      });
    RewritePatternSet folds(&getContext());
    tensor::populateFoldTensorEmptyPatterns(folds);
    (void)applyOpPatternsGreedily(slicesOfEmpty, std::move(folds));
  }
};

} // namespace
