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
/// product q.k (buildScoreDerivative), the same shape.
template <typename OpTy>
Value buildScores(OpTy op, OpBuilder &b, Value *derivative = nullptr) {
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
/// converted on store).
template <typename OpTy>
Probabilities buildProbabilities(OpTy op, OpBuilder &b, Value out) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Type acc = getAccumulatorType(op.getQuery().getType().getElementType());
  auto accAttr = [&](double v) { return b.getFloatAttr(acc, v); };
  double negInf = -std::numeric_limits<double>::infinity();
  ScoreSemantics sem = getScoreSemantics(op);
  Value masked = buildScores(op, b);
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

/// `cond ? then() : otherwise` as an scf.if yielding one value: a read
/// that must not happen out of bounds, inside a linalg.generic body.
static Value buildGuardedRead(OpBuilder &b, Location loc, Value cond,
                              function_ref<Value(OpBuilder &)> read,
                              Value otherwise) {
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location) { scf::YieldOp::create(tb, loc, read(tb)); },
      [&](OpBuilder &eb, Location) {
        scf::YieldOp::create(eb, loc, otherwise);
      });
  return ifOp.getResult(0);
}

/// `lo <= v < hi` on index values.
static Value buildInRange(OpBuilder &b, Location loc, Value v, Value lo,
                          Value hi) {
  return arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, lo),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, hi));
}

/// attn.gather_pages -> a linalg.generic writing the gathered tensor:
/// element (b, h, j, d) reads pages[page(b, j / P), j % P, h, d] (nhd;
/// the slot and the head swapped for hnd).
struct LowerGatherPages : OpRewritePattern<GatherPagesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherPagesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value pages = op.getPages(), table = op.getPageTable();
    RankedTensorType type = op.getResult().getType();
    // The result's sizes: [B, H, max_pages * P, D].
    PageCacheDims dims = op.getCacheDims();
    Value pageSize = tensor::DimOp::create(rewriter, loc, pages, dims.slot);
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(0))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, table, 0));
    if (type.isDynamicDim(1))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, pages, dims.head));
    if (type.isDynamicDim(2))
      dynamicSizes.push_back(arith::MulIOp::create(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, table, 1),
          pageSize));
    if (type.isDynamicDim(3))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, pages, 3));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type, dynamicSizes);
    auto gathered = linalg::GenericOp::create(
        rewriter, loc, empty.getType(), ValueRange{}, empty,
        {rewriter.getMultiDimIdentityMap(4)},
        SmallVector<IteratorType>(4, kPar),
        [&](OpBuilder &nb, Location nl, ValueRange) {
          Value batch = linalg::IndexOp::create(nb, nl, 0);
          Value head = linalg::IndexOp::create(nb, nl, 1);
          Value key = linalg::IndexOp::create(nb, nl, 2);
          Value feature = linalg::IndexOp::create(nb, nl, 3);
          Value page =
              buildPageIndex(nb, nl, pages, table, batch,
                             arith::DivUIOp::create(nb, nl, key, pageSize));
          Value slot = arith::RemUIOp::create(nb, nl, key, pageSize);
          linalg::YieldOp::create(
              nb, nl,
              tensor::ExtractOp::create(nb, nl, pages,
                                        dims.order(page, slot, head, feature))
                  .getResult());
        });
    rewriter.replaceOp(op, gathered.getResult(0));
    return success();
  }
};

/// attn.append_pages -> loops over (sequence, new row), each writing its
/// row [H, D] into the slot of its page where the position and the page
/// are in range (an scf.if), through tensor.insert_slice into the cache
/// the loops carry: in place once bufferized.
struct LowerAppendPages : OpRewritePattern<AppendPagesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AppendPagesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value rows = op.getRows(), cache = op.getCache();
    Value table = op.getPageTable(), positions = op.getPositions();
    RankedTensorType cacheType = op.getCache().getType();
    PageCacheDims dims = op.getCacheDims();
    auto dim = [&](OpBuilder &b, Value v, int64_t d) -> Value {
      return tensor::DimOp::create(b, loc, v, d);
    };
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value pageSize = dim(rewriter, cache, dims.slot);
    Value numPages = dim(rewriter, cache, 0);
    Value capacity =
        arith::MulIOp::create(rewriter, loc, dim(rewriter, table, 1), pageSize);
    // A row is [H, D]: one slot of a page, every head.
    OpFoldResult heads = tensor::getMixedSize(rewriter, loc, cache, dims.head);
    OpFoldResult features = tensor::getMixedSize(rewriter, loc, cache, 3);
    OpFoldResult unit = rewriter.getIndexAttr(1);
    OpFoldResult origin = rewriter.getIndexAttr(0);
    SmallVector<OpFoldResult, 4> slotSizes =
        dims.order(unit, unit, heads, features);
    auto rowType = RankedTensorType::get(
        {cacheType.getDimSize(dims.head), cacheType.getDimSize(3)},
        cacheType.getElementType());
    SmallVector<OpFoldResult> unitStrides(4, rewriter.getIndexAttr(1));
    auto inRange = [&](OpBuilder &b, Value v, Value end) {
      return buildInRange(b, loc, v, zero, end);
    };
    auto sequences = scf::ForOp::create(
        rewriter, loc, zero, dim(rewriter, rows, 0), one, ValueRange{cache},
        [&](OpBuilder &ob, Location, Value batch, ValueRange outer) {
          Value start = arith::IndexCastOp::create(
              ob, loc, ob.getIndexType(),
              tensor::ExtractOp::create(ob, loc, positions, batch));
          auto newRows = scf::ForOp::create(
              ob, loc, zero, dim(ob, rows, 2), one, outer,
              [&](OpBuilder &b, Location, Value t, ValueRange carried) {
                Value position = arith::AddIOp::create(b, loc, start, t);
                Value inTable = inRange(b, position, capacity);
                // The table is read at a slot in range even for a row
                // that is not written.
                Value safe =
                    arith::SelectOp::create(b, loc, inTable, position, zero);
                Value slot = arith::DivUIOp::create(b, loc, safe, pageSize);
                Value offset = arith::RemUIOp::create(b, loc, safe, pageSize);
                Value page = arith::IndexCastOp::create(
                    b, loc, b.getIndexType(),
                    tensor::ExtractOp::create(b, loc, table,
                                              ValueRange{batch, slot}));
                Value write = arith::AndIOp::create(b, loc, inTable,
                                                    inRange(b, page, numPages));
                auto ifOp = scf::IfOp::create(
                    b, loc, write,
                    [&](OpBuilder &tb, Location) {
                      Value row = tensor::ExtractSliceOp::create(
                          tb, loc, rowType, rows,
                          ArrayRef<OpFoldResult>{batch, tb.getIndexAttr(0), t,
                                                 tb.getIndexAttr(0)},
                          ArrayRef<OpFoldResult>{tb.getIndexAttr(1), heads,
                                                 tb.getIndexAttr(1), features},
                          unitStrides);
                      Value updated = tensor::InsertSliceOp::create(
                          tb, loc, row, carried[0],
                          dims.order<OpFoldResult>(page, offset, origin,
                                                   origin),
                          slotSizes, unitStrides);
                      scf::YieldOp::create(tb, loc, updated);
                    },
                    [&](OpBuilder &eb, Location) {
                      scf::YieldOp::create(eb, loc, carried[0]);
                    });
                scf::YieldOp::create(b, loc, ifOp.getResults());
              });
          scf::YieldOp::create(ob, loc, newRows.getResults());
        });
    rewriter.replaceOp(op, sequences.getResult(0));
    return success();
  }
};

/// One region of a sequence's destination and what is written there.
struct SliceWrite {
  Value value;
  SmallVector<OpFoldResult> offsets, sizes;
};

/// The row-copy lowering (attn-lower-to-linalg row-copies=true): an
/// scf.forall over the B sequences of `offsets` into `dest`, whose
/// iteration computes `write(b, seq, out)`, the one region of `out` (the
/// forall's view of `dest`) that sequence b owns. The region is computed
/// into a slice of `out` itself (see writeRegion), so that bufferization
/// writes `dest` in place. (One parallel_insert_slice per iteration: a
/// forall of one iteration is folded into sequential code, which lost all
/// but one of several inserts into the same output.)
static Value buildSequenceCopies(
    OpBuilder &b, Location loc, Value offsets, Value rows, Value padded,
    bool alignEnd, Value dest,
    function_ref<SliceWrite(OpBuilder &, Value, const SequenceBounds &, Value)>
        write) {
  Value batch =
      arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, offsets, 0),
                            arith::ConstantIndexOp::create(b, loc, 1));
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{batch},
                                      ValueRange{dest},
                                      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  Value sequence = forall.getInductionVar(0);
  Value out = forall.getRegionOutArgs()[0];
  SequenceBounds seq =
      buildSequenceBounds(b, loc, offsets, sequence, rows, padded, alignEnd);
  SliceWrite region = write(b, sequence, seq, out);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> strides(
      cast<RankedTensorType>(dest.getType()).getRank(), b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(b, loc, region.value, out,
                                        region.offsets, region.sizes, strides);
  return forall.getResult(0);
}

/// The region of `out` at `offsets`/`sizes`, rank-reduced to `shape`, as
/// `compute(slice)` writes it: the slice is taken from `out` so that the
/// write lands in place.
static SliceWrite writeRegion(OpBuilder &b, Location loc, Value out,
                              SmallVector<OpFoldResult> offsets,
                              SmallVector<OpFoldResult> sizes,
                              ArrayRef<int64_t> shape,
                              function_ref<Value(Value)> compute) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(out.getType()).getElementType());
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  Value slice = tensor::ExtractSliceOp::create(b, loc, type, out, offsets,
                                               sizes, strides);
  return {compute(slice), std::move(offsets), std::move(sizes)};
}

/// `tensor` with its region at `offsets`/`sizes` replaced by what
/// `compute` writes into that region (writeRegion, then the insert).
static Value updateRegion(OpBuilder &b, Location loc, Value tensor,
                          SmallVector<OpFoldResult> offsets,
                          SmallVector<OpFoldResult> sizes,
                          ArrayRef<int64_t> shape,
                          function_ref<Value(Value)> compute) {
  SliceWrite part = writeRegion(b, loc, tensor, std::move(offsets),
                                std::move(sizes), shape, compute);
  SmallVector<OpFoldResult> strides(part.offsets.size(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, part.value, tensor, part.offsets,
                                       part.sizes, strides);
}

/// `source` with its two leading dimensions swapped, written into `dest`
/// ([len, H, D] rows <-> [H, len, D] heads).
static Value swapLeadingDims(OpBuilder &b, Location loc, Value source,
                             Value dest) {
  return linalg::TransposeOp::create(b, loc, source, dest,
                                     ArrayRef<int64_t>{1, 0, 2})
      .getResult()[0];
}

/// attn.pad_sequences -> two linalg.generic ops: the lengths, and the
/// padded tensor, whose element (b, h, s, d) reads the packed row of
/// position s of sequence b, or is 0 where s is padding.
struct LowerPadSequences : OpRewritePattern<PadSequencesOp> {
  LowerPadSequences(MLIRContext *context, bool rowCopies)
      : OpRewritePattern(context), rowCopies(rowCopies) {}

  LogicalResult matchAndRewrite(PadSequencesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value packed = op.getPacked(), offsets = op.getCuSeqlens();
    RankedTensorType type = op.getResult().getType();
    bool alignEnd = op.getAlignment() == Alignment::bottom_right;
    auto dim = [&](Value v, int64_t d) -> OpFoldResult {
      return tensor::getMixedSize(rewriter, loc, v, d);
    };
    Value rows = tensor::DimOp::create(rewriter, loc, packed, 0);
    Value paddedLength =
        arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(2));
    // B: static in the result type, or the offsets' entries - 1.
    OpFoldResult batch = rewriter.getIndexAttr(type.getDimSize(0));
    if (type.isDynamicDim(0))
      batch =
          arith::SubIOp::create(
              rewriter, loc, tensor::DimOp::create(rewriter, loc, offsets, 0),
              arith::ConstantIndexOp::create(rewriter, loc, 1))
              .getResult();

    Type lengthElement = op.getLengths().getType().getElementType();
    Value lengthsInit = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{batch}, lengthElement);
    auto lengths = linalg::GenericOp::create(
        rewriter, loc, lengthsInit.getType(), ValueRange{}, lengthsInit,
        {rewriter.getMultiDimIdentityMap(1)}, {kPar},
        [&](OpBuilder &nb, Location nl, ValueRange) {
          SequenceBounds seq = buildSequenceBounds(
              nb, nl, offsets, linalg::IndexOp::create(nb, nl, 0), rows,
              paddedLength, alignEnd);
          linalg::YieldOp::create(
              nb, nl,
              arith::IndexCastOp::create(nb, nl, lengthElement, seq.length)
                  .getResult());
        });

    Value init = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, dim(packed, 1),
                               rewriter.getIndexAttr(type.getDimSize(2)),
                               dim(packed, 2)},
        type.getElementType());
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    if (rowCopies) {
      // Per sequence, its [1, H, S, D] block, rank-reduced to [H, S, D]:
      // zeros before and after the sequence, its [len, H, D] rows
      // transposed in between.
      RankedTensorType packedType = op.getPacked().getType();
      int64_t heads = packedType.getDimSize(1),
              features = packedType.getDimSize(2);
      Value padded = buildSequenceCopies(
          rewriter, loc, offsets, rows, paddedLength, alignEnd, init,
          [&](OpBuilder &b, Value sequence, const SequenceBounds &seq,
              Value out) {
            OpFoldResult zeroIndex = b.getIndexAttr(0), one = b.getIndexAttr(1);
            OpFoldResult h = dim(packed, 1), d = dim(packed, 2);
            OpFoldResult length = b.getIndexAttr(type.getDimSize(2));
            Value end =
                arith::AddIOp::create(b, loc, seq.paddedStart, seq.length);
            Value after = arith::SubIOp::create(b, loc, paddedLength, end);
            Value source = tensor::ExtractSliceOp::create(
                b, loc, packed,
                ArrayRef<OpFoldResult>{seq.start, zeroIndex, zeroIndex},
                ArrayRef<OpFoldResult>{seq.length, h, d},
                SmallVector<OpFoldResult>(3, one));
            // Positions [at, at + count) of the block, as `compute`
            // writes them.
            auto positions = [&](Value block, OpFoldResult at,
                                 OpFoldResult count,
                                 function_ref<Value(Value)> compute) {
              return updateRegion(
                  b, loc, block, {zeroIndex, at, zeroIndex}, {h, count, d},
                  {heads, ShapedType::kDynamic, features}, compute);
            };
            auto zeros = [&](Value slice) {
              return linalg::FillOp::create(b, loc, zero, slice).getResult(0);
            };
            auto sequenceRows = [&](Value slice) {
              return swapLeadingDims(b, loc, source, slice);
            };
            return writeRegion(
                b, loc, out, {sequence, zeroIndex, zeroIndex, zeroIndex},
                {one, h, length, d}, {heads, type.getDimSize(2), features},
                [&](Value block) {
                  block = positions(block, zeroIndex, seq.paddedStart, zeros);
                  block = positions(block, seq.paddedStart, seq.length,
                                    sequenceRows);
                  return positions(block, end, after, zeros);
                });
          });
      rewriter.replaceOp(op, {padded, lengths.getResult(0)});
      return success();
    }
    auto result = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{}, init,
        {rewriter.getMultiDimIdentityMap(4)},
        SmallVector<IteratorType>(4, kPar),
        [&](OpBuilder &nb, Location nl, ValueRange) {
          Value head = linalg::IndexOp::create(nb, nl, 1);
          Value position = linalg::IndexOp::create(nb, nl, 2);
          Value feature = linalg::IndexOp::create(nb, nl, 3);
          SequenceBounds seq = buildSequenceBounds(
              nb, nl, offsets, linalg::IndexOp::create(nb, nl, 0), rows,
              paddedLength, alignEnd);
          Value r = arith::SubIOp::create(nb, nl, position, seq.paddedStart);
          Value inSequence = buildInRange(
              nb, nl, r, arith::ConstantIndexOp::create(nb, nl, 0), seq.length);
          Value value = buildGuardedRead(
              nb, nl, inSequence,
              [&](OpBuilder &tb) -> Value {
                Value row = arith::AddIOp::create(tb, nl, seq.start, r);
                return tensor::ExtractOp::create(
                    tb, nl, packed, ValueRange{row, head, feature});
              },
              zero);
          linalg::YieldOp::create(nb, nl, value);
        });
    rewriter.replaceOp(op, {result.getResult(0), lengths.getResult(0)});
    return success();
  }

  /// Copies of whole rows (scf.forall over the sequences), not gathers.
  bool rowCopies;
};

/// attn.unpad_sequences -> two linalg.generic ops: the sequence of every
/// packed row (-1 for rows none covers; a scan over the B sequences per
/// row), then the packed tensor, whose row t reads its sequence's padded
/// position or keeps init's value.
struct LowerUnpadSequences : OpRewritePattern<UnpadSequencesOp> {
  LowerUnpadSequences(MLIRContext *context, bool rowCopies)
      : OpRewritePattern(context), rowCopies(rowCopies) {}

  LogicalResult matchAndRewrite(UnpadSequencesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value padded = op.getPadded(), offsets = op.getCuSeqlens();
    Value init = op.getInit();
    bool alignEnd = op.getAlignment() == Alignment::bottom_right;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value rows = tensor::DimOp::create(rewriter, loc, init, 0);
    Value paddedLength = tensor::DimOp::create(rewriter, loc, padded, 2);
    if (rowCopies) {
      // Each sequence's [1, H, len, D] padded rows, rank-reduced to
      // [H, len, D], transposed into its [len, H, D] rows of init.
      RankedTensorType paddedType = op.getPadded().getType();
      int64_t heads = paddedType.getDimSize(1),
              features = paddedType.getDimSize(3);
      Value packed = buildSequenceCopies(
          rewriter, loc, offsets, rows, paddedLength, alignEnd, init,
          [&](OpBuilder &b, Value sequence, const SequenceBounds &seq,
              Value out) {
            OpFoldResult zeroIndex = b.getIndexAttr(0), one = b.getIndexAttr(1);
            OpFoldResult h = tensor::getMixedSize(b, loc, padded, 1);
            OpFoldResult d = tensor::getMixedSize(b, loc, padded, 3);
            Value source = tensor::ExtractSliceOp::create(
                b, loc,
                RankedTensorType::get({heads, ShapedType::kDynamic, features},
                                      paddedType.getElementType()),
                padded,
                ArrayRef<OpFoldResult>{sequence, zeroIndex, seq.paddedStart,
                                       zeroIndex},
                ArrayRef<OpFoldResult>{one, h, seq.length, d},
                SmallVector<OpFoldResult>(4, one));
            return writeRegion(b, loc, out, {seq.start, zeroIndex, zeroIndex},
                               {seq.length, h, d},
                               {ShapedType::kDynamic, heads, features},
                               [&](Value slice) {
                                 return swapLeadingDims(b, loc, source, slice);
                               });
          });
      rewriter.replaceOp(op, packed);
      return success();
    }
    Value batch = arith::SubIOp::create(
        rewriter, loc, tensor::DimOp::create(rewriter, loc, offsets, 0), one);
    Type i64 = rewriter.getI64Type();
    Value idsInit = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{tensor::getMixedSize(rewriter, loc, init, 0)},
        i64);
    auto ids = linalg::GenericOp::create(
        rewriter, loc, idsInit.getType(), ValueRange{}, idsInit,
        {rewriter.getMultiDimIdentityMap(1)}, {kPar},
        [&](OpBuilder &nb, Location nl, ValueRange) {
          Value row = linalg::IndexOp::create(nb, nl, 0);
          Value none = arith::ConstantIndexOp::create(nb, nl, -1);
          auto scan = scf::ForOp::create(
              nb, nl, zero, batch, one, ValueRange{none},
              [&](OpBuilder &fb, Location fl, Value b, ValueRange found) {
                SequenceBounds seq = buildSequenceBounds(
                    fb, fl, offsets, b, rows, paddedLength, alignEnd);
                Value inside = buildInRange(
                    fb, fl, row, seq.start,
                    arith::AddIOp::create(fb, fl, seq.start, seq.length));
                scf::YieldOp::create(
                    fb, fl,
                    arith::SelectOp::create(fb, fl, inside, b, found[0])
                        .getResult());
              });
          linalg::YieldOp::create(
              nb, nl,
              arith::IndexCastOp::create(nb, nl, i64, scan.getResult(0))
                  .getResult());
        });

    auto rowMap = AffineMap::get(3, 0, {rewriter.getAffineDimExpr(0)},
                                 rewriter.getContext());
    auto result = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ids.getResult(0), init,
        {rowMap, rewriter.getMultiDimIdentityMap(3)},
        SmallVector<IteratorType>(3, kPar),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value row = linalg::IndexOp::create(nb, nl, 0);
          Value head = linalg::IndexOp::create(nb, nl, 1);
          Value feature = linalg::IndexOp::create(nb, nl, 2);
          Value sequence =
              arith::IndexCastOp::create(nb, nl, nb.getIndexType(), args[0]);
          Value covered =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, sequence,
                                    arith::ConstantIndexOp::create(nb, nl, 0));
          Value value = buildGuardedRead(
              nb, nl, covered,
              [&](OpBuilder &tb) -> Value {
                SequenceBounds seq = buildSequenceBounds(
                    tb, nl, offsets, sequence, rows, paddedLength, alignEnd);
                Value position = arith::AddIOp::create(
                    tb, nl, seq.paddedStart,
                    arith::SubIOp::create(tb, nl, row, seq.start));
                return tensor::ExtractOp::create(
                    tb, nl, padded,
                    ValueRange{sequence, head, position, feature});
              },
              args[1]);
          linalg::YieldOp::create(nb, nl, value);
        });
    rewriter.replaceOp(op, result.getResult(0));
    return success();
  }

  /// Copies of whole rows (scf.forall over the sequences), not gathers.
  bool rowCopies;
};

/// attn.weights -> the probabilities, stored straight into its init.

struct LowerWeights : OpRewritePattern<WeightsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WeightsOp op,
                                PatternRewriter &rewriter) const override {
    Value probs = buildProbabilities(op, rewriter, op.getInit()).probs;
    probs.getDefiningOp()->setAttr(kProbabilitiesMarker,
                                   rewriter.getUnitAttr());
    rewriter.replaceOp(op, probs);
    return success();
  }
};

/// attn.sdpa -> probabilities in the accumulator type (f32, or f64 for f64),
/// then O = P V accumulated in that type and stored into the op's init in
/// its element type.
struct LowerSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

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
    Probabilities probabilities = buildProbabilities(op, rewriter, probInit);
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
  using OpRewritePattern::OpRewritePattern;

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
    Value scores = buildScores(op, rewriter, &scoreDerivative);
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
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//
struct AttnLowerToLinalgPass
    : attn::impl::AttnLowerToLinalgBase<AttnLowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns, rowCopies);
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
                                        bool rowCopies) {
  patterns.add<LowerSdpa, LowerWeights, LowerSdpaGrad, LowerGatherPages,
               LowerAppendPages>(patterns.getContext());
  patterns.add<LowerPadSequences, LowerUnpadSequences>(patterns.getContext(),
                                                       rowCopies);
}
