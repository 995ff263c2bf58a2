//===- VectorizeTiles.cpp - register-blocked, vectorised tile bodies ------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// LLVM's loop vectoriser turns a scalar matmul loop nest into one vector
// FMA per load and store of the accumulator, which caps it at a fraction of
// the FMA peak. This pass gives each contraction the classic register-
// blocked micro-kernel instead: an M x N block of the result lives in
// vector registers for the whole K loop, and each K step is one outer
// product (M broadcasts times N-wide rows).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNVECTORIZETILES
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// Marks the register blocks between tiling and vectorisation; removed by
/// the end of the pass.
static constexpr llvm::StringLiteral kBlockMarker = "attn.register_block";

/// The dimensions of a contraction this pass blocks.
struct BlockableDims {
  linalg::ContractionDimensions dims;
  /// The reduced dimension of static size 2 innermost in both inputs (bf16
  /// pairs, see attn-tile bf16-pairs), when there is one; dims.k then holds
  /// the other, the K loop.
  std::optional<unsigned> pair;
};

/// The contraction dimensions of `op` if it is a contraction on tensors this
/// pass blocks: any batch dimensions, one or more M, one or more N, one K
/// (and maybe a pair). `n` is reordered so that its last entry is the N
/// dimension innermost in the result (the one vectorised); the others are
/// blocked at 1, like batch dimensions (a sequence projection E[k, S] x
/// K[B, H, S, D] has B, H and D as N dimensions).
static FailureOr<BlockableDims> getBlockableDims(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty())
    return failure();
  BlockableDims result{*dims, std::nullopt};
  if (dims->k.size() == 2) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto isInnermostOf = [&](unsigned loop, OpOperand *operand) {
      AffineMap map = op.getMatchingIndexingMap(operand);
      return map.getNumResults() > 0 &&
             map.getResults().back() == getAffineDimExpr(loop, op.getContext());
    };
    for (unsigned i = 0; i < 2; ++i) {
      unsigned loop = dims->k[i];
      if (ranges[loop] == 2 &&
          llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
            return isInnermostOf(loop, operand);
          })) {
        result.pair = loop;
        result.dims.k = {dims->k[1 - i]};
        break;
      }
    }
  }
  if (result.dims.k.size() != 1)
    return failure();
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto resultPosition = [&](unsigned loop) {
    return *resultMap.getResultPosition(
        getAffineDimExpr(loop, op.getContext()));
  };
  llvm::sort(result.dims.n, [&](unsigned a, unsigned b) {
    return resultPosition(a) < resultPosition(b);
  });
  return result;
}

/// Marks the dot-form blocks (isDotForm) between tiling and their lowering
/// (lowerDotBlock); removed by the end of the pass.
static constexpr llvm::StringLiteral kDotMarker = "attn.dot_block";

/// Whether `op` (blockable as `blockable`) is a dot-form contraction
/// C[m, n] += A[m, k] B[n, k] of floats: its K loop is the innermost
/// dimension of both inputs, so that each result element is a dot product
/// of two contiguous rows (attn-tile's steps over K where it lies), and C
/// is written [m, n] (lowerDotBlock writes a block's rows as M). Blocked
/// like the other contractions, one K step per iteration, each step would
/// gather a column of B; lowerDotBlock keeps lanes of partial sums instead.
static bool isDotForm(linalg::LinalgOp op, const BlockableDims &blockable) {
  const linalg::ContractionDimensions &dims = blockable.dims;
  if (blockable.pair || op.getNumLoops() != 3 || dims.m.size() != 1 ||
      dims.n.size() != 1 || !dims.batch.empty() ||
      !llvm::all_of(op->getOperandTypes(), [](Type type) {
        return isa<FloatType>(getElementTypeOrSelf(type));
      }))
    return false;
  MLIRContext *ctx = op.getContext();
  AffineExpr k = getAffineDimExpr(dims.k[0], ctx);
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (resultMap.getResults() !=
      ArrayRef<AffineExpr>{getAffineDimExpr(dims.m[0], ctx),
                           getAffineDimExpr(dims.n[0], ctx)})
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    return map.getNumResults() == 2 && map.getResults().back() == k;
  });
}

/// The rows and columns of a dot-form block: as many rows as the
/// contraction has, up to mBlock, and as many columns as keep the
/// accumulators of an mBlock x nBlock block (one `lanes`-wide vector of
/// partial sums per result element), a power of two.
static std::pair<int64_t, int64_t> getDotBlock(int64_t rows, int64_t mBlock,
                                               int64_t nBlock, int64_t lanes) {
  int64_t accumulators = std::max<int64_t>(1, mBlock * nBlock / lanes);
  int64_t m = ShapedType::isDynamic(rows) ? mBlock : std::min(rows, mBlock);
  m = std::min(m, accumulators);
  return {m, static_cast<int64_t>(
                 llvm::bit_floor(static_cast<uint64_t>(accumulators / m)))};
}

/// Tiles `op` by `sizes` (0: not tiled) into scf.for loops nested in the
/// order `interchange` gives (default: the op's) and replaces it with the
/// result; the tiling, or failure.
static FailureOr<scf::SCFTilingResult>
tileInPlace(RewriterBase &rewriter, linalg::LinalgOp op,
            ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> interchange = {}) {
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  options.setInterchange(interchange);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// Tiles `op` by `sizes` into blocks marked `marker` (loops nested as
/// `interchange` orders them), then peels the tiled
/// loops but the last `unpeeled` (a K loop), so that all blocks but the
/// last along each peeled loop are static. A loop whose trip count is a
/// static multiple of its step needs no peeling, and peeling says so by
/// failing.
static LogicalResult tileIntoMarkedBlocks(RewriterBase &rewriter,
                                          linalg::LinalgOp op,
                                          ArrayRef<OpFoldResult> sizes,
                                          StringRef marker, size_t unpeeled,
                                          ArrayRef<int64_t> interchange = {}) {
  FailureOr<scf::SCFTilingResult> tiled =
      tileInPlace(rewriter, op, sizes, interchange);
  if (failed(tiled))
    return failure();
  for (Operation *block : tiled->tiledOps)
    block->setAttr(marker, rewriter.getUnitAttr());
  for (LoopLikeOpInterface loop : ArrayRef(tiled->loops).drop_back(unpeeled)) {
    scf::ForOp partial;
    if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
      (void)scf::peelForLoopAndSimplifyBounds(rewriter, forOp, partial);
  }
  return success();
}

/// Splits the register block `op` (static, marked) whose vectorised width,
/// the innermost N, is not a power of two into blocks whose widths are
/// (48 keys: 32 + 16; 100: 64 + 32 + 4), each a slice of the same K step
/// (of bf16 pairs too).
/// The block's accumulator rows are loop-carried vectors of that width:
/// LLVM keeps power-of-two vectors in registers, but carried a 4 x 48 block
/// through the K loop element by element (178 spills and 178 reloads per
/// K step: attention with 48 keys ran at 12 GFLOP/s on an Emerald Rapids).
static void splitIntoPowerOfTwoColumns(RewriterBase &rewriter,
                                       linalg::LinalgOp op) {
  FailureOr<BlockableDims> blockable = getBlockableDims(op);
  if (failed(blockable))
    return;
  unsigned n = blockable->dims.n.back();
  int64_t columns = op.getStaticLoopRanges()[n];
  while (!ShapedType::isDynamic(columns) && !llvm::isPowerOf2_64(columns)) {
    int64_t part = llvm::bit_floor(static_cast<uint64_t>(columns));
    rewriter.setInsertionPoint(op);
    auto [first, rest] =
        linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), n,
                        rewriter.getIndexAttr(part));
    if (!first || !rest)
      return;
    op = cast<linalg::LinalgOp>(rest.getOperation());
    columns -= part;
  }
}

/// Tiles `op` along its loop `dim` in blocks of `widths[0]` (peeled), hands
/// the op of those blocks to `block` with that static width, then tiles
/// the partial block they leave (a count known only at run time) in blocks
/// of `widths[1]`, and so on; the last width, and one that leaves nothing,
/// is not peeled.
static LogicalResult
tileLadder(RewriterBase &rewriter, linalg::LinalgOp op, unsigned dim,
           ArrayRef<int64_t> widths,
           function_ref<LogicalResult(linalg::LinalgOp, int64_t)> block) {
  for (auto [level, width] : llvm::enumerate(widths)) {
    SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
    sizes[dim] = rewriter.getIndexAttr(width);
    FailureOr<scf::SCFTilingResult> split = tileInPlace(rewriter, op, sizes);
    if (failed(split) || split->loops.empty())
      return failure();
    auto loop = dyn_cast<scf::ForOp>(split->loops.front().getOperation());
    scf::ForOp partial;
    bool peeled =
        level + 1 < widths.size() && loop &&
        succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial));
    if (failed(block(cast<linalg::LinalgOp>(split->tiledOps.front()), width)))
      return failure();
    if (!peeled)
      return success();
    linalg::LinalgOp rest;
    partial.walk([&](linalg::LinalgOp inner) { rest = inner; });
    if (!rest)
      return success();
    op = rest;
  }
  return success();
}

/// Rows per block of the rows that register blocks of mBlock rows leave
/// over, when the row count is known only at run time (see
/// tileDynamicRows): 4 x n-block blocks keep at least 8 accumulators on
/// every target the model knows (FMA latency x pipes).
static constexpr int64_t kRemainderRows = 4;

/// Tiles `op`, whose innermost M (loop `m`) has a size known only at run
/// time, into register blocks of `sizes` (`sizes[m]`
/// rows) and peels them, then the rows they leave over into blocks of
/// kRemainderRows rows, then of one row (loops nested as `interchange`
/// orders them): static blocks all, which become
/// vector code (the last row block of a projection whose rows its row
/// blocks do not divide; 4 rows of 256 left as scalar loops took a 256 x
/// 512 x 512 product from 259 to 204 GFLOP/s on an Emerald Rapids).
static LogicalResult tileDynamicRows(RewriterBase &rewriter,
                                     linalg::LinalgOp op, unsigned m,
                                     SmallVector<OpFoldResult> sizes,
                                     ArrayRef<int64_t> interchange) {
  int64_t mBlock = *getConstantIntValue(sizes[m]);
  SmallVector<int64_t> levels = {mBlock};
  for (int64_t rows : {kRemainderRows, int64_t{1}})
    if (rows < levels.back())
      levels.push_back(rows);
  return tileLadder(
      rewriter, op, m, levels, [&](linalg::LinalgOp rowBlock, int64_t rows) {
        sizes[m] = rewriter.getIndexAttr(rows);
        return tileIntoMarkedBlocks(rewriter, rowBlock, sizes, kBlockMarker,
                                    /*unpeeled=*/1, interchange);
      });
}

/// Tiles `op`, whose columns are a static count (or `sizes`' width of
/// them), into `sizes` register blocks (loops nested as `interchange`
/// orders them), marked and peeled; rows known only at run time
/// (`dynamicRows`) through tileDynamicRows. Failure is the caller's to
/// report.
static LogicalResult blockStaticColumns(RewriterBase &rewriter,
                                        linalg::LinalgOp op, unsigned m,
                                        ArrayRef<OpFoldResult> sizes,
                                        ArrayRef<int64_t> interchange,
                                        bool dynamicRows, bool staticPair) {
  // Rows known only at run time: the rows the blocks leave over in smaller
  // static blocks (the other loops are blocked at 1, K one step at a
  // time, whatever their sizes; a row block of 64 rows in 12-row blocks
  // leaves 4 in every one).
  if (dynamicRows && staticPair)
    return tileDynamicRows(rewriter, op, m, llvm::to_vector(sizes),
                           interchange);
  // Peeled: the M and N loops, all but the innermost (K) loop.
  return tileIntoMarkedBlocks(rewriter, op, sizes, kBlockMarker,
                              /*unpeeled=*/1, interchange);
}

/// The producer of `op`'s accumulator start that each register block can
/// compute itself: a fill (attention's zeroed score tile) or an elementwise
/// op (the running output times the softmax's correction) that only `op`
/// reads. Null otherwise.
static linalg::LinalgOp getFusableInitProducer(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return {};
  auto producer =
      op.getDpsInitOperand(0)->get().getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1 || !producer->hasOneUse() ||
      !producer.hasPureTensorSemantics())
    return {};
  if (isa<linalg::FillOp>(producer) ||
      (isa<linalg::GenericOp>(producer) && linalg::isElementwise(producer)))
    return producer;
  return {};
}

/// Tiles `op`, whose blocks of `sizes` divide it, into those blocks over
/// its parallel loops only (K whole, loops nested as `interchange` orders
/// them) with the producer of its accumulator start
/// (getFusableInitProducer) computed by each block on its own slice and
/// marked a block too; returns the block op (then blocked on K as any
/// other), or `op` where there is no such producer. Each block then starts
/// from what the producer leaves in its registers: the zeroed score tile
/// no longer exists (a 64 KiB memset per step of a D = 64 attention), and
/// the output's rescaling is no separate pass over the whole tile.
static linalg::LinalgOp fuseInitProducer(RewriterBase &rewriter,
                                         linalg::LinalgOp op,
                                         ArrayRef<OpFoldResult> sizes,
                                         ArrayRef<int64_t> interchange) {
  linalg::LinalgOp producer = getFusableInitProducer(op);
  if (!producer)
    return op;
  SmallVector<OpFoldResult> parallelSizes(sizes);
  for (auto [size, type] :
       llvm::zip_equal(parallelSizes, op.getIteratorTypesArray()))
    if (type != utils::IteratorType::parallel)
      size = rewriter.getIndexAttr(0);
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(parallelSizes);
  tiling.setInterchange(interchange);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult original, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!isDestination || original.getOwner() != producer)
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(fused))
    return op;
  for (OpResult result : op->getResults())
    rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  rewriter.eraseOp(op);
  if (producer->use_empty())
    rewriter.eraseOp(producer);
  for (Operation *tile : llvm::drop_begin(fused->tiledAndFusedOps))
    tile->setAttr(kBlockMarker, rewriter.getUnitAttr());
  return cast<linalg::LinalgOp>(fused->tiledAndFusedOps.front());
}

/// Tiles `op` into register blocks, marks the block op and peels the M and
/// N loops so that all blocks but the last along each are static.
static LogicalResult tileIntoBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
                                    int64_t mBlock, int64_t nBlock,
                                    int64_t maxMBlock, int64_t lanes) {
  FailureOr<BlockableDims> blockable = getBlockableDims(op);
  if (failed(blockable))
    return success(); // Not a contraction this pass handles: left alone.
  const linalg::ContractionDimensions *dims = &blockable->dims;
  bool dot = isDotForm(op, *blockable);

  // Loops in the order (batch..., outer N..., M..., N, K[, pair]), which
  // the outer-product lowering of the blocks wants (unit dimensions
  // leading). A generic is reordered; a named op in another order is left
  // alone.
  ArrayRef<unsigned> outerN = ArrayRef(dims->n).drop_back();
  SmallVector<unsigned> order(dims->batch.begin(), dims->batch.end());
  order.append(outerN.begin(), outerN.end());
  order.append(dims->m.begin(), dims->m.end());
  order.append({dims->n.back(), dims->k[0]});
  if (blockable->pair)
    order.push_back(*blockable->pair);
  rewriter.setInsertionPoint(op);
  if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic)
      return success();
    FailureOr<linalg::GenericOp> reordered =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(reordered))
      return success();
    op = *reordered;
  }

  // Batch and outer M dimensions one at a time (a projection [B, S, E] x
  // [E, F] has B as an M dimension, since the weight lacks it), the
  // innermost M in mBlock rows, N in nBlock columns, K one step at a time,
  // the pair whole.
  unsigned m = dims->batch.size() + outerN.size() + dims->m.size() - 1;
  unsigned n = m + 1;
  // The tiled loops, though, nest as (batch..., M..., outer N..., N, K):
  // a block's rows of the left operand stay in the L1 while the right
  // operand's panels (outer N) go by, each read from the cache once per
  // row block, and K innermost for the accumulator hoisting. (With the
  // panels outside, every 4-row block read a 256 x 64 weight panel from
  // the L2.)
  SmallVector<int64_t> interchange =
      llvm::to_vector(llvm::seq<int64_t>(0, dims->batch.size()));
  unsigned firstM = dims->batch.size() + outerN.size();
  llvm::append_range(interchange, llvm::seq<int64_t>(firstM, m + 1));
  llvm::append_range(interchange,
                     llvm::seq<int64_t>(dims->batch.size(), firstM));
  llvm::append_range(interchange, llvm::seq<int64_t>(m + 1, op.getNumLoops()));
  // A static row count mBlock does not divide: the smallest block up to
  // maxMBlock rows that divides it, if any (no partial last block). Only
  // for blocks a whole nBlock wide, which is what maxMBlock's register
  // count assumes (a ragged N, such as 10 keys, takes shuffles and more
  // registers: 5 x 10 spilled on AVX2 where 4 x 10 did not).
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  int64_t rows = bounds[m], columns = bounds[n];
  if (dot) {
    // A dot-form block takes the whole K: its partial sums stay in
    // registers across lowerDotBlock's loop over K.
    auto [dotRows, dotColumns] = getDotBlock(rows, mBlock, nBlock, lanes);
    SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
        rewriter.getContext(), ArrayRef<int64_t>{dotRows, dotColumns, 0});
    if (failed(tileIntoMarkedBlocks(rewriter, op, sizes, kDotMarker,
                                    /*unpeeled=*/0)))
      return op.emitError("attn-vectorize-tiles: cannot tile this "
                          "dot-form contraction into register blocks");
    return success();
  }
  if (!ShapedType::isDynamic(rows) && rows % mBlock != 0 &&
      !ShapedType::isDynamic(columns) && columns % nBlock == 0)
    for (int64_t candidate = mBlock + 1; candidate <= maxMBlock; ++candidate)
      if (rows % candidate == 0) {
        mBlock = candidate;
        break;
      }
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(1));
  sizes[m] = rewriter.getIndexAttr(mBlock);
  sizes[n] = rewriter.getIndexAttr(nBlock);
  if (blockable->pair)
    sizes.back() = rewriter.getIndexAttr(0);
  bool staticPair = !blockable->pair || !ShapedType::isDynamic(bounds.back());
  // Columns known only at run time (a column block of a weight whose N is
  // not a whole number of panels: 789 in blocks of 512): whole n-block
  // columns, then the columns they leave in blocks of halving powers of
  // two, each blocked as a static count of columns below. (Left as partial
  // blocks, they were scalar loops: half of a 123 x 456 x 789 product's
  // time on an Emerald Rapids.)
  Location loc = op.getLoc();
  if (ShapedType::isDynamic(columns) && !blockable->pair) {
    SmallVector<int64_t> widths = {nBlock};
    while (widths.back() > 1)
      widths.push_back(
          llvm::bit_floor(static_cast<uint64_t>(widths.back() - 1)));
    if (failed(tileLadder(rewriter, op, n, widths,
                          [&](linalg::LinalgOp columnBlock, int64_t width) {
                            sizes[n] = rewriter.getIndexAttr(width);
                            return blockStaticColumns(
                                rewriter, columnBlock, m, sizes, interchange,
                                ShapedType::isDynamic(rows), staticPair);
                          })))
      return emitError(loc, "attn-vectorize-tiles: cannot tile this "
                            "contraction into register blocks");
    return success();
  }
  // Blocks that divide the op start from their own slice of its
  // accumulator's producer.
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(columns) &&
      rows % mBlock == 0 && columns % nBlock == 0 && staticPair)
    op = fuseInitProducer(rewriter, op, sizes, interchange);
  if (failed(blockStaticColumns(rewriter, op, m, sizes, interchange,
                                ShapedType::isDynamic(rows) &&
                                    !ShapedType::isDynamic(columns),
                                staticPair)))
    return emitError(loc, "attn-vectorize-tiles: cannot tile this "
                          "contraction into register blocks");
  return success();
}

/// Where getLoopUpperBounds' analysis stops. Tile sizes are bounded by the
/// constant of their affine.min; following induction variables to the loop
/// bounds built problems over the whole loop nest (a third of the compile
/// time) and found no bound that changed the code.
static bool isInductionVariable(Value value, std::optional<int64_t>,
                                ValueBoundsConstraintSet &) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && isa<LoopLikeOpInterface>(arg.getOwner()->getParentOp());
}

/// Upper bounds of `op`'s loops, from the shapes of its operands (a dynamic
/// tile size such as `min(64, n - i)` is bounded by 64); kDynamic for a
/// loop with no constant bound.
static SmallVector<int64_t> getLoopUpperBoundsOrDynamic(linalg::LinalgOp op) {
  SmallVector<int64_t> bounds(op.getNumLoops(), ShapedType::kDynamic);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        continue;
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, {operand.get(), static_cast<int64_t>(pos)},
          isInductionVariable,
          /*closedUB=*/true);
      if (failed(bound))
        continue;
      int64_t &known = bounds[dim.getPosition()];
      known = ShapedType::isDynamic(known) ? *bound : std::min(known, *bound);
    }
  }
  return bounds;
}

/// getLoopUpperBoundsOrDynamic where every loop has a bound, else nullopt.
static std::optional<SmallVector<int64_t>>
getLoopUpperBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> bounds = getLoopUpperBoundsOrDynamic(op);
  if (llvm::any_of(bounds, ShapedType::isDynamic))
    return std::nullopt;
  return bounds;
}

/// Whether `op` reads elements narrower than a byte (i1 masks), as an
/// operand or through tensor.extract. Memory holds one i1 per byte, but a
/// vector of i1 loads packed bits, so such reads must stay scalar.
static bool readsSubByteElements(linalg::LinalgOp op) {
  auto subByte = [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isIntOrFloat() && element.getIntOrFloatBitWidth() % 8 != 0;
  };
  if (llvm::any_of(op->getOperandTypes(), subByte))
    return true;
  WalkResult walk = op->walk([&](tensor::ExtractOp extract) {
    return subByte(extract.getTensor().getType()) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Marks the row-at-a-time ops between tiling and vectorisation with their
/// vector sizes; removed by the end of the pass.
static constexpr llvm::StringLiteral kRowMarker = "attn.vector_row";

/// Whether `op` works on rows: every loop but the last parallel, and each
/// operand indexed by all loops or by all but the last (a per-row value,
/// such as the row maximum a normalisation reads, or a row reduction's
/// result). Rank 1 and rank 2 with a parallel outer loop always are; of
/// higher rank this excludes contractions, whose operands each miss a
/// loop that is not the last.
static bool isRowOp(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (loops == 0 || !llvm::all_of(ArrayRef(iterators).drop_back(),
                                  linalg::isParallelIterator))
    return false;
  if (loops <= 2)
    return true;
  return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    return map.isIdentity() ||
           map == AffineMap::getMultiDimIdentityMap(loops, op.getContext())
                      .dropResult(loops - 1);
  });
}

/// The side of the square blocks a transpose is vectorised in: 8 x 8 f32,
/// eight AVX2 registers or half of eight AVX-512 ones, which LLVM turns into
/// a few dozen shuffles instead of one scalar move per element.
static constexpr int64_t kTransposeBlock = 8;

/// A linalg.transpose swapping its last two dimensions (a tile transposed,
/// or K^T packed per key tile) whose last two extents are static multiples
/// of kTransposeBlock, tiled into kTransposeBlock-square blocks (1 in the
/// leading dimensions) and marked for vectorisation like a row op: each
/// block becomes a vector.transpose of registers. Returns whether it did.
/// (Tiled into rows instead, each row of the result would gather a column
/// of the input, one element at a time.)
static bool tileTransposeIntoBlocks(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation());
  if (!transpose || !op.hasPureTensorSemantics())
    return false;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t rank = permutation.size();
  if (rank < 2 || permutation[rank - 1] != rank - 2 ||
      permutation[rank - 2] != rank - 1)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (permutation[d] != d)
      return false;
  std::optional<SmallVector<int64_t>> bounds = getLoopUpperBounds(op);
  if (!bounds || (*bounds)[rank - 1] % kTransposeBlock ||
      (*bounds)[rank - 2] % kTransposeBlock)
    return false;
  SmallVector<int64_t> blockSizes(rank - 2, 1);
  blockSizes.append(2, kTransposeBlock);
  FailureOr<scf::SCFTilingResult> tiled = tileInPlace(
      rewriter, op, getAsIndexOpFoldResult(rewriter.getContext(), blockSizes));
  if (failed(tiled))
    return false;
  tiled->tiledOps.front()->setAttr(kRowMarker,
                                   rewriter.getDenseI64ArrayAttr(blockSizes));
  return true;
}

/// The elementwise and row-reduction ops of a tile (isRowOp), tiled one
/// row at a time and marked with the vector size of a row, which covers a
/// partial row through masking. A row longer than `maxRow` elements, or of
/// a length with no constant bound (the probabilities of `attn.weights`
/// span every key; a shape-generic function's keys are any number), is
/// taken `chunk` elements at a time, a reduction carrying its accumulator
/// from chunk to chunk. (Left unbounded, such rows were scalar loops that
/// kept a row maximum's accumulator in memory: a shape-generic N8 L128
/// multihead with need_weights ran 13.2-13.6 ms against 12.1 static.)
static void tileIntoRows(RewriterBase &rewriter, linalg::LinalgOp op,
                         int64_t maxRow, int64_t chunk) {
  if (!op.hasPureTensorSemantics() || isa<linalg::FillOp>(op) ||
      readsSubByteElements(op) || !isRowOp(op))
    return;
  // The outer loops are tiled at 1, whatever their bounds.
  SmallVector<int64_t> bounds = getLoopUpperBoundsOrDynamic(op);
  int64_t last = bounds.back();
  int64_t row = ShapedType::isDynamic(last) || last > maxRow ? chunk : 0;
  Operation *tiledOp = op;
  if (op.getNumLoops() > 1 || row) {
    SmallVector<OpFoldResult> sizes(op.getNumLoops() - 1,
                                    rewriter.getIndexAttr(1));
    sizes.push_back(rewriter.getIndexAttr(row));
    FailureOr<scf::SCFTilingResult> tiled = tileInPlace(rewriter, op, sizes);
    if (failed(tiled))
      return;
    tiledOp = tiled->tiledOps.front();
    std::fill(bounds.begin(), bounds.end() - 1, 1);
    if (row)
      bounds.back() = row;
  }
  tiledOp->setAttr(kRowMarker, rewriter.getDenseI64ArrayAttr(bounds));
}

/// Replaces `op` by its vectorisation (`vectorSizes` empty for a static
/// op; named contractions straight to vector.contract) and returns the
/// replacements; an op the vectoriser rejects stays, correct as loops
/// (no replacements).
static SmallVector<Value> vectorizeInPlace(RewriterBase &rewriter,
                                           linalg::LinalgOp op,
                                           ArrayRef<int64_t> vectorSizes) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, vectorSizes, SmallVector<bool>(vectorSizes.size(), false),
      /*vectorizeNDExtract=*/true, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (failed(result))
    return {};
  rewriter.replaceOp(op, result->replacements);
  return result->replacements;
}

/// The row maximum of a softmax (kSoftmaxMaxAttr) that `replacements`, the
/// vectorisation of its [1, ..., keys] row, write: the unmasked maximum of
/// the keys (innermost) dimension, as a tree of compare-and-selects.
/// `select(a > b, a, b)` is one vmaxps on x86 (NaN or equal: b), where a
/// NaN-propagating maximum is a compare, an unordered compare, a mask or
/// and a blend (the row maximum was 3.5% of a D = 128 attention's time on
/// an Emerald Rapids). The result may differ from the maximum only where
/// the row holds a NaN, whose exp2 makes the output NaN anyway.
static void lowerSoftmaxMax(RewriterBase &rewriter,
                            ArrayRef<Value> replacements) {
  if (replacements.size() != 1)
    return;
  auto write = replacements.front().getDefiningOp<vector::TransferWriteOp>();
  auto reduction =
      write ? write.getVector().getDefiningOp<vector::MultiDimReductionOp>()
            : nullptr;
  if (!reduction || reduction.getKind() != vector::CombiningKind::MAXIMUMF)
    return;
  VectorType source = reduction.getSourceVectorType();
  int64_t rank = source.getRank();
  ArrayRef<int64_t> shape = source.getShape();
  if (source.isScalable() ||
      reduction.getReductionDims() != ArrayRef<int64_t>{rank - 1} ||
      llvm::any_of(shape.drop_back(), [](int64_t size) { return size != 1; }))
    return;
  Location loc = reduction.getLoc();
  rewriter.setInsertionPoint(reduction);
  auto max = [&](Value a, Value b) -> Value {
    Value greater =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, a, b);
    return arith::SelectOp::create(rewriter, loc, greater, a, b);
  };
  int64_t width = shape.back();
  Value row = vector::ShapeCastOp::create(
      rewriter, loc, VectorType::get({width}, source.getElementType()),
      reduction.getSource());
  // Halves while the width is even, then the lanes left one by one.
  for (; width > 1 && width % 2 == 0; width /= 2) {
    auto half = [&](int64_t offset) {
      return vector::ExtractStridedSliceOp::create(
          rewriter, loc, row, ArrayRef<int64_t>{offset},
          ArrayRef<int64_t>{width / 2}, ArrayRef<int64_t>{1});
    };
    row = max(half(0), half(width / 2));
  }
  Value result = vector::ExtractOp::create(rewriter, loc, row, 0);
  for (int64_t lane = 1; lane < width; ++lane)
    result = max(result, vector::ExtractOp::create(rewriter, loc, row, lane));
  Value acc = reduction.getAcc();
  if (auto accType = dyn_cast<VectorType>(acc.getType()))
    acc = vector::ExtractOp::create(rewriter, loc, acc,
                                    SmallVector<int64_t>(accType.getRank(), 0));
  result = max(result, acc);
  Type resultType = reduction.getType();
  if (isa<VectorType>(resultType))
    result = vector::BroadcastOp::create(rewriter, loc, resultType, result);
  rewriter.replaceOp(reduction, result);
}

/// One vector whose element j is the sum of the lanes of `vectors[j]`
/// (as many vectors as a power of two up to their lane count, also a power
/// of two). Pairs of vectors are folded into one, each holding twice the
/// groups of lanes, by adding the low halves of every group to the high
/// halves; once one vector is left, its groups are halved in place until
/// each is one lane. n vectors of w lanes take 3(n - 1) + 3 log2(w / n)
/// shuffles and adds, where reducing each alone takes 2n log2(w).
static Value buildLaneSums(OpBuilder &b, Location loc,
                           ArrayRef<Value> vectors) {
  int64_t width = cast<VectorType>(vectors.front().getType()).getNumElements();
  // Each vector of `level` holds `groups` groups of width / groups lanes,
  // each a partial sum of one input vector, in input order.
  auto halves = [&](Value x, Value y, int64_t groups, int64_t size) {
    int64_t half = size / 2;
    SmallVector<int64_t> low, high;
    // y's lanes follow x's in the shuffle's numbering.
    for (int64_t offset : {int64_t(0), size * groups})
      if (offset == 0 || x != y)
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t e = 0; e < half; ++e) {
            low.push_back(offset + g * size + e);
            high.push_back(offset + g * size + half + e);
          }
    return arith::AddFOp::create(b, loc,
                                 vector::ShuffleOp::create(b, loc, x, y, low),
                                 vector::ShuffleOp::create(b, loc, x, y, high));
  };
  SmallVector<Value> level(vectors);
  int64_t groups = 1;
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t p = 0; p < level.size(); p += 2)
      next.push_back(halves(level[p], level[p + 1], groups, width / groups));
    level = std::move(next);
    groups *= 2;
  }
  Value sums = level.front();
  for (int64_t size = width / groups; size > 1; size /= 2)
    sums = halves(sums, sums, groups, size);
  return sums;
}

/// Replaces the static dot-form block `op` (isDotForm: init[M, N] +
/// A[M, k] B[N, k]) by vector code: an scf.for over K in chunks of `lanes`
/// elements whose iteration arguments are M x N vectors of partial sums,
/// one FMA per (row, column) and chunk on the two rows' chunks (widened to
/// the accumulator type as they load); the K % lanes elements past the
/// last whole chunk the same way in one narrower chunk; then the partial
/// sums reduced once, those of a row's scores together (buildLaneSums).
/// (Upstream's contraction lowering would reduce every chunk.)
static void lowerDotBlock(RewriterBase &rewriter, linalg::LinalgOp op,
                          int64_t lanes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = ranges[0], columns = ranges[1], depth = ranges[2];
  int64_t chunk = std::min(lanes, depth);
  int64_t whole = depth / chunk * chunk, rest = depth - whole;
  Location loc = op.getLoc();
  Value lhs = op.getDpsInputOperand(0)->get();
  Value rhs = op.getDpsInputOperand(1)->get();
  Value init = op.getDpsInitOperand(0)->get();
  auto accType = cast<FloatType>(getElementTypeOrSelf(init.getType()));
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto zeros = [&](int64_t width) {
    auto type = VectorType::get({width}, accType);
    Value zero = arith::ConstantOp::create(rewriter, loc, type,
                                           rewriter.getZeroAttr(type));
    return SmallVector<Value>(rows * columns, zero);
  };
  // `sums` plus the products of the `width` elements of every row pair
  // from `k` on.
  auto accumulate = [&](OpBuilder &b, Location l, Value k, int64_t width,
                        ValueRange sums) {
    auto type = VectorType::get({width}, accType);
    auto readChunk = [&](Value source, int64_t row) -> Value {
      Type element = getElementTypeOrSelf(source.getType());
      Value read = vector::TransferReadOp::create(
          b, l, VectorType::get({width}, element), source,
          ValueRange{arith::ConstantIndexOp::create(b, l, row), k},
          /*padding=*/std::nullopt, ArrayRef<bool>{true});
      return element == accType ? read
                                : arith::ExtFOp::create(b, l, type, read);
    };
    SmallVector<Value> lhsChunks;
    for (int64_t i = 0; i < rows; ++i)
      lhsChunks.push_back(readChunk(lhs, i));
    SmallVector<Value> next(sums.begin(), sums.end());
    for (int64_t j = 0; j < columns; ++j) {
      Value rhsChunk = readChunk(rhs, j);
      for (int64_t i = 0; i < rows; ++i)
        next[i * columns + j] = vector::FMAOp::create(
            b, l, lhsChunks[i], rhsChunk, next[i * columns + j]);
    }
    return next;
  };
  auto loop = scf::ForOp::create(
      rewriter, loc, index(0), index(whole), index(chunk), zeros(chunk),
      [&](OpBuilder &b, Location l, Value k, ValueRange sums) {
        scf::YieldOp::create(b, l, accumulate(b, l, k, chunk, sums));
      });
  SmallVector<Value> restSums;
  if (rest)
    restSums = accumulate(rewriter, loc, index(whole), rest, zeros(rest));
  // Reassociating lets LLVM reduce each vector as a tree of shuffles.
  auto reduce = [&](Value sums, Value start) -> Value {
    return vector::ReductionOp::create(rewriter, loc,
                                       vector::CombiningKind::ADD, sums, start,
                                       arith::FastMathFlags::reassoc);
  };
  auto blockType = VectorType::get({rows, columns}, accType);
  Value result = vector::TransferReadOp::create(
      rewriter, loc, blockType, init, ValueRange{index(0), index(0)},
      /*padding=*/std::nullopt, ArrayRef<bool>{true, true});
  // The scores of a row `group` at a time, their partial sums reduced
  // together (buildLaneSums) where the counts are powers of two, each
  // alone otherwise.
  int64_t group = std::min(columns, chunk);
  bool together = group > 1 && llvm::isPowerOf2_64(group) &&
                  llvm::isPowerOf2_64(chunk) && columns % group == 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (rest)
      for (int64_t j = 0; j < columns; ++j) {
        SmallVector<int64_t> position = {i, j};
        Value sum = vector::ExtractOp::create(rewriter, loc, result, position);
        sum = reduce(restSums[i * columns + j], sum);
        result = vector::InsertOp::create(rewriter, loc, sum, result, position);
      }
    for (int64_t j = 0; j < columns; j += together ? group : 1) {
      SmallVector<int64_t> position = {i, j};
      if (!together) {
        Value sum = vector::ExtractOp::create(rewriter, loc, result, position);
        sum = reduce(loop.getResult(i * columns + j), sum);
        result = vector::InsertOp::create(rewriter, loc, sum, result, position);
        continue;
      }
      Value starts = vector::ExtractStridedSliceOp::create(
          rewriter, loc,
          vector::ExtractOp::create(rewriter, loc, result,
                                    ArrayRef<int64_t>{i}),
          ArrayRef<int64_t>{j}, ArrayRef<int64_t>{group}, ArrayRef<int64_t>{1});
      Value sums = arith::AddFOp::create(
          rewriter, loc, starts,
          buildLaneSums(rewriter, loc,
                        SmallVector<Value>(
                            loop.getResults().slice(i * columns + j, group))));
      result = vector::InsertStridedSliceOp::create(
          rewriter, loc, sums, result, position, ArrayRef<int64_t>{1});
    }
  }
  rewriter.replaceOp(
      op, vector::TransferWriteOp::create(rewriter, loc, result, init,
                                          ValueRange{index(0), index(0)},
                                          ArrayRef<bool>{true, true}));
}

/// `generic` without its unit dimensions `dims` (slices of rank-reduced
/// operands in and out), replacing it; null where upstream cannot drop
/// them.
static linalg::LinalgOp dropDims(RewriterBase &rewriter,
                                 linalg::GenericOp generic,
                                 ArrayRef<unsigned> dims) {
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  control.controlFn = [&](Operation *) { return llvm::to_vector(dims); };
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, generic, control);
  if (failed(dropped))
    return {};
  rewriter.replaceOp(generic, dropped->replacements);
  return cast<linalg::LinalgOp>(dropped->resultOp.getOperation());
}

/// `block` (a static register block) without its unit dimensions that
/// follow a longer one in the result (other than the M, N and K it is
/// blocked on): a packed right operand's panel index ([M, N / panel,
/// panel], see attn-pack-weights), the heads of a product writing
/// [N, L, H, D], the batch of one writing [L, N, E]. Upstream's
/// contraction lowering only casts away leading unit dimensions, and
/// rewrites a block with an inner one forever. Leading ones stay.
static linalg::LinalgOp dropInnerUnitDims(RewriterBase &rewriter,
                                          linalg::LinalgOp block) {
  auto generic = dyn_cast<linalg::GenericOp>(block.getOperation());
  FailureOr<BlockableDims> blockable = getBlockableDims(block);
  if (!generic || failed(blockable))
    return block;
  const linalg::ContractionDimensions &dims = blockable->dims;
  SmallVector<int64_t> ranges = block.getStaticLoopRanges();
  AffineMap resultMap =
      block.getMatchingIndexingMap(block.getDpsInitOperand(0));
  SmallVector<unsigned> inner;
  bool afterLonger = false;
  for (AffineExpr expr : resultMap.getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    bool blocked = dim == dims.m.back() || dim == dims.n.back() ||
                   (blockable->pair && dim == *blockable->pair);
    if (ranges[dim] == 1 && afterLonger && !blocked)
      inner.push_back(dim);
    afterLonger |= ranges[dim] != 1;
  }
  if (inner.empty())
    return block;
  linalg::LinalgOp dropped = dropDims(rewriter, generic, inner);
  return dropped ? dropped : block;
}

/// A row `op` (vector sizes `sizes`, 1 but for the last dimension) whose
/// body reads loop indices, as the generic over its dimensions of other
/// sizes than 1, with the vector sizes of those. LLVM 22's vectoriser
/// makes the innermost index a 1-D `vector.step`; a value computed from it
/// alone (a score_mod's `j - i`) then stays 1-D, and combined with the
/// [1, .., n] output (`out + bias`) it becomes a vector.multi_reduction
/// from the 1-D vector to the N-D one, which does not verify and crashes
/// the folder. With the unit dimensions gone both are 1-D. Other rows are
/// returned as they are.
static std::pair<linalg::LinalgOp, SmallVector<int64_t>>
dropRowUnitDims(RewriterBase &rewriter, linalg::LinalgOp op,
                ArrayRef<int64_t> sizes) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> unit;
  for (auto [dim, range] : llvm::enumerate(ranges))
    if (range == 1 && dim + 1 < ranges.size())
      unit.push_back(dim);
  if (!generic || unit.empty() ||
      generic.getBody()->getOps<linalg::IndexOp>().empty())
    return {op, llvm::to_vector(sizes)};
  linalg::LinalgOp dropped = dropDims(rewriter, generic, unit);
  if (!dropped)
    return {op, llvm::to_vector(sizes)};
  SmallVector<int64_t> kept;
  for (auto [dim, size] : llvm::enumerate(sizes))
    if (!llvm::is_contained(unit, dim))
      kept.push_back(size);
  return {dropped, kept};
}

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

namespace {

/// A register block's K step, `vector.contract` of an M x 1 by a 1 x N block
/// into M x N, is exactly `vector.outerproduct`. (Upstream's contraction
/// lowering turns unit-K contractions into elementwise code instead, which
/// unrolls to scalars.)
struct UnitKContractToOuterProduct : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (!accType || accType.getRank() != 2 || accType.isScalable() ||
        op.getKind() != vector::CombiningKind::ADD ||
        op.getLhsType().getElementType() != accType.getElementType() ||
        op.getRhsType().getElementType() != accType.getElementType())
      return rewriter.notifyMatchFailure(op, "not a 2-D same-type add");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (maps[0].getNumDims() != 3 || !maps[2].isProjectedPermutation() ||
        op.getLhsType().getNumElements() != accType.getDimSize(0) ||
        op.getRhsType().getNumElements() != accType.getDimSize(1))
      return rewriter.notifyMatchFailure(op, "not an M x 1 by 1 x N product");
    // The result's rows must come from the LHS and its columns from the RHS.
    AffineExpr row = maps[2].getResult(0), column = maps[2].getResult(1);
    if (!llvm::is_contained(maps[0].getResults(), row) ||
        !llvm::is_contained(maps[1].getResults(), column))
      return rewriter.notifyMatchFailure(op, "operands in N x M order");
    Location loc = op.getLoc();
    auto flat = [&](Value v, int64_t n) {
      return vector::ShapeCastOp::create(
          rewriter, loc, VectorType::get({n}, accType.getElementType()), v);
    };
    rewriter.replaceOpWithNewOp<vector::OuterProductOp>(
        op, accType, flat(op.getLhs(), accType.getDimSize(0)),
        flat(op.getRhs(), accType.getDimSize(1)), op.getAcc());
    return success();
  }
};

/// The K step of a one-row register block (the rows a block ladder leaves
/// last: 1 of 257 tokens, 13 of 77), `vector.contract` of a 1-element
/// vector by a 1 x N row into N, is one broadcast FMA. (Upstream's
/// lowering multiplied it out element by element: scalar `vmulss` and
/// inserts, which took 1 row of a 257 x 1024 x 768 product as long as a
/// fifth of the other 256 on an Emerald Rapids.)
struct UnitKRowContractToFma : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (!accType || accType.getRank() != 1 || accType.isScalable() ||
        !isa<FloatType>(accType.getElementType()) ||
        op.getKind() != vector::CombiningKind::ADD ||
        op.getLhsType().getElementType() != accType.getElementType() ||
        op.getRhsType().getElementType() != accType.getElementType() ||
        op.getIndexingMapsArray()[0].getNumDims() != 2)
      return rewriter.notifyMatchFailure(op, "not a 1-D same-type float add");
    // One operand is the single element (K = 1), the other the row, which
    // carries the result's dimension.
    AffineExpr column = op.getIndexingMapsArray()[2].getResult(0);
    Value scalar = op.getLhs(), row = op.getRhs();
    if (op.getLhsType().getNumElements() != 1)
      std::swap(scalar, row);
    AffineMap rowMap = op.getIndexingMapsArray()[row == op.getLhs() ? 0 : 1];
    if (cast<VectorType>(scalar.getType()).getNumElements() != 1 ||
        cast<VectorType>(row.getType()).getNumElements() !=
            accType.getDimSize(0) ||
        !llvm::is_contained(rowMap.getResults(), column))
      return rewriter.notifyMatchFailure(op, "not a 1 by 1 x N product");
    Location loc = op.getLoc();
    Type element = accType.getElementType();
    Value value = vector::ExtractOp::create(
        rewriter, loc,
        vector::ShapeCastOp::create(rewriter, loc,
                                    VectorType::get({1}, element), scalar),
        ArrayRef<int64_t>{0});
    rewriter.replaceOpWithNewOp<vector::FMAOp>(
        op, vector::BroadcastOp::create(rewriter, loc, accType, value),
        vector::ShapeCastOp::create(rewriter, loc, accType, row), op.getAcc());
    return success();
  }
};

/// A contraction of narrower floats into a wider accumulator (a
/// linalg.matmul of f16 operands into f32, whose vectorised form keeps the
/// mixed types on vector.contract) with its operands extended first: the
/// outer-product and contraction lowerings take one element type, and a
/// mixed contraction would otherwise reach LLVM unlowered. Below
/// PairContractToDotBF16, which contracts bf16 pairs as they are.
struct ExtendContractOperands : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accElement =
        dyn_cast<FloatType>(getElementTypeOrSelf(op.getAccType()));
    if (!accElement)
      return rewriter.notifyMatchFailure(op, "not a float accumulator");
    auto extend = [&](Value v) -> Value {
      auto type = cast<VectorType>(v.getType());
      auto element = dyn_cast<FloatType>(type.getElementType());
      if (element == accElement)
        return v;
      if (!element || element.getWidth() >= accElement.getWidth())
        return Value();
      return arith::ExtFOp::create(rewriter, op.getLoc(),
                                   type.clone(accElement), v);
    };
    if (op.getLhsType().getElementType() == accElement &&
        op.getRhsType().getElementType() == accElement)
      return rewriter.notifyMatchFailure(op, "one element type");
    Value lhs = extend(op.getLhs()), rhs = extend(op.getRhs());
    if (!lhs || !rhs)
      return rewriter.notifyMatchFailure(op, "operands not narrower floats");
    rewriter.modifyOpInPlace(op, [&] {
      op.getLhsMutable().assign(lhs);
      op.getRhsMutable().assign(rhs);
    });
    return success();
  }
};

/// Whether `slice` takes a contiguous run of its source's elements in
/// row-major order: every dimension after its first non-unit one whole.
static bool isContiguousSlice(tensor::ExtractSliceOp slice) {
  if (!slice.hasUnitStride())
    return false;
  RankedTensorType source = slice.getSourceType();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  auto firstNonUnit = llvm::find_if(sizes, [](int64_t s) { return s != 1; });
  for (int64_t d = std::distance(sizes.begin(), firstNonUnit) + 1,
               e = source.getRank();
       d < e; ++d)
    if (ShapedType::isDynamic(sizes[d]) || sizes[d] != source.getDimSize(d))
      return false;
  return true;
}

/// `read` as a 1-D read of its source collapsed, when it reads the whole of
/// a static tensor that is a contiguous slice (null otherwise). LLVM holds
/// an n-D vector as an array of its rows: a register block's RHS of bf16
/// pairs (N x 2) would be assembled from N two-element loads, where the
/// flat read is N/16 full-width loads.
static Value createFlatRead(PatternRewriter &rewriter,
                            vector::TransferReadOp read) {
  auto source = dyn_cast<RankedTensorType>(read.getBase().getType());
  VectorType type = read.getVectorType();
  // Collapsing a strided slice would bufferize to a copy.
  auto slice = read.getBase().getDefiningOp<tensor::ExtractSliceOp>();
  if (!source || !source.hasStaticShape() || type.isScalable() ||
      read.getMask() || source.getNumElements() != type.getNumElements() ||
      !read.getPermutationMap().isMinorIdentity() ||
      llvm::any_of(read.getInBoundsValues(), [](bool b) { return !b; }) ||
      llvm::any_of(read.getIndices(),
                   [](Value v) { return !isZeroInteger(v); }) ||
      !slice || !isContiguousSlice(slice))
    return Value();
  Location loc = read.getLoc();
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, source.getRank()));
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, read.getBase(), ArrayRef<ReassociationIndices>{all});
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  return vector::TransferReadOp::create(
      rewriter, loc,
      VectorType::get({type.getNumElements()}, type.getElementType()), flat,
      ValueRange{zero}, read.getPadding(), ArrayRef<bool>{true});
}

/// `v` without the arith.extf from bf16 that produced it, or null when it is
/// neither that nor bf16 itself.
static Value getBf16Source(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  auto type = dyn_cast<VectorType>(v.getType());
  return type && type.getElementType().isBF16() ? v : Value();
}

/// A register block's K step on bf16 pairs, `vector.contract` of an
/// M x 1 x 2 by a 1 x N x 2 block (the pair reduced) into M x N f32, as
/// AVX512-BF16 dot products: for each row, the row's pair broadcast to
/// every lane against `lanes` pairs of the RHS per `vdpbf16ps`.
struct PairContractToDotBF16 : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    Value lhs = getBf16Source(op.getLhs()), rhs = getBf16Source(op.getRhs());
    if (!accType || accType.getRank() != 2 || accType.isScalable() ||
        !accType.getElementType().isF32() || !lhs || !rhs ||
        op.getKind() != vector::CombiningKind::ADD)
      return rewriter.notifyMatchFailure(op, "not a bf16 x bf16 -> f32 add");
    SmallVector<int64_t> bounds;
    op.getIterationBounds(bounds);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // The result is (m, n) in that order; one reduced dimension has size 2
    // (the pair) and the others size 1.
    if (maps[2].getNumResults() != 2 || !maps[2].isProjectedPermutation())
      return rewriter.notifyMatchFailure(op, "accumulator is not (m, n)");
    unsigned m = maps[2].getDimPosition(0), n = maps[2].getDimPosition(1);
    std::optional<unsigned> pair;
    for (unsigned d = 0; d < bounds.size(); ++d) {
      if (d == m || d == n || bounds[d] == 1)
        continue;
      if (bounds[d] != 2 || pair)
        return rewriter.notifyMatchFailure(op, "reduces more than a pair");
      pair = d;
    }
    // Each input's non-unit dimensions, in order: (m, pair) and (n, pair),
    // so that a shape_cast flattens them row-major as the dot wants.
    auto nonUnitDims = [&](AffineMap map) {
      SmallVector<unsigned> dims;
      for (AffineExpr e : map.getResults())
        if (auto d = dyn_cast<AffineDimExpr>(e);
            d && bounds[d.getPosition()] != 1)
          dims.push_back(d.getPosition());
      return dims;
    };
    int64_t rows = bounds[m], columns = bounds[n];
    auto withPair = [&](unsigned d) {
      SmallVector<unsigned> dims;
      if (bounds[d] != 1)
        dims.push_back(d);
      dims.push_back(*pair);
      return dims;
    };
    if (!pair || !maps[0].isProjectedPermutation() ||
        !maps[1].isProjectedPermutation() ||
        nonUnitDims(maps[0]) != withPair(m) ||
        nonUnitDims(maps[1]) != withPair(n))
      return rewriter.notifyMatchFailure(op, "not an M x 2 by N x 2 block");
    int64_t lanes = columns % 16 == 0 ? 16 : columns % 8 == 0 ? 8 : 4;
    if (columns % lanes != 0)
      return rewriter.notifyMatchFailure(op, "N is not whole vectors");

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type(), i32 = rewriter.getI32Type();
    Value lhsRows = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({rows, 2}, bf16), lhs);
    Value rhsFlat;
    if (auto read = rhs.getDefiningOp<vector::TransferReadOp>())
      rhsFlat = createFlatRead(rewriter, read);
    if (!rhsFlat)
      rhsFlat = vector::ShapeCastOp::create(
          rewriter, loc, VectorType::get({columns * 2}, bf16), rhs);
    Value result = op.getAcc();
    for (int64_t r = 0; r < rows; ++r) {
      // The row's pair as one i32, broadcast: (q0, q1) in every lane.
      Value pairBits = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({1}, i32),
          vector::ExtractOp::create(rewriter, loc, lhsRows, r));
      Value broadcast = vector::BroadcastOp::create(
          rewriter, loc, VectorType::get({lanes}, i32),
          vector::ExtractOp::create(rewriter, loc, pairBits, 0));
      Value lhsPairs = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({lanes * 2}, bf16), broadcast);
      Value row = vector::ExtractOp::create(rewriter, loc, result, r);
      for (int64_t c = 0; c < columns; c += lanes) {
        Value rhsPairs = vector::ExtractStridedSliceOp::create(
            rewriter, loc, rhsFlat, ArrayRef<int64_t>{2 * c},
            ArrayRef<int64_t>{2 * lanes}, ArrayRef<int64_t>{1});
        Value acc = vector::ExtractStridedSliceOp::create(
            rewriter, loc, row, ArrayRef<int64_t>{c}, ArrayRef<int64_t>{lanes},
            ArrayRef<int64_t>{1});
        Value dot = x86vector::DotBF16Op::create(rewriter, loc, acc, lhsPairs,
                                                 rhsPairs);
        row = vector::InsertStridedSliceOp::create(rewriter, loc, dot, row,
                                                   ArrayRef<int64_t>{c},
                                                   ArrayRef<int64_t>{1});
      }
      result = vector::InsertOp::create(rewriter, loc, row, result, r);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A masked float reduction (a partial row) as an unmasked one over the row
/// with the masked-off lanes replaced by the reduction's identity. LLVM
/// expands the vector-predicated reduction a masked one becomes into a
/// scalar chain on x86; a plain one becomes a shuffle tree.
struct MaskedReductionToSelect : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto reduction =
        dyn_cast_or_null<vector::ReductionOp>(mask.getMaskableOp());
    if (!reduction || mask.hasPassthru())
      return rewriter.notifyMatchFailure(mask, "not a masked reduction");
    VectorType type = reduction.getSourceVectorType();
    auto element = dyn_cast<FloatType>(type.getElementType());
    if (!element)
      return rewriter.notifyMatchFailure(mask, "not a float reduction");
    double inf = std::numeric_limits<double>::infinity(), identity;
    switch (reduction.getKind()) {
    case vector::CombiningKind::ADD:
      identity = 0.0;
      break;
    case vector::CombiningKind::MUL:
      identity = 1.0;
      break;
    case vector::CombiningKind::MAXNUMF:
    case vector::CombiningKind::MAXIMUMF:
      identity = -inf;
      break;
    case vector::CombiningKind::MINNUMF:
    case vector::CombiningKind::MINIMUMF:
      identity = inf;
      break;
    default:
      return rewriter.notifyMatchFailure(mask, "no float identity");
    }
    Location loc = mask.getLoc();
    Value fill = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(type, rewriter.getFloatAttr(element, identity)));
    Value row = arith::SelectOp::create(rewriter, loc, mask.getMask(),
                                        reduction.getVector(), fill);
    rewriter.replaceOpWithNewOp<vector::ReductionOp>(mask, reduction.getKind(),
                                                     row, reduction.getAcc(),
                                                     reduction.getFastmath());
    return success();
  }
};

/// A min/max reduction of a 1-D vector as the elementwise min/max of its
/// halves, reduced: a tree of vector ops. LLVM expands a NaN-aware float
/// min/max reduction (`llvm.vector.reduce.fmaximum`, and `fmax` without
/// `nnan`) into a scalar chain on x86, a compare and a blend per element:
/// the row maximum of a 64-key score row took an eighth of a D = 64
/// attention step. Min and max are exact in any order, NaN included.
struct HalveMinMaxReduction : OpRewritePattern<vector::ReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ReductionOp op,
                                PatternRewriter &rewriter) const override {
    vector::CombiningKind kind = op.getKind();
    if (kind != vector::CombiningKind::MAXIMUMF &&
        kind != vector::CombiningKind::MINIMUMF &&
        kind != vector::CombiningKind::MAXNUMF &&
        kind != vector::CombiningKind::MINNUMF)
      return rewriter.notifyMatchFailure(op, "not a float min/max");
    VectorType type = op.getSourceVectorType();
    int64_t size = type.getNumElements();
    if (type.getRank() != 1 || type.isScalable() || size < 2 || size % 2 ||
        isa<vector::MaskOp>(op->getParentOp()))
      return rewriter.notifyMatchFailure(op, "not an even 1-D vector");
    Location loc = op.getLoc();
    int64_t half = size / 2;
    auto slice = [&](int64_t offset) {
      return vector::ExtractStridedSliceOp::create(
          rewriter, loc, op.getVector(), ArrayRef<int64_t>{offset},
          ArrayRef<int64_t>{half}, ArrayRef<int64_t>{1});
    };
    Value folded =
        vector::makeArithReduction(rewriter, loc, kind, slice(0), slice(half));
    rewriter.replaceOpWithNewOp<vector::ReductionOp>(
        op, kind, folded, op.getAcc(), op.getFastmath());
    return success();
  }
};

/// Bound on the rewrites of step 3 (see there).
static constexpr int64_t kMaxVectorRewrites = 1'000'000;

} // namespace

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
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    patterns.add<UnitKContractToOuterProduct, UnitKRowContractToFma,
                 ExtendContractOperands>(root->getContext());
    if (options.bf16Dot)
      patterns.add<PairContractToDotBF16>(root->getContext(), /*benefit=*/2);
    // The vectoriser widens narrower operands (bf16 pairs; bf16/f16 tiles
    // a product reads in their own type) after broadcasting and
    // transposing them into the iteration space; moving the extf before
    // them lets the contraction patterns fold both into its maps.
    vector::populateSinkVectorOpsPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    // Transposed blocks (tileTransposeIntoBlocks) as shuffles.
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::Shuffle1D);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    patterns.add<MaskedReductionToSelect, HalveMinMaxReduction>(
        root->getContext());
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
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
