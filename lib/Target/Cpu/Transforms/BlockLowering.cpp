//===- BlockLowering.cpp - register blocks as vector code -----------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Stage 3 of attn-vectorize-tiles (VectorizeTiles.h): static register
// blocks vectorised and lowered so that each K step is one outer product
// (M broadcasts times N-wide rows), dot-form blocks as lanes of partial sums,
// bf16 pair steps as AVX512-BF16 dot products.
//
//===----------------------------------------------------------------------===//

#include "VectorizeTiles.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include <limits>

using namespace mlir;
using namespace mlir::attn::cpu;

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
void attn::cpu::lowerDotBlock(RewriterBase &rewriter, linalg::LinalgOp op,
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

/// `block` (a static register block) without its unit dimensions that
/// follow a longer one in the result (other than the M, N and K it is
/// blocked on): a packed right operand's panel index ([M, N / panel,
/// panel], see attn-pack-weights), the heads of a product writing
/// [N, L, H, D], the batch of one writing [L, N, E]. Upstream's
/// contraction lowering only casts away leading unit dimensions, and
/// rewrites a block with an inner one forever. Leading ones stay.
linalg::LinalgOp attn::cpu::dropInnerUnitDims(RewriterBase &rewriter,
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

} // namespace

void attn::cpu::populateBlockLoweringPatterns(RewritePatternSet &patterns,
                                              bool bf16Dot) {
  MLIRContext *ctx = patterns.getContext();
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  patterns.add<UnitKContractToOuterProduct, UnitKRowContractToFma,
               ExtendContractOperands>(ctx);
  if (bf16Dot)
    patterns.add<PairContractToDotBF16>(ctx, /*benefit=*/2);
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
  patterns.add<MaskedReductionToSelect, HalveMinMaxReduction>(ctx);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
}
