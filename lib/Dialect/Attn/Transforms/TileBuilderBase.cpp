//===- TileBuilderBase.cpp - shared pieces of the tiled lowerings ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "TileBuilderBase.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;
using namespace mlir::attn;

Value TileBuilderBase::padToTiles(Value x, int64_t dim, int64_t tile,
                                  TypedAttr padValue) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  AffineExpr s0 = getAffineSymbolExpr(0, ctx);
  OpFoldResult padded = affine::makeComposedFoldedAffineApply(
      b, loc, s0.ceilDiv(tile) * tile, {tensor::getMixedSize(b, loc, x, dim)});
  std::optional<int64_t> staticPadded = getConstantIntValue(padded);
  shape[dim] = staticPadded ? *staticPadded : ShapedType::kDynamic;
  SmallVector<Value> dynamicDims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (ShapedType::isDynamic(shape[d]))
      dynamicDims.push_back(
          d == dim ? getValueOrCreateConstantIndexOp(b, loc, padded)
                   : tensor::DimOp::create(b, loc, x, d).getResult());
  Value pad = arith::ConstantOp::create(b, loc, padValue);
  return tensor::createPadHighOp(
      RankedTensorType::get(shape, type.getElementType()), x, pad,
      /*nofold=*/false, loc, b, dynamicDims);
}

Value TileBuilderBase::packTiles(Value x, ArrayRef<int64_t> keySplit,
                                 ArrayRef<int64_t> featureSplit,
                                 ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(x.getType());
  Value paddedX = padToKeyTiles(x);
  int64_t paddedLength =
      cast<RankedTensorType>(paddedX.getType()).getDimSize(2);

  // [B, H, tiles * kvTile, F] -> [B, H, tiles, keySplit..., featureSplit...].
  AffineExpr s0 = getAffineSymbolExpr(0, ctx);
  OpFoldResult tiles = affine::makeComposedFoldedAffineApply(
      b, loc, s0.ceilDiv(kvTile), {tensor::getMixedSize(b, loc, x, 2)});
  SmallVector<OpFoldResult> splitShape = {tensor::getMixedSize(b, loc, x, 0),
                                          tensor::getMixedSize(b, loc, x, 1),
                                          tiles};
  SmallVector<int64_t> staticSplitShape = {
      type.getDimSize(0), type.getDimSize(1),
      ShapedType::isDynamic(paddedLength) ? ShapedType::kDynamic
                                          : paddedLength / kvTile};
  ReassociationIndices keyGroup = {2}, featureGroup;
  for (int64_t size : keySplit) {
    keyGroup.push_back(splitShape.size());
    splitShape.push_back(b.getIndexAttr(size));
    staticSplitShape.push_back(size);
  }
  if (featureSplit.empty()) {
    featureGroup.push_back(splitShape.size());
    splitShape.push_back(tensor::getMixedSize(b, loc, x, 3));
    staticSplitShape.push_back(type.getDimSize(3));
  }
  for (int64_t size : featureSplit) {
    featureGroup.push_back(splitShape.size());
    splitShape.push_back(b.getIndexAttr(size));
    staticSplitShape.push_back(size);
  }
  Value split = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(staticSplitShape, type.getElementType()),
      paddedX,
      SmallVector<ReassociationIndices>{{0}, {1}, keyGroup, featureGroup},
      splitShape);
  return createTranspose(b, loc, split, permutation);
}

Value TileBuilderBase::buildContraction(Value lhs, Value rhs, Value init) {
  // (i, k, j): lhs [i, k], rhs [k, j]; with pairs (i, k, j, t): lhs
  // [i, k, t], rhs [k, j, t], t the pair, innermost in both.
  unsigned numDims = pairs ? 4 : 3;
  AffineExpr i = b.getAffineDimExpr(0), k = b.getAffineDimExpr(1),
             j = b.getAffineDimExpr(2);
  SmallVector<AffineExpr> lhsExprs = {i, k}, rhsExprs = {k, j};
  SmallVector<utils::IteratorType> iterators = {kPar, kRed, kPar};
  if (pairs) {
    lhsExprs.push_back(b.getAffineDimExpr(3));
    rhsExprs.push_back(b.getAffineDimExpr(3));
    iterators.push_back(kRed);
  }
  return linalg::GenericOp::create(b, loc, init.getType(), ValueRange{lhs, rhs},
                                   init,
                                   {AffineMap::get(numDims, 0, lhsExprs, ctx),
                                    AffineMap::get(numDims, 0, rhsExprs, ctx),
                                    AffineMap::get(numDims, 0, {i, j}, ctx)},
                                   iterators, buildMulAccBody)
      .getResult(0);
}

Value TileBuilderBase::buildDotContraction(Value lhs, Value rhsT, Value init) {
  // (i, j, k): lhs [i, k], rhsT [j, k]; k innermost in both.
  AffineExpr i = b.getAffineDimExpr(0), j = b.getAffineDimExpr(1),
             k = b.getAffineDimExpr(2);
  return linalg::GenericOp::create(b, loc, init.getType(),
                                   ValueRange{lhs, rhsT}, init,
                                   {AffineMap::get(3, 0, {i, k}, ctx),
                                    AffineMap::get(3, 0, {j, k}, ctx),
                                    AffineMap::get(3, 0, {i, j}, ctx)},
                                   {kPar, kPar, kRed}, buildMulAccBody)
      .getResult(0);
}

Value TileBuilderBase::buildPanelContraction(Value lhs, Value rhs, Value init) {
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t panels = rhsType.getDimSize(0), panel = rhsType.getDimSize(2);
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
  Value view = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({ShapedType::kDynamic, panels, panel},
                            getElementTypeOrSelf(init.getType())),
      init, split,
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, init, 0),
                             b.getIndexAttr(panels), b.getIndexAttr(panel)});
  // (i, p, k, j): lhs [i, k], rhs [p, k, j], view [i, p, j].
  AffineExpr i = b.getAffineDimExpr(0), p = b.getAffineDimExpr(1),
             k = b.getAffineDimExpr(2), j = b.getAffineDimExpr(3);
  Value product = linalg::GenericOp::create(
                      b, loc, view.getType(), ValueRange{lhs, rhs}, view,
                      {AffineMap::get(4, 0, {i, k}, ctx),
                       AffineMap::get(4, 0, {p, k, j}, ctx),
                       AffineMap::get(4, 0, {i, p, j}, ctx)},
                      {kPar, kPar, kRed, kPar}, buildMulAccBody)
                      .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, init.getType(), product,
                                         split);
}

SmallVector<Value> TileBuilderBase::buildKeyTileLoop(
    const KeyTiles &tiles, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> step) {
  // One range: the loop runs over key starts. Two: over tile numbers t,
  // the first count of them in the first range.
  Value lower = tiles.from, upper = tiles.to, stride = constIndex(kvTile);
  Value firstCount;
  if (tiles.thenFrom) {
    auto countOf = [&](Value from, Value to) -> Value {
      Value length = arith::MaxSIOp::create(
          b, loc, constIndex(0), arith::SubIOp::create(b, loc, to, from));
      return arith::CeilDivUIOp::create(b, loc, length, stride);
    };
    firstCount = countOf(tiles.from, tiles.to);
    lower = constIndex(0);
    upper = arith::AddIOp::create(b, loc, firstCount,
                                  countOf(tiles.thenFrom, tiles.thenTo));
    stride = constIndex(1);
  }
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, stride, init,
      [&](OpBuilder &nb, Location nl, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value keyStart = iv;
        if (firstCount) {
          auto startIn = [&](Value from, Value t) -> Value {
            return arith::AddIOp::create(
                b, nl, from,
                arith::MulIOp::create(b, nl, t, constIndex(kvTile)));
          };
          Value inFirst = arith::CmpIOp::create(
              b, nl, arith::CmpIPredicate::ult, iv, firstCount);
          keyStart = arith::SelectOp::create(
              b, nl, inFirst, startIn(tiles.from, iv),
              startIn(tiles.thenFrom,
                      arith::SubIOp::create(b, nl, iv, firstCount)));
        }
        scf::YieldOp::create(b, nl, step(keyStart, carried));
      });
  loop->setAttr(kKeyTileLoopAttr, b.getUnitAttr());
  return loop.getResults();
}
