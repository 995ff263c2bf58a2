//===- RowTiles.cpp - tile rows as vector code ----------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Stage 2 of attn-vectorize-tiles (VectorizeTiles.h): the elementwise and
// row-reduction ops of a tile (scale, masks, exponentials, row maximum and
// sum, rescaling) one row at a time, a partial row through masks, and
// transposes in square register blocks.
//
//===----------------------------------------------------------------------===//

#include "VectorizeTiles.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;
using namespace mlir::attn::cpu;

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
bool attn::cpu::tileTransposeIntoBlocks(RewriterBase &rewriter,
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
void attn::cpu::tileIntoRows(RewriterBase &rewriter, linalg::LinalgOp op,
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
SmallVector<Value> attn::cpu::vectorizeInPlace(RewriterBase &rewriter,
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
void attn::cpu::lowerSoftmaxMax(RewriterBase &rewriter,
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

/// `generic` without its unit dimensions `dims` (slices of rank-reduced
/// operands in and out), replacing it; null where upstream cannot drop
/// them.
linalg::LinalgOp attn::cpu::dropDims(RewriterBase &rewriter,
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

/// A row `op` (vector sizes `sizes`, 1 but for the last dimension) whose
/// body reads loop indices, as the generic over its dimensions of other
/// sizes than 1, with the vector sizes of those. LLVM 22's vectoriser
/// makes the innermost index a 1-D `vector.step`; a value computed from it
/// alone (a score_mod's `j - i`) then stays 1-D, and combined with the
/// [1, .., n] output (`out + bias`) it becomes a vector.multi_reduction
/// from the 1-D vector to the N-D one, which does not verify and crashes
/// the folder. With the unit dimensions gone both are 1-D. Other rows are
/// returned as they are.
std::pair<linalg::LinalgOp, SmallVector<int64_t>>
attn::cpu::dropRowUnitDims(RewriterBase &rewriter, linalg::LinalgOp op,
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
