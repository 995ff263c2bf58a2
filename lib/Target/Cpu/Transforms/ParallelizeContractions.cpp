//===- ParallelizeContractions.cpp - row blocks of contractions in forall -===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPARALLELIZECONTRACTIONS
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// Producers a row block computes its own slice of: the fill or broadcast
/// bias it starts from, and, with `relayouts`, layout changes of its
/// operands (the sequence-first input made batch-first). Serial and whole
/// outside the parallel loop, they were one pass over memory each on one
/// core. Not a producer every row block reads whole (a weight packed on
/// every call): each block would compute all of it again.
static std::optional<scf::SCFTileAndFuseOptions::ControlFnResult>
fuseIntoRowBlocks(tensor::ExtractSliceOp slice, OpResult producer,
                  bool relayouts) {
  Operation *op = producer.getOwner();
  if (!isa<linalg::FillOp, linalg::BroadcastOp>(op) &&
      !(relayouts && isa<linalg::TransposeOp>(op)))
    return std::nullopt;
  auto type = cast<RankedTensorType>(producer.getType());
  bool whole = type.hasStaticShape() &&
               llvm::all_of(slice.getMixedOffsets(), isZeroInteger) &&
               slice.getStaticSizes() == type.getShape();
  if (whole)
    return std::nullopt;
  return scf::SCFTileAndFuseOptions::ControlFnResult{};
}

/// Options tiling an op into an `scf.forall` of `sizes`.
static scf::SCFTilingOptions forallTiling(ArrayRef<OpFoldResult> sizes) {
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  return options;
}

/// Replaces `op` by an `scf.forall` over blocks of `sizes` that also
/// compute the producers fuseIntoRowBlocks picks for their part (operand
/// transposes with `relayouts`); the tiling's result (its blocks' ops), or
/// failure with `op` untouched.
static FailureOr<scf::SCFTileAndFuseResult>
distributeWithProducers(RewriterBase &rewriter, TilingInterface op,
                        ArrayRef<OpFoldResult> sizes, bool relayouts = true) {
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(forallTiling(sizes));
  options.setFusionControlFn(
      [relayouts](tensor::ExtractSliceOp slice, OpResult producer, bool) {
        return fuseIntoRowBlocks(slice, producer, relayouts);
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
  if (failed(tiled))
    return failure();
  for (OpResult result : op->getResults())
    if (Value replacement = tiled->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  rewriter.eraseOp(op);
  // A fused producer's whole result is still sliced by the blocks (the
  // slice fusion replaced, now unused): without those, one read by nothing
  // else goes, instead of being computed whole as well (distributeRelayouts
  // would give it a parallel loop of its own).
  for (Operation *producer : tiled->fusedProducers) {
    for (Operation *user : llvm::make_early_inc_range(producer->getUsers()))
      if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
        rewriter.eraseOp(user);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
  }
  return tiled;
}

/// Whether `use` is an operand every row block of its contraction reads
/// whole: one indexed by none of the M dimensions the blocks split (a
/// weight).
static bool isReadWholeByRowBlocks(OpOperand &use) {
  auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!op || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  AffineMap map = op.getMatchingIndexingMap(&use);
  return llvm::none_of(dims->m,
                       [&](unsigned m) { return map.isFunctionOfDim(m); });
}

/// Parallel iterations of a distributed operand transpose: enough for
/// the threads of a CPU to share, few enough to amortise each.
static constexpr int64_t kRelayoutBlocks = 16;

/// Transposes of fewer elements stay serial: a parallel loop costs more.
static constexpr int64_t kMinRelayout = 16384;

/// Fewer row blocks than this (a product of 320 rows has 5) leave threads
/// idle at the end (5 blocks on 2 threads take as long as 6): the column
/// blocks are then parallel iterations too.
static constexpr int64_t kMinRowBlocks = 16;

/// The loops of the N dimensions `op`'s column blocks split, each with the
/// block's size in its units: the dimension innermost in the result, or,
/// when that is the column within a weight panel (attn-pack-weights:
/// [.., N / panel, panel]), the N dimensions before it in the result,
/// innermost first (the panel index; of a product writing
/// [parts, N, H, L, D / panel, panel], the panels of a head, the heads, the
/// parts), `columns / panel` panels at a time: the first of them a block
/// does not cover whole is split, the ones outside it taken one at a time.
static SmallVector<std::pair<unsigned, int64_t>>
getColumnBlocks(linalg::LinalgOp op, const linalg::ContractionDimensions &dims,
                int64_t columns) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> resultDims;
  for (AffineExpr expr : resultMap.getResults())
    resultDims.push_back(cast<AffineDimExpr>(expr).getPosition());
  unsigned n = resultDims.back();
  if (ShapedType::isDynamic(bounds[n]) || bounds[n] > columns)
    return {{n, columns}};
  SmallVector<std::pair<unsigned, int64_t>> blocks;
  // Units of the dimensions after `dim` a block covers (1 once one is
  // split: the ones outside it are then blocked one at a time).
  int64_t units = std::max<int64_t>(1, columns / bounds[n]);
  for (unsigned dim : llvm::reverse(ArrayRef(resultDims).drop_back())) {
    if (!llvm::is_contained(dims.n, dim))
      continue;
    if (ShapedType::isDynamic(bounds[dim]) || bounds[dim] > units) {
      blocks.push_back({dim, units});
      units = 1;
    } else {
      units = std::max<int64_t>(1, units / bounds[dim]);
    }
  }
  return blocks;
}

/// Bytes of one cache line: copied rows of a left operand whose rows
/// share L1 sets are this much longer than their data (see
/// padConflictingRows).
static constexpr int64_t kCacheLineBytes = 64;

/// Columns of N a product must have for a copy of its left operand to pay:
/// the copy reads and writes each element once, the product uses it once
/// per column.
static constexpr int64_t kMinPaddedColumns = 128;

/// The distance in elements between consecutive rows of `value`'s second
/// innermost dimension in the buffer it will read from: a slice's source's
/// row (times the slice's stride), else its own; nullopt where not static.
static std::optional<int64_t> getRowStride(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() < 2)
    return std::nullopt;
  auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return ShapedType::isDynamic(type.getShape().back())
               ? std::nullopt
               : std::optional<int64_t>(type.getShape().back());
  // The source dimension the slice's second innermost one is: dropped unit
  // dimensions (rank-reducing slices) are skipped.
  RankedTensorType source = slice.getSourceType();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  int64_t resultDim = type.getRank() - 2, dim = -1;
  for (int64_t d = 0, seen = -1; d < source.getRank(); ++d)
    if (!dropped.test(d) && ++seen == resultDim) {
      dim = d;
      break;
    }
  if (dim < 0)
    return std::nullopt;
  int64_t stride = 1;
  for (int64_t inner : source.getShape().drop_front(dim + 1)) {
    if (ShapedType::isDynamic(inner))
      return std::nullopt;
    stride *= inner;
  }
  std::optional<int64_t> step =
      getConstantIntValue(slice.getMixedStrides()[dim]);
  if (!step)
    return std::nullopt;
  return stride * *step;
}

struct AttnParallelizeContractionsPass
    : attn::impl::AttnParallelizeContractionsBase<
          AttnParallelizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (rows <= 0 || columns < 0 || depth < 0) {
      getOperation()->emitError()
          << "attn-parallelize-contractions: rows must be positive and "
             "columns and depth non-negative, got rows = "
          << static_cast<int64_t>(rows)
          << ", columns = " << static_cast<int64_t>(columns)
          << " and depth = " << static_cast<int64_t>(depth);
      return signalPassFailure();
    }
    if (failed(attn::verifyOptionAtLeast(getOperation(), getArgument(),
                                         "max-rows", maxRows, 0)) ||
        failed(attn::verifyOptionAtLeast(getOperation(), getArgument(),
                                         "conflict-stride", conflictStride, 0)))
      return signalPassFailure();
    if (failed(distributeRelayouts(/*leftovers=*/false)))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> contractions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          linalg::isaContractionOpInterface(op) &&
          !op->getParentOfType<scf::ForallOp>())
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : contractions) {
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      if (failed(dims) || dims->m.empty())
        continue;
      // A product with an empty loop (a sequence of no keys) has nothing
      // to distribute, and the block sizes below divide by the extents.
      if (llvm::is_contained(op.getStaticLoopRanges(), 0))
        continue;
      // Batch and outer M dimensions one at a time (but see below), the
      // innermost M in blocks, the rest whole.
      SmallVector<OpFoldResult> sizes(op.getNumLoops(),
                                      rewriter.getIndexAttr(0));
      for (unsigned batch : dims->batch)
        sizes[batch] = rewriter.getIndexAttr(1);
      for (unsigned m : dims->m)
        sizes[m] = rewriter.getIndexAttr(1);
      // Fewer rows than a block: all of them, a static size (not
      // min(rows, n - i)), so that register blocks can divide it.
      SmallVector<int64_t> bounds = op.getStaticLoopRanges();
      int64_t innerRows = bounds[dims->m.back()];
      sizes[dims->m.back()] =
          rewriter.getIndexAttr(ShapedType::isDynamic(innerRows)
                                    ? rows
                                    : std::min<int64_t>(rows, innerRows));
      // Short rows (a projection of 32 sequences of 10 tokens): as many of
      // the next M dimension per block as make about `rows` rows, so that
      // each weight block read into the cache serves them all (one block of
      // 10 rows per weight pass streamed the weight from memory 32 times).
      if (dims->m.size() > 1 && !ShapedType::isDynamic(innerRows) &&
          innerRows < rows) {
        unsigned outer = dims->m[dims->m.size() - 2];
        int64_t count = std::max<int64_t>(1, rows / innerRows);
        if (!ShapedType::isDynamic(bounds[outer]))
          count = std::min(count, bounds[outer]);
        sizes[outer] = rewriter.getIndexAttr(count);
      }
      // Long products: taller row blocks, up to maxRows, while the row and
      // column blocks still make kMinRowBlocks parallel iterations. Each
      // row block reads all of the weight, from the L3 once it outgrows
      // the L2: 64 rows of a 4096^3 product read 4 GiB of weight blocks
      // per call (on an Emerald Rapids its median call went from 629 to
      // 521 ms with the session-26 changes; benchmarks/RESULTS.md).
      auto withColumnBlocks = [&](SmallVector<OpFoldResult> blocks) {
        // A count only known at run time may be a few blocks too: one
        // sequence of 77 tokens is 2 row blocks, for 2 threads 64 and 13
        // rows (a shape-generic N1 L77 E768 layer took 3.5-3.8 ms, with
        // column blocks 2.5-2.8). Where there are many, the column blocks
        // measured within the noise of row blocks alone (shape-generic N8
        // L128, N4 L512, BERT-base; a 2048 x 1024 x 1024 product):
        // benchmarks/RESULTS.md, session 37.
        int64_t count = countBlocks(bounds, blocks);
        if (columns > 0 && (count < kMinRowBlocks || count == kUnknownBlocks))
          for (auto [n, size] : getColumnBlocks(op, *dims, columns))
            if (!ShapedType::isDynamic(bounds[n]) && bounds[n] > size)
              blocks[n] = rewriter.getIndexAttr(size);
        return blocks;
      };
      if (!ShapedType::isDynamic(innerRows))
        for (int64_t taller = rows * 2; taller <= maxRows; taller *= 2) {
          SmallVector<OpFoldResult> candidate = sizes;
          candidate[dims->m.back()] = rewriter.getIndexAttr(taller);
          if (taller > innerRows ||
              countBlocks(bounds, withColumnBlocks(candidate)) < kMinRowBlocks)
            break;
          sizes = candidate;
        }
      sizes = withColumnBlocks(sizes);
      // The blocks keep the marker (tiling clones the op with its
      // attributes) for attn-vectorize-tiles' register blocks.
      op->setAttr(attn::kCacheBlockedAttr, rewriter.getUnitAttr());
      FailureOr<bool> paddedRelayout = padConflictingRows(rewriter, op, *dims);
      if (failed(paddedRelayout))
        return signalPassFailure();
      // A row block computes its rows of an operand transpose (a
      // sequence-first input) itself, unless the parallel loop also splits
      // the columns (each of a row's column blocks would transpose the rows
      // again: 12 times at N4 L256 E1024 H16) or the transpose writes rows
      // padded against L1 set conflicts: then it is a parallel loop of its
      // own (distributeRelayouts), one pass over the operand.
      bool columnBlocked = llvm::any_of(
          dims->n, [&](unsigned n) { return !isZeroInteger(sizes[n]); });
      FailureOr<scf::SCFTileAndFuseResult> tiled = distributeWithProducers(
          rewriter, cast<TilingInterface>(op.getOperation()), sizes,
          /*relayouts=*/!columnBlocked && !*paddedRelayout);
      if (failed(tiled)) {
        op.emitError("attn-parallelize-contractions: cannot distribute this "
                     "contraction");
        return signalPassFailure();
      }
      if (failed(blockForCache(
              rewriter, cast<linalg::LinalgOp>(tiled->tiledAndFusedOps.front()),
              *dims)))
        return signalPassFailure();
    }
    if (failed(distributeRelayouts(/*leftovers=*/true)) ||
        failed(distributeReductions()))
      return signalPassFailure();
  }

  /// What countBlocks returns where a tiled bound is dynamic.
  static constexpr int64_t kUnknownBlocks = std::numeric_limits<int64_t>::max();

  /// The parallel iterations of loops of `bounds` tiled by `sizes`
  /// (kUnknownBlocks where a tiled bound is dynamic).
  static int64_t countBlocks(ArrayRef<int64_t> bounds,
                             ArrayRef<OpFoldResult> sizes) {
    int64_t blocks = 1;
    for (auto [bound, size] : llvm::zip(bounds, sizes)) {
      int64_t tile = *getConstantIntValue(size);
      if (tile == 0)
        continue;
      if (ShapedType::isDynamic(bound))
        return kUnknownBlocks;
      blocks *= llvm::divideCeil(bound, tile);
    }
    return blocks;
  }

  /// Transposes outside parallel loops as `scf.forall`s over about 16
  /// blocks of their leading dimensions (see getRelayoutBlocks): first
  /// those that make an operand every row block reads whole (a weight
  /// packed into panels on every call: row blocks do not compute them, each
  /// would need all of it; a serial pass over the weight was up to a fifth
  /// of a small product's time), after the contractions (`leftovers`) any
  /// other, such as the tiled attention's packing of K^T (transposes of a
  /// contraction's rows, such as a sequence-first input, are fused into the
  /// row blocks instead).
  LogicalResult distributeRelayouts(bool leftovers) {
    SmallVector<linalg::TransposeOp> relayouts;
    getOperation()->walk([&](linalg::TransposeOp op) {
      auto type = cast<RankedTensorType>(op.getResult()[0].getType());
      if (!op.hasPureTensorSemantics() ||
          op->getParentOfType<scf::ForallOp>() ||
          (type.hasStaticShape() && type.getNumElements() < kMinRelayout))
        return;
      if (leftovers ||
          llvm::any_of(op->getResult(0).getUses(), isReadWholeByRowBlocks))
        relayouts.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : relayouts) {
      auto type = cast<RankedTensorType>(op.getResult()[0].getType());
      std::optional<SmallVector<OpFoldResult>> sizes =
          getRelayoutBlocks(rewriter, type);
      if (!sizes)
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()),
                            forallTiling(*sizes));
      if (failed(tiled))
        return op.emitError("attn-parallelize-contractions: cannot "
                            "distribute this transpose");
      rewriter.replaceOp(op, tiled->replacements);
    }
    return success();
  }

  /// Reductions outside parallel loops (multi-head attention's average of
  /// the weights over the heads, [N, H, L, S] -> [N, L, S]: a serial pass
  /// over every head's probabilities was a tenth of BERT-base's call on 2
  /// threads) as `scf.forall`s over about 16 blocks of their result's
  /// leading dimensions, each block filling and reducing its part; small ones
  /// (fewer than 16384 result elements) stay serial.
  LogicalResult distributeReductions() {
    SmallVector<linalg::ReduceOp> reductions;
    getOperation()->walk([&](linalg::ReduceOp op) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      if (op.hasPureTensorSemantics() && op->getNumResults() == 1 &&
          !op->getParentOfType<scf::ForallOp>() &&
          !(type.hasStaticShape() && type.getNumElements() < kMinRelayout))
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::ReduceOp op : reductions) {
      // The result's blocks, placed on the loops they index; the reduced
      // loops stay whole.
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      std::optional<SmallVector<OpFoldResult>> resultSizes =
          getRelayoutBlocks(rewriter, type);
      if (!resultSizes)
        continue;
      SmallVector<OpFoldResult> sizes(op.getNumLoops(),
                                      rewriter.getIndexAttr(0));
      auto next = resultSizes->begin();
      for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
        if (!llvm::is_contained(op.getDimensions(), loop))
          sizes[loop] = *next++;
      // Each block fills its own part of the init.
      if (failed(distributeWithProducers(
              rewriter, cast<TilingInterface>(op.getOperation()), sizes)))
        return op.emitError("attn-parallelize-contractions: cannot "
                            "distribute this reduction");
    }
    return success();
  }

  /// Tile sizes giving about kRelayoutBlocks blocks of a transpose's result
  /// `type`: leading dimensions one at a time while that gives fewer, then
  /// the next split to reach them; the innermost stays whole (rows are
  /// copied whole), and a dynamic dimension counts as enough. Nullopt when
  /// no dimension splits (nothing to distribute).
  static std::optional<SmallVector<OpFoldResult>>
  getRelayoutBlocks(OpBuilder &b, RankedTensorType type) {
    SmallVector<OpFoldResult> sizes(type.getRank(), b.getIndexAttr(0));
    bool split = false;
    int64_t blocks = 1;
    for (int64_t dim = 0; dim + 1 < type.getRank() && blocks < kRelayoutBlocks;
         ++dim) {
      int64_t extent = type.getDimSize(dim);
      if (ShapedType::isDynamic(extent)) {
        sizes[dim] = b.getIndexAttr(1);
        split = true;
        break;
      }
      if (extent == 0) // no element: nothing to distribute
        return std::nullopt;
      if (extent == 1)
        continue;
      int64_t parts =
          std::min<int64_t>(extent, llvm::divideCeil(kRelayoutBlocks, blocks));
      sizes[dim] = b.getIndexAttr(llvm::divideCeil(extent, parts));
      split = true;
      blocks *= parts;
    }
    if (!split)
      return std::nullopt;
    return sizes;
  }

  /// Copies the left operand of the contraction `op` (the input indexed by
  /// M and K, a K innermost) into a buffer whose rows are one cache line
  /// longer, when their stride is a multiple of `conflictStride` bytes, and
  /// makes `op` read the copy: a register block broadcasts from several
  /// rows at each K step, and rows that far apart fall in the same sets of
  /// the L1, more of them than a set has ways (12 rows of a product with
  /// K = 1024 f32 are 4 KiB apart: all in one set; the target model
  /// derives the stride). The copy is one pass over the operand, in a
  /// parallel loop of its own like a weight's transpose: made by each row
  /// block instead, it was made again for each of its column blocks. An
  /// operand transposed for `op` alone (a sequence-first input) is not
  /// copied: the transpose writes the padded rows itself, and is then not
  /// for the row blocks to compute (true is returned). Not for a product of
  /// fewer than kMinPaddedColumns columns.
  FailureOr<bool>
  padConflictingRows(RewriterBase &rewriter, linalg::LinalgOp op,
                     const linalg::ContractionDimensions &dims) {
    if (conflictStride <= 0)
      return false;
    SmallVector<int64_t> bounds = op.getStaticLoopRanges();
    int64_t columns = 1;
    for (unsigned n : dims.n)
      if (!ShapedType::isDynamic(bounds[n]))
        columns *= bounds[n];
    if (columns < kMinPaddedColumns &&
        llvm::none_of(
            dims.n,
            [&](unsigned n) { return ShapedType::isDynamic(bounds[n]); }))
      return false;
    bool paddedRelayout = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      AffineMap map = op.getMatchingIndexingMap(input);
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || map.getNumResults() < 2 ||
          isa_and_present<linalg::FillOp, linalg::BroadcastOp>(
              value.getDefiningOp()))
        continue;
      auto transpose = value.getDefiningOp<linalg::TransposeOp>();
      if (transpose &&
          (!transpose.hasPureTensorSemantics() || !value.hasOneUse()))
        continue;
      auto inner = dyn_cast<AffineDimExpr>(map.getResults().back());
      if (!type.getElementType().isIntOrFloat() ||
          type.getElementTypeBitWidth() % 8 != 0 || !inner ||
          !llvm::is_contained(dims.k, inner.getPosition()) ||
          llvm::none_of(dims.m,
                        [&](unsigned m) { return map.isFunctionOfDim(m); }) ||
          llvm::any_of(dims.n,
                       [&](unsigned n) { return map.isFunctionOfDim(n); }) ||
          ShapedType::isDynamic(type.getShape().back()))
        continue;
      int64_t elementBytes = type.getElementTypeBitWidth() / 8;
      std::optional<int64_t> stride = getRowStride(value);
      if (!stride || (*stride * elementBytes) % conflictStride != 0 ||
          kCacheLineBytes % elementBytes != 0)
        continue;
      // The copy's parallel blocks (a transpose gets its own later).
      std::optional<SmallVector<OpFoldResult>> sizes =
          getRelayoutBlocks(rewriter, type);
      if (!transpose && !sizes)
        continue;
      Location loc = value.getLoc();
      rewriter.setInsertionPoint(transpose ? transpose.getOperation()
                                           : op.getOperation());
      // Sizes from a value defined before the insertion point: a
      // transpose's init, not its result.
      Value shape = transpose ? transpose.getInit() : value;
      SmallVector<int64_t> padded(type.getShape());
      padded.back() += kCacheLineBytes / elementBytes;
      SmallVector<Value> dynamicSizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamicSizes.push_back(
              tensor::DimOp::create(rewriter, loc, shape, d));
      Value buffer = bufferization::AllocTensorOp::create(
          rewriter, loc, type.clone(padded), dynamicSizes);
      SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> ones(type.getRank(), rewriter.getIndexAttr(1));
      Value rows = tensor::ExtractSliceOp::create(
          rewriter, loc, buffer, zeros,
          tensor::getMixedSizes(rewriter, loc, shape), ones);
      if (transpose) {
        rewriter.modifyOpInPlace(
            transpose, [&] { transpose.getInitMutable().assign(rows); });
        paddedRelayout = true;
        continue;
      }
      auto copy = linalg::CopyOp::create(rewriter, loc, value, rows);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(copy.getOperation()),
          forallTiling(*sizes));
      if (failed(tiled))
        return copy.emitError("attn-parallelize-contractions: cannot "
                              "distribute this copy");
      rewriter.replaceOp(copy, tiled->replacements);
      rewriter.modifyOpInPlace(
          op, [&] { input->set(tiled->replacements.front()); });
    }
    return paddedRelayout;
  }

  /// Loops over `columns` x `depth` blocks of the (innermost) N and K
  /// dimensions of the row block `op`, N outer (see the pass description);
  /// a dimension whose static size is at most its block stays whole.
  LogicalResult blockForCache(RewriterBase &rewriter, linalg::LinalgOp op,
                              const linalg::ContractionDimensions &dims) {
    SmallVector<int64_t> bounds = op.getStaticLoopRanges();
    SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
    SmallVector<int64_t> order;
    auto block = [&](unsigned dim, int64_t size) {
      if (size == 0 ||
          (!ShapedType::isDynamic(bounds[dim]) && bounds[dim] <= size))
        return;
      sizes[dim] = rewriter.getIndexAttr(size);
      order.push_back(dim);
    };
    // N (unless the parallel loop blocked it already: then it is no
    // longer than its block), then K.
    if (columns)
      for (auto [n, size] : llvm::reverse(getColumnBlocks(op, dims, columns)))
        block(n, size);
    block(dims.k.back(), depth);
    if (order.empty())
      return success();
    // tileUsingSCF nests the loops in dimension order unless told; the N
    // loops (outer first), then K, whatever their positions: the blocked
    // dimensions' places in dimension order take them in that order.
    SmallVector<int64_t> interchange =
        llvm::to_vector(llvm::seq<int64_t>(0, op.getNumLoops()));
    SmallVector<int64_t> places(order);
    llvm::sort(places);
    for (auto [place, dim] : llvm::zip_equal(places, order))
      interchange[place] = dim;
    scf::SCFTilingOptions options;
    options.setTileSizes(sizes);
    options.setInterchange(interchange);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> blocked = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(blocked))
      return op.emitError("attn-parallelize-contractions: cannot block this "
                          "contraction for the cache");
    rewriter.replaceOp(op, blocked->replacements);
    return success();
  }
};

} // namespace
