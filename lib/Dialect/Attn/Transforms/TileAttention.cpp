//===- TileAttention.cpp - attn.sdpa as a tiled online-softmax loop nest --===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// FlashAttention-2's schedule on tensors: a parallel loop over (batch, head,
// query tile) and, inside, a reduction loop over key/value tiles that keeps
// a running maximum and sum so that the softmax never needs a whole score
// row. The score semantics (scale, masks, regions, causal, window, dropout)
// come from the builders the reference lowering uses, evaluated on global
// indices, so both lowerings compute the same function.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the loop nest for one attn.sdpa. Tile-local tensors are 2-D
/// ([rows, keys] or [rows, features]) and 1-D ([rows]); global indices are
/// recovered by adding the tile offsets.
class TileBuilder {
public:
  TileBuilder(SdpaOp op, OpBuilder &b, int64_t qTile, int64_t kvTile)
      : op(op), b(b), loc(op.getLoc()), ctx(op.getContext()),
        sem(getScoreSemantics(op)), qTile(qTile), kvTile(kvTile) {
    element = op.getResult().getType().getElementType();
    acc = getAccumulatorType(element);
    // Block classes describe tiles of `block_size`: the tiles are those.
    if (std::optional<ArrayRef<int64_t>> blockSize = op.getBlockSize()) {
      this->qTile = (*blockSize)[0];
      this->kvTile = (*blockSize)[1];
    }
  }

  Value build();

private:
  Value constIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  TypedAttr accAttr(double v) { return b.getFloatAttr(acc, v); }

  /// The size of the tile at `start`, `min(tile, total - start)`, as an
  /// affine.min: later passes bound it by `tile` (value-bounds analysis) to
  /// pick vector sizes.
  Value tileSize(Value start, Value total, int64_t tile) {
    AffineExpr d0, s0;
    bindDims(ctx, d0);
    bindSymbols(ctx, s0);
    auto map = AffineMap::get(1, 1, {b.getAffineConstantExpr(tile), s0 - d0},
                              ctx);
    return affine::AffineMinOp::create(b, loc, map, ValueRange{start, total});
  }

  /// `tensor[b, h, start : start + len, :]` as a 2-D tensor.
  Value slice2d(Value tensor, Value batch, Value head, Value start, Value len) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<OpFoldResult> offsets = {batch, head, start, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       len,
                                       tensor::getMixedSize(b, loc, tensor, 3)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto sliceType = RankedTensorType::get(
        {ShapedType::kDynamic, type.getDimSize(3)}, type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, sliceType, tensor, offsets,
                                          sizes, strides);
  }

  /// K_t^T, [D, keys], for the tile starting at key `start` (a multiple of
  /// kvTile) from the packed keys.
  Value keyTileT(Value batch, Value kvHead, Value start, Value keys) {
    auto type = cast<RankedTensorType>(keyT.getType());
    Value tile = arith::DivUIOp::create(b, loc, start, constIndex(kvTile));
    SmallVector<OpFoldResult> offsets = {batch, kvHead, tile,
                                         b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {
        b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(1),
        tensor::getMixedSize(b, loc, keyT, 3), keys};
    SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
    auto sliceType = RankedTensorType::get(
        {type.getDimSize(3), ShapedType::kDynamic}, type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, sliceType, keyT, offsets,
                                          sizes, strides);
  }

  /// K as [B, Hkv, key tiles, D, kvTile]: each step's K_t^T is one
  /// contiguous D x kvTile block. (Rows of a plain K^T lie Skv elements
  /// apart, and at power-of-two lengths all D of them fall into the same L1
  /// set.) The last tile is padded with zeros; those keys are never visible.
  Value packKeyTiles(Value key);

  /// Emits the loops over key tiles for rows [rowStart, rowStart + rows),
  /// visiting only the tiles the masks leave non-empty and evaluating the
  /// masks only on partial ones (see KeyBand.h); returns (m, l, acc).
  ValueRange buildKeyLoops(Value qTileValue, Value batch, Value head,
                           Value kvHead, Value rowStart, Value rows,
                           ValueRange init);

  /// One `scf.for` over the key tiles starting in [from, to), each step
  /// masked or not.
  ValueRange buildKeyLoop(Value from, Value to, bool masked,
                          Value qTileValue, Value batch, Value head,
                          Value kvHead, Value rowStart, Value rows,
                          ValueRange init);

  /// (b, h, i, j) of element (row, key) of the current score tile, inside
  /// a linalg.generic over [rows, keys].
  SmallVector<Value> globalIndices(OpBuilder &nb, Location nl, Value batch,
                                   Value head, Value rowStart, Value keyStart) {
    Value qi = arith::AddIOp::create(nb, nl, rowStart,
                                     linalg::IndexOp::create(nb, nl, 0));
    Value kj = arith::AddIOp::create(nb, nl, keyStart,
                                     linalg::IndexOp::create(nb, nl, 1));
    return {batch, head, qi, kj};
  }

  /// One step of the key/value loop; returns the new (m, l, acc). An
  /// unmasked step is for a tile in which every key is visible.
  SmallVector<Value> buildStep(Value qTileValue, Value batch, Value head,
                               Value kvHead, Value rowStart, Value rows,
                               Value keyStart, ValueRange carried,
                               bool masked);

  SdpaOp op;
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  ScoreSemantics sem;
  int64_t qTile, kvTile;
  Type element, acc;
  // Problem-wide values, set by build().
  Value queryLength, keyCount, kvLength;
  // Scores are kept in log2 units (exp2 in the softmax).
  Log2ScoreScale scale;
  // K packed by packKeyTiles, once for all query tiles.
  Value keyT;
};

SmallVector<Value> TileBuilder::buildStep(Value qTileValue, Value batch,
                                          Value head, Value kvHead,
                                          Value rowStart, Value rows,
                                          Value keyStart, ValueRange carried,
                                          bool masked) {
  Value m = carried[0], l = carried[1], out = carried[2];
  ScoreSemantics stepSem = masked ? sem : sem.withoutKeepConditions();
  Value keys = tileSize(keyStart, keyCount, kvTile);
  Value kTileT = keyTileT(batch, kvHead, keyStart, keys);
  Value vTile = createElementCast(
      b, loc, slice2d(op.getValue(), batch, kvHead, keyStart, keys), acc);

  // Loop order (i, d, j): rows, then the reduced head dimension, then keys.
  AffineExpr i, d, j;
  bindDims(ctx, i, d, j);
  auto map2 = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, ctx);
  };

  // S = Q_t K_t^T in the accumulator type, read from the packed K^T so
  // that the innermost loop runs over keys, contiguously in both K_t^T and
  // S: it vectorises without reassociating a sum.
  Value zero = createFilledTensor(b, loc, {rows, keys}, accAttr(0));
  Value scores = linalg::GenericOp::create(b, loc, zero.getType(),
                                           ValueRange{qTileValue, kTileT}, zero,
                                           {map2(i, d), map2(d, j), map2(i, j)},
                                           {kPar, kRed, kPar}, buildMulAccBody)
                     .getResult(0);

  // Scale, masks and modifiers on global indices, in log2 units (times
  // log2(e)) so that the exponentials below are exp2.
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx);
  scores =
      linalg::GenericOp::create(
          b, loc, scores.getType(), ValueRange{}, scores, {id2}, {kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            SmallVector<Value> idx =
                globalIndices(nb, nl, batch, head, rowStart, keyStart);
            Value maskValue =
                stepSem.hasMask ? buildMaskElement(nb, nl, op.getMask(), idx)
                                : Value();
            linalg::YieldOp::create(
                nb, nl,
                buildLog2ModifiedScore(nb, nl, stepSem, args[0], scale, idx,
                                       maskValue, kvLength, queryLength));
          })
          .getResult(0);

  // m' = max(m, rowmax(S)).
  Value newMax = linalg::GenericOp::create(b, loc, m.getType(), scores, m,
                                           {id2, rowMap}, {kPar, kRed},
                                           buildReassociableBody<arith::MaximumFOp>)
                     .getResult(0);

  // A row with no visible key so far has m' = -inf: buildSafeRowMax.
  // P = exp2(S - m') (= exp of the natural-unit difference), then P with
  // dropout for the product with V.
  Value probsInit =
      tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{rows, keys}, acc);
  Value probs = linalg::GenericOp::create(b, loc, probsInit.getType(),
                                          ValueRange{scores, newMax}, probsInit,
                                          {id2, rowMap, id2}, {kPar, kPar},
                                          buildExp2MinusMaxBody)
                    .getResult(0);
  Value dropped = probs;
  if (sem.dropout > 0.0)
    dropped =
        linalg::GenericOp::create(
            b, loc, probs.getType(), ValueRange{}, probs, {id2}, {kPar, kPar},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  buildDropout(
                      nb, nl, sem, args[0],
                      globalIndices(nb, nl, batch, head, rowStart, keyStart)));
            })
            .getResult(0);

  // alpha = exp2(m - m'), the correction of what was accumulated so far.
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  Value alphaInit =
      tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{rows}, acc);
  Value alpha = linalg::GenericOp::create(
                    b, loc, alphaInit.getType(), ValueRange{m, newMax},
                    alphaInit, {id1, id1, id1}, {kPar}, buildExp2MinusMaxBody)
                    .getResult(0);

  // l' = alpha l + rowsum(P) (the undropped P: dropout rescales, it does
  // not renormalise).
  auto scaleRows = [&](Value tensor, AffineMap tensorMap, AffineMap alphaMap,
                       int64_t rank) {
    return linalg::GenericOp::create(b, loc, tensor.getType(), alpha, tensor,
                                     {alphaMap, tensorMap},
                                     SmallVector<IteratorType>(rank, kPar),
                                     buildBinaryBody<arith::MulFOp>)
        .getResult(0);
  };
  Value newSum =
      linalg::GenericOp::create(b, loc, l.getType(), probs,
                                scaleRows(l, id1, id1, 1), {id2, rowMap},
                                {kPar, kRed},
                                buildReassociableBody<arith::AddFOp>)
          .getResult(0);

  // acc' = alpha acc + dropout(P) V_t, in loop order (i, j, e): the
  // innermost loop runs over output features, contiguously in V_t and acc.
  Value scaledOut = scaleRows(out, id2, rowMap, 2);
  AffineExpr e;
  bindDims(ctx, i, j, e);
  Value newOut =
      linalg::GenericOp::create(
          b, loc, scaledOut.getType(), ValueRange{dropped, vTile}, scaledOut,
          {AffineMap::get(3, 0, {i, j}, ctx), AffineMap::get(3, 0, {j, e}, ctx),
           AffineMap::get(3, 0, {i, e}, ctx)},
          {kPar, kRed, kPar}, buildMulAccBody)
          .getResult(0);
  return {newMax, newSum, newOut};
}

Value TileBuilder::packKeyTiles(Value key) {
  auto type = cast<RankedTensorType>(key.getType());
  SmallVector<int64_t> shape(type.getShape());
  // Skv rounded up to whole tiles.
  AffineExpr s0 = getAffineSymbolExpr(0, ctx);
  OpFoldResult tiles = affine::makeComposedFoldedAffineApply(
      b, loc, s0.ceilDiv(kvTile), {tensor::getMixedSize(b, loc, key, 2)});
  OpFoldResult padded = affine::makeComposedFoldedAffineApply(
      b, loc, s0 * kvTile, {tiles});
  std::optional<int64_t> staticTiles = getConstantIntValue(tiles);
  shape[2] = staticTiles ? *staticTiles * kvTile : ShapedType::kDynamic;
  SmallVector<Value> dynamicDims;
  for (int64_t d = 0; d < 4; ++d)
    if (ShapedType::isDynamic(shape[d]))
      dynamicDims.push_back(
          d == 2 ? getValueOrCreateConstantIndexOp(b, loc, padded)
                 : tensor::DimOp::create(b, loc, key, d).getResult());
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(type.getElementType()));
  Value paddedKey = tensor::createPadHighOp(
      RankedTensorType::get(shape, type.getElementType()), key, zero,
      /*nofold=*/false, loc, b, dynamicDims);

  // [B, Hkv, tiles * kvTile, D] -> [B, Hkv, tiles, kvTile, D].
  SmallVector<OpFoldResult> tiledShape = {
      tensor::getMixedSize(b, loc, key, 0),
      tensor::getMixedSize(b, loc, key, 1), tiles, b.getIndexAttr(kvTile),
      tensor::getMixedSize(b, loc, key, 3)};
  SmallVector<int64_t> staticTiledShape = {
      shape[0], shape[1],
      staticTiles ? *staticTiles : ShapedType::kDynamic, kvTile, shape[3]};
  Value split = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(staticTiledShape, type.getElementType()),
      paddedKey, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}},
      tiledShape);
  return createTranspose(b, loc, split, {0, 1, 2, 4, 3});
}

ValueRange TileBuilder::buildKeyLoop(Value from, Value to, bool masked,
                                    Value qTileValue, Value batch,
                                    Value head, Value kvHead, Value rowStart,
                                    Value rows, ValueRange init) {
  auto loop = scf::ForOp::create(
      b, loc, from, to, constIndex(kvTile), init,
      [&](OpBuilder &nb, Location nl, Value keyStart, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        if (!op.getBlockClasses()) {
          scf::YieldOp::create(b, nl,
                               buildStep(qTileValue, batch, head, kvHead,
                                         rowStart, rows, keyStart, carried,
                                         masked));
          return;
        }
        // Run-time classes: skip class 0, no mask on class 2.
        Value classes = op.getBlockClasses();
        auto classType = cast<RankedTensorType>(classes.getType());
        Value qt = arith::DivUIOp::create(b, nl, rowStart, constIndex(qTile));
        Value kt = arith::DivUIOp::create(b, nl, keyStart, constIndex(kvTile));
        Value zero = constIndex(0);
        Value cls = tensor::ExtractOp::create(
            b, nl, classes,
            ValueRange{classType.getDimSize(0) == 1 ? zero : batch,
                       classType.getDimSize(1) == 1 ? zero : head, qt, kt});
        auto classIs = [&](int64_t c) {
          return arith::CmpIOp::create(
              b, nl, arith::CmpIPredicate::eq, cls,
              arith::ConstantOp::create(b, nl, b.getI8IntegerAttr(c)));
        };
        auto skip = scf::IfOp::create(b, nl, carried.getTypes(), classIs(0),
                                      /*withElseRegion=*/true);
        b.setInsertionPointToStart(skip.thenBlock());
        scf::YieldOp::create(b, nl, carried);
        b.setInsertionPointToStart(skip.elseBlock());
        auto full = scf::IfOp::create(b, nl, carried.getTypes(), classIs(2),
                                      /*withElseRegion=*/true);
        scf::YieldOp::create(b, nl, full.getResults());
        for (bool isFull : {true, false}) {
          b.setInsertionPointToStart(isFull ? full.thenBlock()
                                            : full.elseBlock());
          scf::YieldOp::create(b, nl,
                               buildStep(qTileValue, batch, head, kvHead,
                                         rowStart, rows, keyStart, carried,
                                         /*masked=*/!isFull));
        }
        b.setInsertionPointAfter(skip);
        scf::YieldOp::create(b, nl, skip.getResults());
      });
  return loop.getResults();
}

ValueRange TileBuilder::buildKeyLoops(Value qTileValue, Value batch,
                                     Value head, Value kvHead,
                                     Value rowStart, Value rows,
                                     ValueRange init) {
  MaskAnalysis masks = analyzeMasks(op);
  if (masks.band.empty)
    return init;
  BandValues values{batch, head, queryLength, kvLength};
  Value lastRow = arith::AddIOp::create(
      b, loc, rowStart, arith::SubIOp::create(b, loc, rows, constIndex(1)));
  KeyTileRanges tiles = buildKeyTileRanges(b, loc, masks.band, rowStart,
                                           lastRow, values, keyCount, kvTile);
  auto loop = [&](Value from, Value to, bool masked, ValueRange carried) {
    return buildKeyLoop(from, to, masked, qTileValue, batch, head, kvHead,
                        rowStart, rows, carried);
  };
  // Block classes decide per tile; without them and without an exact band,
  // every tile in the band is evaluated with the masks.
  if (op.getBlockClasses() || !masks.exact)
    return loop(tiles.first, tiles.end, /*masked=*/true, init);
  // Partial tiles before, full tiles, partial tiles after.
  ValueRange carried = loop(tiles.first, tiles.fullStart, /*masked=*/true, init);
  carried = loop(tiles.fullStart, tiles.fullEnd, /*masked=*/false, carried);
  return loop(tiles.fullEnd, tiles.end, /*masked=*/true, carried);
}

Value TileBuilder::build() {
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  OpFoldResult batches = tensor::getMixedSize(b, loc, query, 0);
  OpFoldResult heads = tensor::getMixedSize(b, loc, query, 1);
  queryLength = tensor::DimOp::create(b, loc, query, 2);
  keyCount = tensor::DimOp::create(b, loc, key, 2);
  Value group =
      arith::DivUIOp::create(b, loc, tensor::DimOp::create(b, loc, query, 1),
                             tensor::DimOp::create(b, loc, key, 1));
  Value qTileC = constIndex(qTile);
  // Static trip counts stay static so that later passes see them.
  int64_t staticQueryLength = op.getQuery().getType().getDimSize(2);
  OpFoldResult queryTiles =
      ShapedType::isDynamic(staticQueryLength)
          ? OpFoldResult(
                arith::CeilDivUIOp::create(b, loc, queryLength, qTileC))
          : OpFoldResult(
                b.getIndexAttr(llvm::divideCeil(staticQueryLength, qTile)));
  scale = buildLog2ScoreScale(b, loc, sem, query, acc);
  OpFoldResult outDim = tensor::getMixedSize(b, loc, value, 3);
  // One O(Skv D) copy per call instead of a transpose in every step. Q, K
  // and V tiles are converted to the accumulator type once (bf16/f16
  // inputs), so that both contractions are plain f32 register blocks.
  keyT = packKeyTiles(createElementCast(b, loc, key, acc));

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batches, heads, queryTiles},
      ValueRange{op.getInit()}, /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  Value batch = forall.getInductionVar(0), head = forall.getInductionVar(1);
  Value rowStart =
      arith::MulIOp::create(b, loc, forall.getInductionVar(2), qTileC);
  Value rows = tileSize(rowStart, queryLength, qTile);
  Value kvHead = arith::DivUIOp::create(b, loc, head, group);
  Value qTileValue =
      createElementCast(b, loc, slice2d(query, batch, head, rowStart, rows), acc);

  // Keys batch b may see: kv_lens[b] when given.
  kvLength = keyCount;
  if (Value lens = op.getKvLens()) {
    Value len = tensor::ExtractOp::create(b, loc, lens, batch);
    kvLength = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
  }

  double negInf = -std::numeric_limits<double>::infinity();
  SmallVector<Value> init = {
      createFilledTensor(b, loc, {rows}, accAttr(negInf)),
      createFilledTensor(b, loc, {rows}, accAttr(0)),
      createFilledTensor(b, loc, {rows, outDim}, accAttr(0))};
  ValueRange result =
      buildKeyLoops(qTileValue, batch, head, kvHead, rowStart, rows, init);

  // O = acc / l (0 where no key took part), in the destination's type.
  Value sum = result[1], unnormalised = result[2];
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx);
  Value outInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{rows, outDim}, element);
  Value outTile =
      linalg::GenericOp::create(
          b, loc, outInit.getType(), ValueRange{unnormalised, sum}, outInit,
          {id2, rowMap, id2}, {kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value o = buildNormalize(nb, nl, args[0], args[1]);
            linalg::YieldOp::create(nb, nl, castFloat(nb, nl, o, element));
          })
          .getResult(0);

  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets = {batch, head, rowStart,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     outDim};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(
      b, loc, outTile, forall.getRegionOutArgs()[0], offsets, sizes, strides);
  return forall.getResult(0);
}

} // namespace

LogicalResult attn::verifyTileSizes(Operation *op, StringRef pass,
                                    int64_t qTile, int64_t kvTile) {
  if (qTile > 0 && kvTile > 0)
    return success();
  return op->emitError() << pass
                         << ": tile sizes must be positive, got q-tile = "
                         << qTile << " and kv-tile = " << kvTile;
}

namespace {

/// attn.sdpa -> the tiled loop nest.
struct TileSdpa : OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *ctx, int64_t qTile, int64_t kvTile)
      : OpRewritePattern(ctx), qTile(qTile), kvTile(kvTile) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    TileBuilder builder(op, rewriter, qTile, kvTile);
    rewriter.replaceOp(op, builder.build());
    return success();
  }

  int64_t qTile, kvTile;
};

/// Tiles every attn.sdpa; rejects tile sizes that are not positive.
struct AttnTilePass : attn::impl::AttnTileBase<AttnTilePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyTileSizes(getOperation(), getArgument(), qTile, kvTile)))
      return signalPassFailure();
    // A layout is turned into block classes by attn-sparsify; the tiled
    // step does not evaluate it element by element.
    WalkResult layouts = getOperation()->walk([](SdpaOp op) {
      if (!op.getBlockOffsets())
        return WalkResult::advance();
      op.emitOpError() << "has a block-sparse layout: run --attn-sparsify "
                          "before --attn-tile";
      return WalkResult::interrupt();
    });
    if (layouts.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<TileSdpa>(&getContext(), qTile, kvTile);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
