//===- AttnToLinalg.cpp - reference lowering of attn to linalg ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The unfused lowering: Q K^T, one elementwise op for scale/masks/modifiers,
// a max-subtracted softmax, dropout and P V, all on tensors. Every backend's
// numerics are defined by what this file produces, so it favours clarity
// over speed.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

//===----------------------------------------------------------------------===//
// Small builders
//===----------------------------------------------------------------------===//

/// The key/value head that query head `h` reads: `h floordiv (Hq / Hkv)`.
/// Returns nullopt when the group size is not static; callers then expand
/// K/V explicitly (see `expandKvHeads`).
std::optional<AffineExpr> kvHeadExpr(AffineExpr h, int64_t qHeads,
                                     int64_t kvHeads) {
  if (ShapedType::isDynamic(qHeads) || ShapedType::isDynamic(kvHeads))
    return std::nullopt;
  int64_t group = qHeads / kvHeads;
  return group == 1 ? h : h.floorDiv(group);
}

/// Repeats each key/value head `Hq / Hkv` times so that head `h` of the
/// result is head `h / (Hq / Hkv)` of `kv`. Only used when the group size is
/// dynamic; static groups are expressed in the indexing maps instead.
Value expandKvHeads(OpBuilder &b, Location loc, Value kv, Value query) {
  auto type = cast<RankedTensorType>(kv.getType());
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, kv, {0, 1, 2, 3});
  sizes[1] = tensor::getMixedSize(b, loc, query, 1);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  Value qHeads = tensor::DimOp::create(b, loc, query, 1);
  Value kvHeads = tensor::DimOp::create(b, loc, kv, 1);
  Value group = arith::DivUIOp::create(b, loc, qHeads, kvHeads);
  auto map = b.getMultiDimIdentityMap(4);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{}, empty, {map},
             SmallVector<IteratorType>(4, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               SmallVector<Value> idx;
               for (int64_t d = 0; d < 4; ++d)
                 idx.push_back(linalg::IndexOp::create(nb, nl, d));
               idx[1] = arith::DivUIOp::create(nb, nl, idx[1], group);
               Value v = tensor::ExtractOp::create(nb, nl, kv, idx);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Probabilities: the part attn.sdpa and attn.weights share
//===----------------------------------------------------------------------===//

/// The probabilities of a score op and the row statistics they were
/// normalised with.
struct Probabilities {
  /// P, in the element type of the tensor they were written into.
  Value probs;
  /// Per row [B, Hq, Sq], in the accumulator type: the max of the masked
  /// scores (-inf where no key takes part) and the sum of exp(s - max)
  /// (0 there).
  Value rowMax, rowSum;
};

/// The modified scores s = mask(scale * Q K^T) of a score op, [B, Hq, Sq,
/// Skv] in the accumulator type (-inf where a key takes no part); with
/// `derivative`, also each score's derivative with respect to the raw
/// product q.k (buildScoreDerivative), the same shape. With `fusionMarks`,
/// the product Q K^T carries kScoresMarker for attn-fuse-weights.
template <typename OpTy>
Value buildScores(OpTy op, OpBuilder &b, bool fusionMarks,
                  Value *derivative = nullptr) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value query = op.getQuery(), key = op.getKey();
  auto queryType = cast<RankedTensorType>(query.getType());
  auto keyType = cast<RankedTensorType>(key.getType());
  Type acc = getAccumulatorType(queryType.getElementType());
  auto accAttr = [&](double v) { return b.getFloatAttr(acc, v); };

  AffineExpr bd, h, i, j, d;
  bindDims(ctx, bd, h, i, j, d);
  std::optional<AffineExpr> kvHead =
      kvHeadExpr(h, queryType.getDimSize(1), keyType.getDimSize(1));
  if (!kvHead) {
    key = expandKvHeads(b, loc, key, query);
    kvHead = h;
  }

  // S[b, h, i, j] = sum_d Q[b, h, i, d] * K[b, kvh(h), j, d], in `acc`.
  SmallVector<OpFoldResult> scoreSizes = getSizes(b, loc, query, {0, 1, 2});
  scoreSizes.push_back(tensor::getMixedSize(b, loc, key, 2));
  Value zero = createFilledTensor(b, loc, scoreSizes, accAttr(0));
  auto qMap = AffineMap::get(5, 0, {bd, h, i, d}, ctx);
  auto kMap = AffineMap::get(5, 0, {bd, *kvHead, j, d}, ctx);
  auto sMap = AffineMap::get(5, 0, {bd, h, i, j}, ctx);
  auto scoreOp = linalg::GenericOp::create(
      b, loc, zero.getType(), ValueRange{query, key}, zero, {qMap, kMap, sMap},
      {kPar, kPar, kPar, kPar, kRed}, buildMulAccBody);
  if (fusionMarks)
    scoreOp->setAttr(kScoresMarker, b.getUnitAttr());
  Value scores = scoreOp.getResult(0);

  // Scale, masks and modifiers, elementwise over [B, Hq, Sq, Skv].
  ScoreSemantics sem = getScoreSemantics(op);
  Value scaleConst = buildScale(b, loc, sem, query, acc);

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  AffineExpr e0, e1, e2, e3;
  bindDims(ctx, e0, e1, e2, e3);
  const AffineExpr full[4] = {e0, e1, e2, e3};
  Value mask = op.getMask();
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    int64_t rank = maskType.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t k = 0; k < rank; ++k)
      exprs.push_back(maskType.getDimSize(k) == 1
                          ? getAffineConstantExpr(0, ctx)
                          : full[4 - rank + k]);
    inputs.push_back(mask);
    maps.push_back(AffineMap::get(4, 0, exprs, ctx));
  }
  Value kvLens = op.getKvLens();
  if (kvLens) {
    inputs.push_back(kvLens);
    maps.push_back(AffineMap::get(4, 0, {e0}, ctx));
  }
  Value qLen = tensor::DimOp::create(b, loc, query, 2);
  Value kvLen = tensor::DimOp::create(b, loc, key, 2);
  // A block layout or block classes: read per element through the block
  // of (i, j) (dense here; the tiled lowering skips whole blocks instead).
  // The body reads the block with tensor.extract at (i / bq, j / bk) from
  // linalg.index, not through an operand mapped by `i floordiv bq`: the
  // row-block fusion tiles this op, and a tile's local `i floordiv bq` is
  // the block of the global row only when the tile starts on a block
  // boundary (linalg.index, unlike a map, is offset by tiling).
  Value blocks;
  int64_t bq = 1, bk = 1;
  if (std::optional<ArrayRef<int64_t>> blockSize = op.getBlockSize()) {
    bq = (*blockSize)[0];
    bk = (*blockSize)[1];
    blocks = op.getBlockClasses();
    if (!blocks) {
      auto ceilDiv = [&](Value v, int64_t by) -> Value {
        return arith::CeilDivUIOp::create(
            b, loc, v, arith::ConstantIndexOp::create(b, loc, by));
      };
      blocks =
          buildListedBlocks(b, loc, op.getBlockOffsets(), op.getBlockIndices(),
                            ceilDiv(qLen, bq), ceilDiv(kvLen, bk));
    }
  }
  SmallVector<Value> outs = {scores};
  if (derivative)
    outs.push_back(tensor::EmptyOp::create(b, loc, scoreSizes, acc));
  maps.append(outs.size(), b.getMultiDimIdentityMap(4));

  auto masked = linalg::GenericOp::create(
      b, loc, TypeRange(ValueRange(outs)), inputs, outs, maps,
      SmallVector<IteratorType>(4, kPar),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t k = 0; k < 4; ++k)
          idx.push_back(linalg::IndexOp::create(nb, nl, k));
        unsigned next = 0;
        Value maskValue = mask ? args[next++] : Value();
        Value length = kvLen;
        if (kvLens)
          length = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                              args[next++]);
        Value blockKeep;
        if (blocks) {
          auto blocksType = cast<RankedTensorType>(blocks.getType());
          auto constant = [&](int64_t v) {
            return arith::ConstantIndexOp::create(nb, nl, v);
          };
          Value zero = constant(0);
          blockKeep = tensor::ExtractOp::create(
              nb, nl, blocks,
              ValueRange{blocksType.getDimSize(0) == 1 ? zero : idx[0],
                         blocksType.getDimSize(1) == 1 ? zero : idx[1],
                         arith::DivUIOp::create(nb, nl, idx[2], constant(bq)),
                         arith::DivUIOp::create(nb, nl, idx[3], constant(bk))});
          // Classes: 0 is the only one that masks.
          if (!blockKeep.getType().isInteger(1))
            blockKeep = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::ne, blockKeep,
                arith::ConstantOp::create(
                    nb, nl, nb.getIntegerAttr(blockKeep.getType(), 0)));
        }
        Value product = args[inputs.size()];
        SmallVector<Value> results = {
            buildModifiedScore(nb, nl, sem, product, scaleConst, idx, maskValue,
                               length, qLen, blockKeep)};
        if (derivative)
          results.push_back(buildScoreDerivative(nb, nl, sem, product,
                                                 scaleConst, idx, maskValue));
        linalg::YieldOp::create(nb, nl, results);
      });
  if (derivative)
    *derivative = masked.getResult(1);
  return masked.getResult(0);
}

/// Builds P = dropout(softmax(mask(scale * Q K^T))) for a score op and writes
/// it into `out` (element type: the accumulator type or the op's type;
/// converted on store). `fusionMarks` as for buildScores.
template <typename OpTy>
Probabilities buildProbabilities(OpTy op, OpBuilder &b, Value out,
                                 bool fusionMarks) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Type acc = getAccumulatorType(op.getQuery().getType().getElementType());
  auto accAttr = [&](double v) { return b.getFloatAttr(acc, v); };
  double negInf = -std::numeric_limits<double>::infinity();
  ScoreSemantics sem = getScoreSemantics(op);
  Value masked = buildScores(op, b, fusionMarks);
  SmallVector<OpFoldResult> scoreSizes = getSizes(b, loc, masked);
  AffineExpr e0, e1, e2, e3;
  bindDims(ctx, e0, e1, e2, e3);

  // Row max; a row whose scores are all -inf uses 0 so exp gives 0, not NaN.
  SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(), scoreSizes.end() - 1);
  Value maxInit = createFilledTensor(b, loc, rowSizes, accAttr(negInf));
  Value rowMax = linalg::ReduceOp::create(b, loc, masked, maxInit, {3},
                                          buildBinaryBody<arith::MaximumFOp>)
                     .getResult(0);

  auto id4 = b.getMultiDimIdentityMap(4);
  auto rowMap = AffineMap::get(4, 0, {e0, e1, e2}, ctx);
  Value expInit = tensor::EmptyOp::create(b, loc, scoreSizes, acc);
  Value exps = linalg::GenericOp::create(
                   b, loc, expInit.getType(), ValueRange{masked, rowMax},
                   expInit, {id4, rowMap, id4},
                   SmallVector<IteratorType>(4, kPar), buildExpMinusMaxBody)
                   .getResult(0);

  Value sumInit = createFilledTensor(b, loc, rowSizes, accAttr(0));
  Value rowSum = linalg::ReduceOp::create(b, loc, exps, sumInit, {3},
                                          buildBinaryBody<arith::AddFOp>)
                     .getResult(0);

  // Normalise (by the row's reciprocal, 0 where the sum is: nothing took
  // part, probability 0), then dropout, then store in the output's element
  // type.
  Type outElement = cast<ShapedType>(out.getType()).getElementType();
  Value reciprocals = buildRowReciprocals(b, loc, rowSum);
  Value probs =
      linalg::GenericOp::create(
          b, loc, out.getType(), ValueRange{exps, reciprocals}, out,
          {id4, rowMap, id4}, SmallVector<IteratorType>(4, kPar),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p = arith::MulFOp::create(nb, nl, args[0], args[1]);
            SmallVector<Value> idx;
            for (int64_t k = 0; sem.dropout > 0.0 && k < 4; ++k)
              idx.push_back(linalg::IndexOp::create(nb, nl, k));
            p = buildDropout(nb, nl, sem, p, idx);
            linalg::YieldOp::create(nb, nl, castFloat(nb, nl, p, outElement));
          })
          .getResult(0);
  return {probs, rowMax, rowSum};
}

/// lse = max + log(sum) per row, written into `init`: -inf where no key
/// takes part (the sum is 0 there, and the max, -inf, is taken as 0).
Value buildLogSumExp(OpBuilder &b, Location loc, const Probabilities &probs,
                     Value init) {
  auto id = b.getMultiDimIdentityMap(3);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{probs.rowMax, probs.rowSum},
             init, {id, id, id}, SmallVector<IteratorType>(3, kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value log = math::LogOp::create(nb, nl, args[1]);
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl,
                                         buildSafeRowMax(nb, nl, args[0]), log)
                       .getResult());
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// attn.weights -> the probabilities, stored straight into its init.
struct LowerWeights : OpRewritePattern<WeightsOp> {
  LowerWeights(MLIRContext *ctx, bool fusionMarks)
      : OpRewritePattern(ctx), fusionMarks(fusionMarks) {}

  LogicalResult matchAndRewrite(WeightsOp op,
                                PatternRewriter &rewriter) const override {
    Value probs =
        buildProbabilities(op, rewriter, op.getInit(), fusionMarks).probs;
    if (fusionMarks)
      probs.getDefiningOp()->setAttr(kProbabilitiesMarker,
                                     rewriter.getUnitAttr());
    rewriter.replaceOp(op, probs);
    return success();
  }

  /// Marks for attn-fuse-weights (attn-lower-to-linalg's fusion-marks).
  bool fusionMarks;
};

/// attn.sdpa -> probabilities in the accumulator type (f32, or f64 for f64),
/// then O = P V accumulated in that type and stored into the op's init in
/// its element type.
struct LowerSdpa : OpRewritePattern<SdpaOp> {
  LowerSdpa(MLIRContext *ctx, bool fusionMarks)
      : OpRewritePattern(ctx), fusionMarks(fusionMarks) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value query = op.getQuery(), value = op.getValue();
    Type element = op.getResult().getType().getElementType();
    Type accType = getAccumulatorType(element);

    SmallVector<OpFoldResult> probSizes =
        getSizes(rewriter, loc, query, {0, 1, 2});
    probSizes.push_back(tensor::getMixedSize(rewriter, loc, op.getKey(), 2));
    Value probInit = tensor::EmptyOp::create(rewriter, loc, probSizes, accType);
    Probabilities probabilities =
        buildProbabilities(op, rewriter, probInit, fusionMarks);
    Value probs = probabilities.probs;

    AffineExpr bd, h, i, e, j;
    bindDims(ctx, bd, h, i, e, j);
    auto valueType = cast<RankedTensorType>(value.getType());
    std::optional<AffineExpr> kvHead = kvHeadExpr(
        h, op.getQuery().getType().getDimSize(1), valueType.getDimSize(1));
    if (!kvHead) {
      value = expandKvHeads(rewriter, loc, value, query);
      kvHead = h;
    }

    // Accumulate directly in the init when it has the accumulator type, else
    // in a scratch tensor that is narrowed into the init afterwards.
    SmallVector<OpFoldResult> outSizes =
        getSizes(rewriter, loc, query, {0, 1, 2});
    outSizes.push_back(tensor::getMixedSize(rewriter, loc, value, 3));
    Value zeroC = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getFloatAttr(accType, 0));
    Value acc = element == accType
                    ? op.getInit()
                    : tensor::EmptyOp::create(rewriter, loc, outSizes, accType)
                          .getResult();
    acc = linalg::FillOp::create(rewriter, loc, zeroC, acc).getResult(0);

    auto pMap = AffineMap::get(5, 0, {bd, h, i, j}, ctx);
    auto vMap = AffineMap::get(5, 0, {bd, *kvHead, j, e}, ctx);
    auto oMap = AffineMap::get(5, 0, {bd, h, i, e}, ctx);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, acc.getType(), ValueRange{probs, value}, acc,
            {pMap, vMap, oMap}, {kPar, kPar, kPar, kPar, kRed}, buildMulAccBody)
            .getResult(0);

    if (element != accType) {
      auto id = rewriter.getMultiDimIdentityMap(4);
      out = linalg::GenericOp::create(
                rewriter, loc, op.getInit().getType(), out, op.getInit(),
                {id, id}, SmallVector<IteratorType>(4, kPar),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  linalg::YieldOp::create(nb, nl,
                                          castFloat(nb, nl, args[0], element));
                })
                .getResult(0);
    }
    SmallVector<Value> results = {out};
    if (Value lseInit = op.getLseInit())
      results.push_back(buildLogSumExp(rewriter, loc, probabilities, lseInit));
    rewriter.replaceOp(op, results);
    return success();
  }

  /// Marks for attn-fuse-weights (attn-lower-to-linalg's fusion-marks).
  bool fusionMarks;
};

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

/// out[...] = sum over the loops `outMap` leaves out of lhs * rhs, in `acc`
/// (a zero-filled tensor of `sizes`).
Value buildContraction(OpBuilder &b, Location loc, Value lhs, AffineMap lhsMap,
                       Value rhs, AffineMap rhsMap, AffineMap outMap,
                       ArrayRef<OpFoldResult> sizes, Type acc) {
  SmallVector<IteratorType> iterators(outMap.getNumDims(), kRed);
  for (AffineExpr result : outMap.getResults())
    iterators[cast<AffineDimExpr>(result).getPosition()] = kPar;
  Value zero = createFilledTensor(b, loc, sizes, b.getFloatAttr(acc, 0));
  return linalg::GenericOp::create(b, loc, zero.getType(), ValueRange{lhs, rhs},
                                   zero, {lhsMap, rhsMap, outMap}, iterators,
                                   buildMulAccBody)
      .getResult(0);
}

/// Sums a tensor [B, Hq, S, X] computed per query head over the query heads
/// of each key/value group, [B, Hkv, S, X] like `kv`: the forward reads K
/// and V head h / (Hq / Hkv), so their gradients add up every query head
/// that read them. Query head r of every group is the strided slice of
/// heads r, r + G, r + 2G, ...; the loop adds the G slices. (An expand_shape
/// of Hq into [Hkv, G] would be one reduction, but two dynamic extents in
/// one reassociation group are beyond expand-strided-metadata.)
Value sumOverGroups(OpBuilder &b, Location loc, Value perQueryHead, Value kv) {
  auto type = cast<RankedTensorType>(perQueryHead.getType());
  auto kvType = cast<RankedTensorType>(kv.getType());
  int64_t qHeads = type.getDimSize(1), kvHeads = kvType.getDimSize(1);
  if (!ShapedType::isDynamic(qHeads) && qHeads == kvHeads)
    return perQueryHead;
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, perQueryHead);
  sizes[1] = tensor::getMixedSize(b, loc, kv, 1);
  Value group = arith::DivUIOp::create(
      b, loc, tensor::DimOp::create(b, loc, perQueryHead, 1),
      tensor::DimOp::create(b, loc, kv, 1));
  Value zero = createFilledTensor(b, loc, sizes,
                                  b.getFloatAttr(type.getElementType(), 0));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, c0, group, c1, ValueRange{zero},
      [&](OpBuilder &nb, Location nl, Value r, ValueRange sum) {
        OpFoldResult one = nb.getIndexAttr(1);
        Value heads = tensor::ExtractSliceOp::create(
            nb, nl, perQueryHead,
            ArrayRef<OpFoldResult>{nb.getIndexAttr(0), r, nb.getIndexAttr(0),
                                   nb.getIndexAttr(0)},
            sizes, ArrayRef<OpFoldResult>{one, group, one, one});
        Value added = linalg::AddOp::create(nb, nl, ValueRange{sum[0], heads},
                                            ValueRange{sum[0]})
                          .getResult(0);
        scf::YieldOp::create(nb, nl, added);
      });
  return loop.getResult(0);
}

/// Converts `value` (the accumulator type) into `init`'s element type,
/// written into `init`.
Value storeInto(OpBuilder &b, Location loc, Value value, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  auto id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, type, value, init, {id, id},
             SmallVector<IteratorType>(type.getRank(), kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, args[0], type.getElementType()));
             })
      .getResult(0);
}

/// attn.sdpa_grad -> the unfused backward: P recomputed from the forward's
/// log-sum-exp, then the products of the chain rule (see the op's
/// description), all [B, Hq, Sq, Skv] intermediates materialised.
struct LowerSdpaGrad : OpRewritePattern<SdpaGradOp> {
  LowerSdpaGrad(MLIRContext *ctx, bool fusionMarks)
      : OpRewritePattern(ctx), fusionMarks(fusionMarks) {}

  LogicalResult matchAndRewrite(SdpaGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
    Value out = op.getOut(), outGrad = op.getOutGrad(), lse = op.getLse();
    auto queryType = op.getQuery().getType();
    Type acc = getAccumulatorType(queryType.getElementType());
    ScoreSemantics sem = getScoreSemantics(op);

    // The scores, and their derivatives with respect to q.k (the scale,
    // times score_mod's derivative).
    Value scoreDerivative;
    Value scores = buildScores(op, rewriter, fusionMarks, &scoreDerivative);
    SmallVector<OpFoldResult> scoreSizes = getSizes(rewriter, loc, scores);

    // Loops (b, h, i, j, x): batch, query head, query row, key, and the
    // reduced or kept feature. K and V are read through the query head's
    // key/value head (expanded to the query heads when the group size is
    // dynamic).
    AffineExpr bd, h, i, j, x;
    bindDims(ctx, bd, h, i, j, x);
    std::optional<AffineExpr> kvHead = kvHeadExpr(
        h, queryType.getDimSize(1), op.getKey().getType().getDimSize(1));
    Value keyRead = key, valueRead = value;
    if (!kvHead) {
      keyRead = expandKvHeads(rewriter, loc, key, query);
      valueRead = expandKvHeads(rewriter, loc, value, query);
      kvHead = h;
    }
    auto map = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(5, 0, exprs, ctx);
    };
    AffineMap scoreMap = map({bd, h, i, j});

    // P = exp(s - lse): 0 for keys that take no part and in rows where none
    // does (lse = -inf, taken as 0 like a row max); P' = dropout(P).
    auto id4 = rewriter.getMultiDimIdentityMap(4);
    auto row4 =
        AffineMap::get(4, 0,
                       {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                        getAffineDimExpr(2, ctx)},
                       ctx);
    Value probs =
        linalg::GenericOp::create(
            rewriter, loc, scores.getType(), ValueRange{scores, lse},
            tensor::EmptyOp::create(rewriter, loc, scoreSizes, acc).getResult(),
            {id4, row4, id4}, SmallVector<IteratorType>(4, kPar),
            buildExpMinusMaxBody)
            .getResult(0);
    // The dropout of element (b, h, i, j) of a [B, Hq, Sq, Skv] tensor.
    auto dropout = [&](OpBuilder &nb, Location nl, Value v) {
      SmallVector<Value> idx;
      for (int64_t d = 0; sem.dropout > 0.0 && d < 4; ++d)
        idx.push_back(linalg::IndexOp::create(nb, nl, d));
      return buildDropout(nb, nl, sem, v, idx);
    };
    Value dropped = probs;
    if (sem.dropout > 0.0)
      dropped = linalg::GenericOp::create(
                    rewriter, loc, probs.getType(), ValueRange{}, probs, {id4},
                    SmallVector<IteratorType>(4, kPar),
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      linalg::YieldOp::create(nb, nl, dropout(nb, nl, args[0]));
                    })
                    .getResult(0);

    SmallVector<OpFoldResult> qSizes = getSizes(rewriter, loc, query);
    SmallVector<OpFoldResult> oSizes = getSizes(rewriter, loc, outGrad);
    OpFoldResult keys = scoreSizes[3];
    // dV, per query head: sum_i P'[b, h, i, j] dO[b, h, i, e].
    Value valueGrad = buildContraction(
        rewriter, loc, dropped, map({bd, h, x, i}), outGrad, map({bd, h, x, j}),
        map({bd, h, i, j}), {oSizes[0], oSizes[1], keys, oSizes[3]}, acc);
    // (Its loops are (b, h, j, e, i) under the names (b, h, i, j, x).)
    // dP' = dO V^T, and D = rowsum(dO * O) (loops (b, h, i, e)).
    Value droppedGrad =
        buildContraction(rewriter, loc, outGrad, map({bd, h, i, x}), valueRead,
                         map({bd, *kvHead, j, x}), scoreMap, scoreSizes, acc);
    AffineMap rowFeatures = rewriter.getMultiDimIdentityMap(4);
    Value rowDot =
        buildContraction(rewriter, loc, outGrad, rowFeatures, out, rowFeatures,
                         row4, {oSizes[0], oSizes[1], oSizes[2]}, acc);
    // dS = P (dropout(dP') - D), times the score's derivative: the
    // gradient of the raw product q.k. Zero where P is (keys that take no
    // part, whose derivative may not even be finite).
    Value scoreGrad =
        linalg::GenericOp::create(
            rewriter, loc, scores.getType(),
            ValueRange{probs, droppedGrad, rowDot, scoreDerivative},
            tensor::EmptyOp::create(rewriter, loc, scoreSizes, acc).getResult(),
            {id4, id4, row4, id4, id4}, SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  buildScoreGradient(nb, nl, args[0], dropout(nb, nl, args[1]),
                                     args[2], args[3]));
            })
            .getResult(0);
    // dQ = dS K, and dK per query head = dS^T Q (loops (b, h, j, d, i)).
    Value queryGrad = buildContraction(
        rewriter, loc, scoreGrad, map({bd, h, i, j}), keyRead,
        map({bd, *kvHead, j, x}), map({bd, h, i, x}), qSizes, acc);
    Value keyGrad = buildContraction(
        rewriter, loc, scoreGrad, map({bd, h, x, i}), query, map({bd, h, x, j}),
        map({bd, h, i, j}), {qSizes[0], qSizes[1], keys, qSizes[3]}, acc);

    rewriter.replaceOp(
        op,
        {storeInto(rewriter, loc, queryGrad, op.getQueryGradInit()),
         storeInto(rewriter, loc, sumOverGroups(rewriter, loc, keyGrad, key),
                   op.getKeyGradInit()),
         storeInto(rewriter, loc,
                   sumOverGroups(rewriter, loc, valueGrad, value),
                   op.getValueGradInit())});
    return success();
  }

  /// Marks for attn-fuse-weights (attn-lower-to-linalg's fusion-marks).
  bool fusionMarks;
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//
struct AttnLowerToLinalgPass
    : attn::impl::AttnLowerToLinalgBase<AttnLowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns, rowCopies, fusionMarks);
    // Each pattern replaces one op with ops of other dialects, so a single
    // walk suffices; the greedy driver only adds what folding finds.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult leftover = getOperation()->walk([](Operation *op) {
      if (isa<SdpaOp, WeightsOp, SdpaGradOp>(op)) {
        op->emitOpError() << "was not lowered to linalg";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace

void attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns,
                                        bool rowCopies, bool fusionMarks) {
  patterns.add<LowerSdpa, LowerWeights, LowerSdpaGrad>(patterns.getContext(),
                                                       fusionMarks);
  populateServingOpsToLinalgPatterns(patterns, rowCopies);
}
