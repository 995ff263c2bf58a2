//===- RegisterBlocks.cpp - contractions in register blocks ---------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Stage 1 of attn-vectorize-tiles (VectorizeTiles.h). LLVM's loop
// vectoriser turns a scalar matmul loop nest into one vector FMA per load and
// store of the accumulator, which caps it at a fraction of the FMA peak; each
// contraction gets the classic register-blocked micro-kernel instead: an
// M x N block of the result lives in vector registers for the whole K loop.
//
//===----------------------------------------------------------------------===//

#include "VectorizeTiles.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

using namespace mlir;
using namespace mlir::attn::cpu;

/// The contraction dimensions of `op` if it is a contraction on tensors this
/// pass blocks: any batch dimensions, one or more M, one or more N, one K
/// (and maybe a pair). `n` is reordered so that its last entry is the N
/// dimension innermost in the result (the one vectorised); the others are
/// blocked at 1, like batch dimensions (a sequence projection E[k, S] x
/// K[B, H, S, D] has B, H and D as N dimensions).
FailureOr<BlockableDims> attn::cpu::getBlockableDims(linalg::LinalgOp op) {
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
FailureOr<scf::SCFTilingResult>
attn::cpu::tileInPlace(RewriterBase &rewriter, linalg::LinalgOp op,
                       ArrayRef<OpFoldResult> sizes,
                       ArrayRef<int64_t> interchange) {
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
void attn::cpu::splitIntoPowerOfTwoColumns(RewriterBase &rewriter,
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
LogicalResult attn::cpu::tileIntoBlocks(RewriterBase &rewriter,
                                        linalg::LinalgOp op, int64_t mBlock,
                                        int64_t nBlock, int64_t maxMBlock,
                                        int64_t lanes) {
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
