//===- PrefetchStreams.cpp - prefetch the rows register blocks stream -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPREFETCHSTREAMS
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// The cache line of the CPUs the pipeline targets (x86-64; AArch64's
/// Neoverse cores): one prefetch per line a row covers.
constexpr int64_t kCacheLineBytes = 64;

/// A row `loop` reads each iteration: a contiguous 1-D vector of more than
/// one element (a broadcast operand is one) read from a memref whose
/// innermost stride is 1 (a strided layout), unmasked, along the innermost
/// dimension.
static bool isStreamedRow(vector::TransferReadOp read) {
  auto type = dyn_cast<MemRefType>(read.getBase().getType());
  VectorType vector = read.getVectorType();
  if (!type || vector.getRank() != 1 || vector.isScalable() ||
      vector.getNumElements() < 2 || read.getMask() ||
      !read.getPermutationMap().isMinorIdentity())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// `value + offset` (an index or integer), folded when `value` is a
/// constant.
static Value addConstant(RewriterBase &rewriter, Location loc, Value value,
                         int64_t offset) {
  Type type = value.getType();
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return arith::ConstantOp::create(
        rewriter, loc, rewriter.getIntegerAttr(type, *constant + offset));
  return arith::AddIOp::create(
      rewriter, loc, value,
      arith::ConstantOp::create(rewriter, loc,
                                rewriter.getIntegerAttr(type, offset)));
}

/// `value` with `loop`'s induction variable replaced as `mapping` says:
/// the pure ops of the loop body it is computed by are cloned at the
/// rewriter's insertion point (values from outside the loop stay). Fails
/// on a value the body computes with side effects, in a nested region or
/// from an iteration argument.
static FailureOr<Value> cloneShifted(RewriterBase &rewriter, scf::ForOp loop,
                                     Value value, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  if (!loop->isAncestor(value.getParentRegion()->getParentOp()))
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || !isPure(def) ||
      def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(cloneShifted(rewriter, loop, operand, mapping)))
      return failure();
  rewriter.clone(*def, mapping);
  return mapping.lookup(value);
}

/// Whether `value` changes with `loop`'s induction variable: it is the
/// variable or computed from it in the loop body.
static bool dependsOnInductionVar(scf::ForOp loop, Value value) {
  if (value == loop.getInductionVar())
    return true;
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == loop.getBody() &&
         llvm::any_of(def->getOperands(), [&](Value operand) {
           return dependsOnInductionVar(loop, operand);
         });
}

/// The induction variable of the iteration of `loop` that reads `rowBytes`
/// rows `distance` bytes ahead (whole iterations), computed at the start of
/// its body.
static Value getInductionVarAhead(RewriterBase &rewriter, scf::ForOp loop,
                                  int64_t rowBytes, int64_t distance) {
  int64_t iterations = llvm::divideCeil(distance, rowBytes);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(loop.getBody());
  Location loc = loop.getLoc();
  Value step = loop.getStep();
  if (std::optional<int64_t> constant = getConstantIntValue(step))
    return addConstant(rewriter, loc, loop.getInductionVar(),
                       *constant * iterations);
  Value count = arith::ConstantOp::create(
      rewriter, loc, rewriter.getIntegerAttr(step.getType(), iterations));
  return arith::AddIOp::create(
      rewriter, loc, loop.getInductionVar(),
      arith::MulIOp::create(rewriter, loc, step, count));
}

/// Prefetches the row `read` reads `distance` bytes of rows ahead in
/// `loop`, one prefetch per cache line, from the first memref of the
/// subview chain `read` reads through that is defined outside the loop, at
/// the read's indices in it with the induction variable advanced. Reads
/// that do not change with the induction variable get none. The prefetches
/// come last in the loop body: LLVM schedules no load across one, and
/// between the loads of a step they made AArch64's 12 x 8 blocks load all
/// 12 broadcasts first (38 live vector registers of 32: spills).
static void prefetchAhead(RewriterBase &rewriter, scf::ForOp loop,
                          vector::TransferReadOp read, int64_t distance) {
  // The subviews in the loop between the read and that memref.
  SmallVector<memref::SubViewOp> views;
  Value base = read.getBase();
  while (auto view = base.getDefiningOp<memref::SubViewOp>()) {
    if (view->getBlock() != loop.getBody())
      break;
    views.push_back(view);
    base = view.getSource();
  }
  if (loop->isAncestor(base.getParentRegion()->getParentOp()))
    return;
  auto dependent = [&](Value value) {
    return dependsOnInductionVar(loop, value);
  };
  bool streams = llvm::any_of(read.getIndices(), dependent) ||
                 llvm::any_of(views, [&](memref::SubViewOp view) {
                   return llvm::any_of(view->getOperands(), dependent);
                 });
  if (!streams)
    return;
  VectorType vector = read.getVectorType();
  int64_t elementBytes = vector.getElementTypeBitWidth() / 8;
  int64_t rowBytes = vector.getNumElements() * elementBytes;
  IRMapping mapping;
  mapping.map(loop.getInductionVar(),
              getInductionVarAhead(rewriter, loop, rowBytes, distance));
  // The indices, and each subview's offsets and strides, of that
  // iteration, resolved through the chain.
  Location loc = read.getLoc();
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  auto shift = [&](ArrayRef<OpFoldResult> values)
      -> FailureOr<SmallVector<OpFoldResult>> {
    SmallVector<OpFoldResult> shifted;
    for (OpFoldResult value : values) {
      auto dynamic = dyn_cast<Value>(value);
      if (!dynamic) {
        shifted.push_back(value);
        continue;
      }
      FailureOr<Value> clone = cloneShifted(rewriter, loop, dynamic, mapping);
      if (failed(clone))
        return failure();
      shifted.push_back(*clone);
    }
    return shifted;
  };
  SmallVector<Value> indices;
  for (Value index : read.getIndices()) {
    FailureOr<Value> clone = cloneShifted(rewriter, loop, index, mapping);
    if (failed(clone))
      return;
    indices.push_back(*clone);
  }
  for (memref::SubViewOp view : views) {
    FailureOr<SmallVector<OpFoldResult>> offsets =
        shift(view.getMixedOffsets());
    FailureOr<SmallVector<OpFoldResult>> strides =
        shift(view.getMixedStrides());
    if (failed(offsets) || failed(strides))
      return;
    SmallVector<Value> resolved;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, loc, *offsets, *strides, view.getDroppedDims(), indices,
        resolved);
    indices = std::move(resolved);
  }
  // One prefetch per line of the row (innermost stride 1, isStreamedRow).
  int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
  int64_t lines = llvm::divideCeil(rowBytes, kCacheLineBytes);
  Value inner = indices.back();
  for (int64_t line = 0; line < lines; ++line) {
    if (line > 0)
      indices.back() = addConstant(rewriter, loc, inner, line * lineElements);
    memref::PrefetchOp::create(rewriter, loc, base, indices,
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

//===----------------------------------------------------------------------===//
// Key tiles
//===----------------------------------------------------------------------===//

/// Prefetches of a key tile one loop iteration may issue, spread over the
/// iterations of the loop nest that reads the tile; a tile that would need
/// more (a nest of few iterations, as in decoding) gets none rather than a
/// burst that stalls the loads of the register blocks.
constexpr int64_t kMaxTilePrefetchesPerIteration = 64;

/// Descends from a loop of a nest to the nested loop a tile's prefetches
/// may be spread over too only while an iteration would issue more than
/// this many.
constexpr int64_t kTilePrefetchesPerIteration = 16;

/// The tiles an iteration of a key-tile loop reads from buffers defined
/// outside it at offsets that change with its induction variable: the
/// static-shaped `memref.subview`s at the top of the body whose source is
/// defined outside the loop, innermost stride 1.
static SmallVector<memref::SubViewOp> getKeyTiles(scf::ForOp loop) {
  SmallVector<memref::SubViewOp> tiles;
  for (auto view : loop.getBody()->getOps<memref::SubViewOp>()) {
    MemRefType type = view.getType();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (loop->isAncestor(view.getSource().getParentRegion()->getParentOp()) ||
        !type.hasStaticShape() || type.getRank() == 0 ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 ||
        llvm::none_of(view->getOperands(), [&](Value operand) {
          return dependsOnInductionVar(loop, operand);
        }))
      continue;
    tiles.push_back(view);
  }
  return tiles;
}

/// The trip count of a loop whose bounds and step are all constants, if
/// positive (the iteration number prefetchNextTile computes needs the
/// constant lower bound and step too, which scf.for's own
/// getStaticTripCount does not promise).
static std::optional<int64_t> getConstantTripCount(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step <= 0 || *upper <= *lower)
    return std::nullopt;
  return llvm::divideCeil(*upper - *lower, *step);
}

/// Whether `value` is used in `op`, directly or through views.
static bool isUsedIn(Value value, Operation *op) {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    if (op->isAncestor(user))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    return view && view.getViewSource() == value &&
           isUsedIn(view->getResult(0), op);
  });
}

/// The loops of the nest reading `tile` that its prefetches are spread
/// over, outermost first: the first loop at the top of `keyLoop`'s body
/// that reads the tile, then while an iteration would issue more than
/// kTilePrefetchesPerIteration of `lines`, the one loop nested in the last
/// that reads it. Each has constant bounds and loops of its own (an
/// innermost loop is a register block's, which no prefetch should
/// lengthen). Empty when there is none.
static SmallVector<scf::ForOp>
getSpreadLoops(scf::ForOp keyLoop, memref::SubViewOp tile, int64_t lines) {
  SmallVector<scf::ForOp> nest;
  scf::ForOp next;
  for (Operation &op : *keyLoop.getBody()) {
    if (op.isBeforeInBlock(tile) || &op == tile.getOperation() ||
        !isUsedIn(tile.getResult(), &op))
      continue;
    next = dyn_cast<scf::ForOp>(op);
    break;
  }
  auto hasLoops = [](scf::ForOp loop) {
    return !loop.getBody()->getOps<scf::ForOp>().empty();
  };
  int64_t iterations = 1;
  while (next && hasLoops(next) && getConstantTripCount(next)) {
    nest.push_back(next);
    iterations *= *getConstantTripCount(next);
    if (llvm::divideCeil(lines, iterations) <= kTilePrefetchesPerIteration)
      break;
    SmallVector<scf::ForOp> inner;
    for (auto loop : next.getBody()->getOps<scf::ForOp>())
      if (isUsedIn(tile.getResult(), loop))
        inner.push_back(loop);
    next = inner.size() == 1 ? inner.front() : scf::ForOp();
  }
  return nest;
}

/// Prefetches into the L2 (locality 2) the tile `tile` reads in the next
/// iteration of `keyLoop`, spread evenly over the iterations of the loop
/// nest that reads the current one (getSpreadLoops): one prefetch per
/// 64-byte line of each row, the rows and lines of the next tile taken in
/// order, a share per iteration, at the end of the innermost spread loop's
/// body. The next tile is the subview with `keyLoop`'s induction variable
/// advanced by one step; in the last iteration it lies past the keys (a
/// hint, as for the rows).
static void prefetchNextTile(RewriterBase &rewriter, scf::ForOp keyLoop,
                             memref::SubViewOp tile, Value nextKeyStart) {
  MemRefType type = tile.getType();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  if (elementBytes == 0)
    return;
  int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
  int64_t linesPerRow = llvm::divideCeil(shape.back(), lineElements);
  int64_t rows = ShapedType::getNumElements(shape.drop_back());
  int64_t lines = rows * linesPerRow;
  SmallVector<scf::ForOp> nest = getSpreadLoops(keyLoop, tile, lines);
  if (nest.empty())
    return;
  int64_t iterations = 1;
  for (scf::ForOp loop : nest)
    iterations *= *getConstantTripCount(loop);
  int64_t perIteration = llvm::divideCeil(lines, iterations);
  if (perIteration > kMaxTilePrefetchesPerIteration)
    return;

  // The next tile's view, next to the current one's.
  IRMapping mapping;
  mapping.map(keyLoop.getInductionVar(), nextKeyStart);
  rewriter.setInsertionPointAfter(tile);
  for (Value operand : tile->getOperands())
    if (failed(cloneShifted(rewriter, keyLoop, operand, mapping)))
      return;
  Value next = rewriter.clone(*tile, mapping)->getResult(0);

  // The nest's iteration number n (row-major over the spread loops), and
  // line p = n * perIteration + u of the tile for u < perIteration: row
  // p floordiv linesPerRow (delinearised over the leading dimensions),
  // element (p mod linesPerRow) * lineElements of it.
  MLIRContext *context = rewriter.getContext();
  scf::ForOp innermost = nest.back();
  rewriter.setInsertionPoint(innermost.getBody()->getTerminator());
  Location loc = tile.getLoc();
  AffineExpr iteration = getAffineConstantExpr(0, context);
  SmallVector<Value> ivs;
  for (auto [position, loop] : llvm::enumerate(nest)) {
    int64_t lower = *getConstantIntValue(loop.getLowerBound());
    int64_t step = *getConstantIntValue(loop.getStep());
    iteration = iteration * *getConstantTripCount(loop) +
                (getAffineDimExpr(position, context) - lower).floorDiv(step);
    ivs.push_back(loop.getInductionVar());
  }
  // One value per distinct index (a row serves its lines).
  DenseMap<AffineExpr, Value> values;
  auto getIndex = [&](AffineExpr expr) {
    Value &value = values[expr];
    if (!value)
      value = getValueOrCreateConstantIndexOp(
          rewriter, loc,
          affine::makeComposedFoldedAffineApply(
              rewriter, loc, AffineMap::get(nest.size(), 0, expr),
              getAsOpFoldResult(ivs)));
    return value;
  };
  for (int64_t u = 0; u < perIteration; ++u) {
    // Where the shares are rounded up, lines past the last wrap around to
    // the tile's first (prefetched twice, inside the tile).
    AffineExpr line = iteration * perIteration + u;
    SmallVector<AffineExpr> exprs;
    AffineExpr row = line.floorDiv(linesPerRow);
    for (int64_t d = shape.size() - 2; d >= 0; --d) {
      exprs.push_back(
          d == 0 && iterations * perIteration == lines ? row : row % shape[d]);
      row = row.floorDiv(shape[d]);
    }
    std::reverse(exprs.begin(), exprs.end());
    exprs.push_back((line % linesPerRow) * lineElements);
    SmallVector<Value> indices = llvm::map_to_vector(exprs, getIndex);
    memref::PrefetchOp::create(rewriter, loc, next, indices,
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
}

struct AttnPrefetchStreamsPass
    : attn::impl::AttnPrefetchStreamsBase<AttnPrefetchStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(attn::verifyOptionAtLeast(getOperation(), getArgument(),
                                         "distance", distance, 0)))
      return signalPassFailure();
    SmallVector<scf::ForOp> loops, keyLoops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (loop->removeAttr(attn::kStreamLoopAttr) && distance > 0)
        loops.push_back(loop);
      if (loop->removeAttr(attn::kKeyTileLoopAttr) && keyTiles)
        keyLoops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : keyLoops) {
      SmallVector<memref::SubViewOp> tiles = getKeyTiles(loop);
      if (tiles.empty())
        continue;
      rewriter.setInsertionPointToStart(loop.getBody());
      Value next = arith::AddIOp::create(
          rewriter, loop.getLoc(), loop.getInductionVar(), loop.getStep());
      for (memref::SubViewOp tile : tiles)
        prefetchNextTile(rewriter, loop, tile, next);
      if (next.use_empty())
        rewriter.eraseOp(next.getDefiningOp());
    }
    for (scf::ForOp loop : loops) {
      SmallVector<vector::TransferReadOp> rows;
      for (auto read : loop.getBody()->getOps<vector::TransferReadOp>())
        if (isStreamedRow(read))
          rows.push_back(read);
      for (vector::TransferReadOp read : rows)
        prefetchAhead(rewriter, loop, read, distance);
    }
  }
};

} // namespace
