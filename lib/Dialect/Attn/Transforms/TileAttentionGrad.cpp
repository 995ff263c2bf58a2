//===- TileAttentionGrad.cpp - FlashAttention-2 style backward ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn.sdpa_grad as a loop nest over tiles that never holds more than a
// tile of scores: a parallel loop over (batch, key/value head, key chunk),
// each iteration owning the gradients of its chunk of its head's keys and
// values (every query head of the group adds into them, with no other
// iteration writing there) and its chunk's share of its group's query
// gradients (summed over the chunks after the loop; with one chunk, the
// loop writes dQ itself). Where batch x heads would leave threads idle the
// keys are split into chunks (splitKeyChunks), so that a single head
// trains on every core. For each query head of the group and each
// query tile, the key tiles the masks leave visible: the scores and
// P = exp(S - lse), recomputed from the forward's log-sum-exp, then dV, dP,
// dS, dQ and dK. Each step works on the transposed tile [keys, rows]:
//   S^T = K_j Q_i^T,          P^T = exp(S^T - lse_i),
//   dV_j += P^T dO_i,         dP^T = V_j dO_i^T,
//   dS^T = P^T (dP^T - rowsum(dO_i O_i)),
//   dK_j += dS^T Q_i,         dQ_i^T += K_j^T dS^T,
// so that all five products are row-major matrix products (the register
// blocks of attn-vectorize-tiles) and only Q_i, dO_i and dQ_i are transposed,
// once per query tile rather than P and dS in every step. Dropout and
// score_mod's derivative apply as in the reference lowering
// (AttnToLinalg.cpp). Rows and keys are padded to whole tiles, so that every
// tile tensor has a constant shape: padding keys are masked out, padding
// rows have lse = +inf (P = 0) and dO = 0.
//
//===----------------------------------------------------------------------===//

#include "TileBuilderBase.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the loop nest for one attn.sdpa_grad.
class GradTileBuilder : TileBuilderBase {
public:
  using TileBuilderBase::getLoop;

  GradTileBuilder(SdpaGradOp op, OpBuilder &b, int64_t qTile, int64_t kvTile,
                  int64_t chunks, bool headSums)
      : TileBuilderBase(b, op.getLoc(), qTile, kvTile,
                        op.getQuery().getType().getElementType()),
        op(op), sem(getScoreSemantics(op)), chunks(chunks), headSums(headSums) {
  }

  /// dQ, dK and dV, in the op's inits.
  SmallVector<Value> build();

private:
  /// One query tile of query head `head` against its visible key tiles;
  /// returns (dQ_i, dK, dV) with the head's dK and dV accumulated.
  SmallVector<Value> buildQueryTile(Value batch, Value head, Value kvHead,
                                    Value rowStart, Value keyGrad,
                                    Value valueGrad);

  /// One key tile: returns (dQ_i, dK, dV) updated. An unmasked step is
  /// for a whole tile in which every row sees every key: no keep condition
  /// is evaluated there, and no padding key appears.
  SmallVector<Value> buildStep(Value batch, Value head, Value kvHead,
                               Value rowStart, Value keyStart, ValueRange tile,
                               ValueRange carried, bool masked);

  /// `x` ([rows, n]) transposed, [n, rows].
  Value transposed(Value x) { return createTranspose(b, loc, x, {1, 0}); }
  /// A zero-filled [rows, n] tile in the accumulator type.
  Value zeros(int64_t rows, int64_t n) {
    return createFilledTensor(b, loc, {b.getIndexAttr(rows), b.getIndexAttr(n)},
                              accAttr(0));
  }
  /// `total + part` for two 2-D tiles of one shape, written into `part`
  /// (a head's fresh accumulators). Not into `total`: where the loops fold
  /// away (one head), `total` is the zero tile CSE merged with the head's
  /// initial accumulators, and a result written into it met a one-shot
  /// bufferization of the forall's inserts that copied dK's tile over dV's
  /// before reading it.
  Value addTiles(Value total, Value part) {
    AffineMap id2 = b.getMultiDimIdentityMap(2);
    return linalg::GenericOp::create(
               b, loc, part.getType(), total, part, {id2, id2}, {kPar, kPar},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, nl,
                     arith::AddFOp::create(nb, nl, args[0], args[1])
                         .getResult());
               })
        .getResult(0);
  }
  /// `tensor[b, h, start : start + len]` as a 1-D tensor.
  Value slice1d(Value tensor, Value batch, Value head, Value start,
                int64_t len);
  /// `tensor[start : start + len, :]` of a 2-D tensor, and its insertion
  /// back.
  Value rowsOf(Value tensor, Value start, int64_t len);
  Value insertRows(Value tile, Value into, Value start);

  SdpaGradOp op;
  ScoreSemantics sem;
  // Key chunks per (batch, key/value head), and the keys [chunkStart,
  // chunkEnd) of the iteration being built: dK and dV accumulate rows of
  // that chunk only (row 0 = key chunkStart).
  int64_t chunks = 1;
  Value chunkStart, chunkEnd;
  // Whether each query head of a group sums its dK and dV apart
  // (attn-tile grad-head-sums).
  bool headSums = true;
  // Scores in log2 units, as in the forward; `queryScaled` as there.
  Log2ScoreScale scale;
  bool queryScaled = false;
  // The natural-unit scale, the derivative of a score without score_mod.
  Value naturalScale;
  Value queryLength, keyCount, kvLength, lastRow, lastKey;
  // Whether Skv may not be a whole number of key tiles: the padding keys
  // are then masked in every step.
  bool padKeys = true;
  MaskAnalysis masks;
  // Padded to whole tiles, in the accumulator type where a tile reads them
  // as such: Q and dO rows, lse (+inf) and rowsum(dO O) rows, K and V keys.
  Value query, outGrad, lse, rowTerm, key, keyT, valueSource;
  int64_t headDim = 0, valueDim = 0;
};

Value GradTileBuilder::slice1d(Value tensor, Value batch, Value head,
                               Value start, int64_t len) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({len}, type.getElementType()), tensor,
      ArrayRef<OpFoldResult>{batch, head, start},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(len)},
      ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
}

Value GradTileBuilder::rowsOf(Value tensor, Value start, int64_t len) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({len, type.getDimSize(1)}, type.getElementType()),
      tensor, ArrayRef<OpFoldResult>{start, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(len),
                             tensor::getMixedSize(b, loc, tensor, 1)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

Value GradTileBuilder::insertRows(Value tile, Value into, Value start) {
  return tensor::InsertSliceOp::create(
      b, loc, tile, into, ArrayRef<OpFoldResult>{start, b.getIndexAttr(0)},
      tensor::getMixedSizes(b, loc, tile),
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

SmallVector<Value> GradTileBuilder::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  headDim = op.getQuery().getType().getDimSize(3);
  valueDim = op.getValue().getType().getDimSize(3);
  queryLength = tensor::DimOp::create(b, loc, q, 2);
  keyCount = tensor::DimOp::create(b, loc, k, 2);
  lastRow = arith::SubIOp::create(b, loc, queryLength, constIndex(1));
  lastKey = arith::SubIOp::create(b, loc, keyCount, constIndex(1));
  int64_t staticKeys = op.getKey().getType().getDimSize(2);
  padKeys = ShapedType::isDynamic(staticKeys) || staticKeys % kvTile != 0;
  masks = analyzeMasks(op);
  scale = buildLog2ScoreScale(b, loc, sem, q, acc);
  queryScaled = !scale.log2e;
  naturalScale = buildScale(b, loc, sem, q, acc);

  // rowsum(dO * O) per row, [B, Hq, Sq].
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  AffineMap rowMap = AffineMap::get(
      4, 0,
      {b.getAffineDimExpr(0), b.getAffineDimExpr(1), b.getAffineDimExpr(2)},
      ctx);
  Value rowZero =
      createFilledTensor(b, loc, getSizes(b, loc, q, {0, 1, 2}), accAttr(0));
  Value rows =
      linalg::GenericOp::create(b, loc, rowZero.getType(),
                                ValueRange{op.getOutGrad(), op.getOut()},
                                rowZero, {id4, id4, rowMap},
                                {kPar, kPar, kPar, kRed}, buildMulAccBody)
          .getResult(0);

  // Padding to whole tiles: every tile tensor below has a constant shape.
  double inf = std::numeric_limits<double>::infinity();
  query = padToTiles(createElementCast(b, loc, q, acc), 2, qTile, accAttr(0));
  outGrad = padToTiles(createElementCast(b, loc, op.getOutGrad(), acc), 2,
                       qTile, accAttr(0));
  lse = padToTiles(op.getLse(), 2, qTile, accAttr(inf));
  rowTerm = padToTiles(rows, 2, qTile, accAttr(0));
  key = padToKeyTiles(createElementCast(b, loc, k, acc));
  keyT = packTiles(createElementCast(b, loc, k, acc), {kvTile}, {},
                   {0, 1, 2, 4, 3});
  valueSource = padToKeyTiles(createElementCast(b, loc, v, acc));

  // The gradients of the padded problem, in the accumulator type.
  auto paddedSizes = [&](Value x, Value like) {
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, like);
    sizes[2] = tensor::getMixedSize(b, loc, x, 2);
    return sizes;
  };
  // Where a gradient needs neither padding nor a conversion, the loop
  // writes into the op's init itself.
  auto gradientInit = [&](Value padded, Value init) -> Value {
    auto type = cast<RankedTensorType>(init.getType());
    if (element == acc && type.hasStaticShape() &&
        cast<RankedTensorType>(padded.getType()).getDimSize(2) ==
            type.getDimSize(2))
      return init;
    return tensor::EmptyOp::create(b, loc, paddedSizes(padded, init), acc);
  };
  Value queryGrad = gradientInit(query, op.getQueryGradInit());
  Value keyGrad = gradientInit(key, op.getKeyGradInit());
  Value valueGrad = gradientInit(key, op.getValueGradInit());
  // With key chunks, each chunk's share of dQ, [chunks, B, Hq, Sq, D],
  // summed after the loop.
  Value queryGradShares = queryGrad;
  if (chunks > 1) {
    SmallVector<OpFoldResult> sizes = paddedSizes(query, op.getQueryGradInit());
    sizes.insert(sizes.begin(), b.getIndexAttr(chunks));
    queryGradShares = tensor::EmptyOp::create(b, loc, sizes, acc);
  }

  OpFoldResult batches = tensor::getMixedSize(b, loc, q, 0);
  OpFoldResult kvHeads = tensor::getMixedSize(b, loc, k, 1);
  Value group =
      arith::DivUIOp::create(b, loc, tensor::DimOp::create(b, loc, q, 1),
                             tensor::DimOp::create(b, loc, k, 1));
  Value paddedRows = tensor::DimOp::create(b, loc, query, 2);
  Value paddedKeys = tensor::DimOp::create(b, loc, key, 2);
  SmallVector<OpFoldResult> iterations = {batches, kvHeads};
  if (chunks > 1)
    iterations.push_back(b.getIndexAttr(chunks));
  auto forall = loop = scf::ForallOp::create(
      b, loc, iterations, ValueRange{queryGradShares, keyGrad, valueGrad},
      /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    Value batch = forall.getInductionVar(0), kvHead = forall.getInductionVar(1);
    // The chunk's keys: whole tiles, ceil(tiles / chunks) of them (the
    // last chunks may be shorter or empty).
    Value chunkKeys = paddedKeys;
    if (chunks > 1) {
      Value tilesPerChunk = arith::CeilDivUIOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, paddedKeys, constIndex(kvTile)),
          constIndex(chunks));
      Value keysPerChunk =
          arith::MulIOp::create(b, loc, tilesPerChunk, constIndex(kvTile));
      chunkStart = arith::MinUIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, forall.getInductionVar(2),
                                keysPerChunk),
          paddedKeys);
      chunkEnd = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, chunkStart, keysPerChunk),
          paddedKeys);
      chunkKeys = arith::SubIOp::create(b, loc, chunkEnd, chunkStart);
    }
    kvLength = keyCount;
    if (Value lens = op.getKvLens()) {
      Value len = tensor::ExtractOp::create(b, loc, lens, batch);
      kvLength = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
    }
    Value firstHead = arith::MulIOp::create(b, loc, kvHead, group);
    // This group's dQ rows, [G, padded Sq, D], and its dK, dV.
    auto groupType = RankedTensorType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, headDim}, acc);
    Value groupGrad = tensor::EmptyOp::create(b, loc, groupType,
                                              ValueRange{group, paddedRows});
    auto keysType = [&](int64_t features) {
      return RankedTensorType::get({ShapedType::kDynamic, features}, acc);
    };
    auto keysZeros = [&](int64_t features) -> Value {
      Value filled = createFilledTensor(
          b, loc, {chunkKeys, b.getIndexAttr(features)}, accAttr(0));
      return tensor::CastOp::create(b, loc, keysType(features), filled);
    };
    Value keyAcc = keysZeros(headDim);
    Value valueAcc = keysZeros(valueDim);

    Value queryTiles =
        arith::DivUIOp::create(b, loc, paddedRows, constIndex(qTile));
    auto heads = scf::ForOp::create(
        b, loc, constIndex(0), group, constIndex(1),
        ValueRange{groupGrad, keyAcc, valueAcc},
        [&](OpBuilder &nb, Location, Value g, ValueRange headCarried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value head = arith::AddIOp::create(b, loc, firstHead, g);
          // Each query head sums its rows' contributions to dK and dV in
          // its own accumulators, added into the group's after its rows: one
          // running sum over the whole group (G x Sq terms in one order) made
          // the float32 error grow with the group, to 3x torch's at 8:1 GQA
          // (torch sums each head, then the heads). One pass over the
          // chunk's [keys, D] tiles per head; the products cost Sq times that.
          // Without headSums, the rows add into the group's sums directly.
          SmallVector<Value> inits(headCarried);
          if (headSums)
            inits = {headCarried[0], keysZeros(headDim), keysZeros(valueDim)};
          auto tiles = scf::ForOp::create(
              b, loc, constIndex(0), queryTiles, constIndex(1), inits,
              [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPoint(nb.getInsertionBlock(),
                                    nb.getInsertionPoint());
                Value rowStart =
                    arith::MulIOp::create(b, loc, t, constIndex(qTile));
                SmallVector<Value> grads = buildQueryTile(
                    batch, head, kvHead, rowStart, carried[1], carried[2]);
                Value updated = tensor::InsertSliceOp::create(
                    b, loc, grads[0], carried[0],
                    ArrayRef<OpFoldResult>{g, rowStart, b.getIndexAttr(0)},
                    ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                                           b.getIndexAttr(qTile),
                                           b.getIndexAttr(headDim)},
                    ArrayRef<OpFoldResult>(
                        SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
                scf::YieldOp::create(b, loc,
                                     ValueRange{updated, grads[1], grads[2]});
              });
          if (!headSums) {
            scf::YieldOp::create(b, loc, tiles.getResults());
            return;
          }
          scf::YieldOp::create(
              b, loc,
              ValueRange{tiles.getResult(0),
                         addTiles(headCarried[1], tiles.getResult(1)),
                         addTiles(headCarried[2], tiles.getResult(2))});
        });

    b.setInsertionPointToStart(forall.getTerminator().getBody());
    OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    SmallVector<OpFoldResult> queryOffsets = {batch, firstHead, zero, zero};
    SmallVector<OpFoldResult> querySizes = {one, group, paddedRows,
                                            b.getIndexAttr(headDim)};
    if (chunks > 1) {
      queryOffsets.insert(queryOffsets.begin(), forall.getInductionVar(2));
      querySizes.insert(querySizes.begin(), one);
    }
    tensor::ParallelInsertSliceOp::create(
        b, loc, heads.getResult(0), forall.getRegionOutArgs()[0], queryOffsets,
        querySizes, SmallVector<OpFoldResult>(querySizes.size(), one));
    OpFoldResult firstKey = chunkStart ? OpFoldResult(chunkStart) : zero;
    for (auto [i, features] : {std::pair<int, int64_t>{1, headDim},
                               std::pair<int, int64_t>{2, valueDim}})
      tensor::ParallelInsertSliceOp::create(
          b, loc, heads.getResult(i), forall.getRegionOutArgs()[i],
          ArrayRef<OpFoldResult>{batch, kvHead, firstKey, zero},
          ArrayRef<OpFoldResult>{one, one, chunkKeys, b.getIndexAttr(features)},
          SmallVector<OpFoldResult>(4, one));
  }

  // dQ: the chunks' shares summed (into the init where the loop would
  // have written into it).
  SmallVector<Value> padded = forall.getResults();
  if (chunks > 1) {
    AffineMap shares = b.getMultiDimIdentityMap(5);
    AffineMap summed =
        AffineMap::get(5, 0, shares.getResults().drop_front(), ctx);
    Value zero =
        linalg::FillOp::create(
            b, loc, ValueRange{arith::ConstantOp::create(b, loc, accAttr(0))},
            queryGrad)
            .getResult(0);
    padded[0] =
        linalg::GenericOp::create(
            b, loc, zero.getType(), padded[0], zero, {shares, summed},
            {kRed, kPar, kPar, kPar, kPar},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  arith::AddFOp::create(nb, nl, args[0], args[1]).getResult());
            })
            .getResult(0);
  }

  // Cut the padding off and convert into the inits.
  SmallVector<Value> results;
  for (auto [result, init, loopInit] :
       llvm::zip_equal(padded, op.getDpsInits(),
                       ValueRange{queryGrad, keyGrad, valueGrad})) {
    if (loopInit == init) {
      results.push_back(result);
      continue;
    }
    SmallVector<OpFoldResult> sizes = getSizes(b, loc, init);
    Value cut = tensor::ExtractSliceOp::create(
        b, loc, result, SmallVector<OpFoldResult>(4, b.getIndexAttr(0)), sizes,
        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    results.push_back(linalg::GenericOp::create(
                          b, loc, init.getType(), cut, init, {id4, id4},
                          SmallVector<utils::IteratorType>(4, kPar),
                          [&](OpBuilder &nb, Location nl, ValueRange args) {
                            linalg::YieldOp::create(
                                nb, nl, castFloat(nb, nl, args[0], element));
                          })
                          .getResult(0));
  }
  return results;
}

SmallVector<Value> GradTileBuilder::buildQueryTile(Value batch, Value head,
                                                   Value kvHead, Value rowStart,
                                                   Value keyGrad,
                                                   Value valueGrad) {
  Value qValue = slice2d(query, batch, head, rowStart, constIndex(qTile));
  Value scoresQuery = qValue;
  if (queryScaled) {
    // Scores in log2 units straight from the product (see attn-tile).
    scoresQuery = createElementCast(b, loc, qValue, acc, scale.scale);
  }
  Value dO = slice2d(outGrad, batch, head, rowStart, constIndex(qTile));
  // lse in log2 units, as the scores.
  Value lseTile = slice1d(lse, batch, head, rowStart, qTile);
  Value log2e = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(acc, llvm::numbers::log2e));
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  lseTile =
      linalg::GenericOp::create(
          b, loc, lseTile.getType(), ValueRange{}, lseTile, {id1}, {kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                arith::MulFOp::create(nb, nl, args[0], log2e).getResult());
          })
          .getResult(0);
  Value rowTermTile = slice1d(rowTerm, batch, head, rowStart, qTile);
  SmallVector<Value> tile = {transposed(scoresQuery), qValue,  dO,
                             transposed(dO),          lseTile, rowTermTile};

  // dQ_i^T, [D, rows], transposed back after the key tiles.
  SmallVector<Value> carried = {zeros(headDim, qTile), keyGrad, valueGrad};
  if (masks.band.empty) {
    carried[0] = zeros(qTile, headDim);
    return carried;
  }
  // The key tiles some row of the tile sees (rows past Sq are padding).
  Value tileLastRow = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, rowStart, constIndex(qTile - 1)),
      lastRow);
  BandValues values{batch, head, queryLength, kvLength};
  KeyTileRanges ranges = buildKeyTileRanges(
      b, loc, masks.band, rowStart, tileLastRow, values, keyCount, kvTile,
      /*wholeFullTiles=*/true);
  if (chunks > 1) {
    // Only this iteration's chunk of keys (the ranges and the chunk are
    // whole tiles, so the intersections are too).
    for (Value *end :
         {&ranges.first, &ranges.fullStart, &ranges.fullEnd, &ranges.end})
      *end = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, *end, chunkStart), chunkEnd);
  }
  auto loop = [&](const KeyTiles &range, bool masked, ValueRange init) {
    return buildKeyTileLoop(
        range, init, [&](Value keyStart, ValueRange stepCarried) {
          return buildStep(batch, head, kvHead, rowStart, keyStart, tile,
                           stepCarried, masked);
        });
  };
  // As in the forward: without an exact band every tile of it is masked;
  // with one, the partial tiles on both sides of the full ones in one
  // masked loop, then the full ones unmasked.
  if (!masks.exact)
    carried = loop({ranges.first, ranges.end}, /*masked=*/true, carried);
  else
    carried =
        loop({ranges.fullStart, ranges.fullEnd}, /*masked=*/false,
             loop({ranges.first, ranges.fullStart, ranges.fullEnd, ranges.end},
                  /*masked=*/true, carried));
  carried[0] = transposed(carried[0]);
  return carried;
}

SmallVector<Value> GradTileBuilder::buildStep(Value batch, Value head,
                                              Value kvHead, Value rowStart,
                                              Value keyStart, ValueRange tile,
                                              ValueRange carried, bool masked) {
  Value scoresQueryT = tile[0], qValue = tile[1], dO = tile[2], dOT = tile[3],
        lseTile = tile[4], rowTermTile = tile[5];
  Value queryGradT = carried[0], keyGrad = carried[1], valueGrad = carried[2];
  Value keys = constIndex(kvTile);
  // Tiles are [keys, rows]: (d0, d1) = (key, row).
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, ctx);
  auto indices = [&](OpBuilder &nb, Location nl) -> SmallVector<Value> {
    Value i = arith::AddIOp::create(nb, nl, rowStart,
                                    linalg::IndexOp::create(nb, nl, 1));
    Value j = arith::AddIOp::create(nb, nl, keyStart,
                                    linalg::IndexOp::create(nb, nl, 0));
    return {batch, head, i, j};
  };

  // P^T = exp2(S^T - lse) from S^T (log2 units) with the masks and the
  // padding keys masked out: 0 for those, past Sq (lse = +inf) and where no
  // key took part; in the same pass, each score's derivative with respect
  // to q.k where score_mod needs one.
  Value keyTile = slice2d(key, batch, kvHead, keyStart, keys);
  Value product = buildContraction(keyTile, scoresQueryT, zeros(kvTile, qTile));
  Log2ScoreScale stepScale = queryScaled ? Log2ScoreScale{} : scale;
  ScoreSemantics stepSem = masked ? sem : sem.withoutKeepConditions();
  SmallVector<Value> outs = {product};
  if (sem.scoreMod)
    outs.push_back(tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{b.getIndexAttr(kvTile), b.getIndexAttr(qTile)},
        acc));
  SmallVector<AffineMap> maps = {rowMap};
  maps.append(outs.size(), id2);
  auto scored = linalg::GenericOp::create(
      b, loc, TypeRange(ValueRange(outs)), lseTile, outs, maps, {kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx = indices(nb, nl);
        Value inRange =
            padKeys && masked
                ? arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                        idx[3], keyCount)
                      .getResult()
                : Value();
        // Padding rows and keys read the last real one's mask and indices
        // (a mask read past its end would be out of bounds); their P is 0
        // whatever they read. Only a mask or a region reads at them.
        SmallVector<Value> readIdx = idx;
        if (stepSem.hasMask || stepSem.maskMod || stepSem.scoreMod) {
          readIdx[2] = arith::MinSIOp::create(nb, nl, idx[2], lastRow);
          readIdx[3] = arith::MinSIOp::create(nb, nl, idx[3], lastKey);
        }
        Value maskValue = stepSem.hasMask
                              ? buildMaskElement(nb, nl, op.getMask(), readIdx)
                              : Value();
        Value score =
            buildLog2ModifiedScore(nb, nl, stepSem, args[1], stepScale, readIdx,
                                   maskValue, kvLength, queryLength, inRange);
        Value diff = arith::SubFOp::create(nb, nl, score,
                                           buildSafeRowMax(nb, nl, args[0]));
        SmallVector<Value> results = {math::Exp2Op::create(nb, nl, diff)};
        // With score_mod the query is not scaled (the score is not linear
        // in the scale): args[1] is the raw product q.k.
        if (sem.scoreMod)
          results.push_back(buildScoreDerivative(
              nb, nl, stepSem, args[1], naturalScale, readIdx, maskValue));
        linalg::YieldOp::create(nb, nl, results);
      });
  Value probs = scored.getResult(0);
  Value derivative = sem.scoreMod ? scored.getResult(1) : Value();
  auto dropout = [&](OpBuilder &nb, Location nl, Value x) {
    return buildDropout(nb, nl, sem, x, indices(nb, nl));
  };
  Value dropped = probs;
  if (sem.dropout > 0.0)
    dropped =
        linalg::GenericOp::create(
            b, loc, probs.getType(), ValueRange{}, probs, {id2}, {kPar, kPar},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(nb, nl, dropout(nb, nl, args[0]));
            })
            .getResult(0);

  // dV_j += P'^T dO_i, in the chunk's rows.
  Value chunkRow = chunkStart
                       ? arith::SubIOp::create(b, loc, keyStart, chunkStart)
                       : keyStart;
  Value valueTile = rowsOf(valueGrad, chunkRow, kvTile);
  valueGrad =
      insertRows(buildContraction(dropped, dO, valueTile), valueGrad, chunkRow);
  // dP'^T = V_j dO_i^T; dS^T = P^T (dropout(dP'^T) - D_i) dScore/dq.k, 0
  // where P is.
  Value droppedGrad =
      buildContraction(slice2d(valueSource, batch, kvHead, keyStart, keys), dOT,
                       zeros(kvTile, qTile));
  SmallVector<Value> inputs = {probs, droppedGrad, rowTermTile};
  maps = {id2, id2, rowMap};
  if (derivative) {
    inputs.push_back(derivative);
    maps.push_back(id2);
  }
  maps.push_back(id2);
  Value scoreGrad =
      linalg::GenericOp::create(
          b, loc, probs.getType(), inputs, zeros(kvTile, qTile), maps,
          {kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                buildScoreGradient(nb, nl, args[0], dropout(nb, nl, args[1]),
                                   args[2],
                                   derivative ? args[3] : naturalScale));
          })
          .getResult(0);
  // dK_j += dS^T Q_i, dQ_i^T += K_j^T dS^T.
  Value keyGradTile = rowsOf(keyGrad, chunkRow, kvTile);
  keyGrad = insertRows(buildContraction(scoreGrad, qValue, keyGradTile),
                       keyGrad, chunkRow);
  queryGradT =
      buildContraction(packedTile(keyT, batch, kvHead, keyStart, 1, keys),
                       scoreGrad, queryGradT);
  return {queryGradT, keyGrad, valueGrad};
}

/// A tile no longer than a static sequence it is used on: its rows (the
/// innermost dimension of the transposed [keys, rows] tiles, the register
/// blocks' columns) a power of two of at least 16 (the register blocks'
/// remainders of other widths measured up to 8x slower: 48 rows), its keys
/// a multiple of 16. Every tile is padded to its full size, and 10 rows of
/// a 128-row tile are 13x the work (a multi-head layer's short sequences).
static int64_t shrinkRows(int64_t tile, int64_t length) {
  if (ShapedType::isDynamic(length) || length >= tile)
    return tile;
  return std::min<int64_t>(tile,
                           llvm::PowerOf2Ceil(std::max<int64_t>(length, 16)));
}
static int64_t shrinkKeys(int64_t tile, int64_t length) {
  if (ShapedType::isDynamic(length) || length >= tile)
    return tile;
  return std::min<int64_t>(tile,
                           llvm::alignTo(std::max<int64_t>(length, 1), 16));
}

/// Key chunks per (batch, key/value head): `keyChunks` if positive, or
/// enough for kMinParallelIterations where B and Hkv are static (never more
/// than there are key tiles where Skv is static).
static int64_t getKeyChunks(SdpaGradOp op, int64_t tile, int64_t keyChunks) {
  if (keyChunks > 0)
    return keyChunks;
  RankedTensorType keyType = op.getKey().getType();
  int64_t batches = op.getQuery().getType().getDimSize(0);
  int64_t heads = keyType.getDimSize(1);
  if (ShapedType::isDynamic(batches) || ShapedType::isDynamic(heads) ||
      batches * heads == 0)
    return 1;
  int64_t chunks = llvm::divideCeil(kMinParallelIterations, batches * heads);
  if (int64_t keys = keyType.getDimSize(2); !ShapedType::isDynamic(keys))
    chunks =
        std::min(chunks, std::max<int64_t>(llvm::divideCeil(keys, tile), 1));
  return chunks;
}

/// attn.sdpa_grad -> the tiled loop nest, where attn::tileSdpaGrad applies.
struct TileSdpaGrad : OpRewritePattern<SdpaGradOp> {
  TileSdpaGrad(MLIRContext *ctx, const AttnTileOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(SdpaGradOp op,
                                PatternRewriter &rewriter) const override {
    if (std::optional<StringRef> blocker = getTilingBlocker(op))
      return rewriter.notifyMatchFailure(op, *blocker);
    return tileSdpaGrad(rewriter, op, options);
  }

  AttnTileOptions options;
};

} // namespace

std::optional<StringRef> attn::getTilingBlocker(SdpaGradOp op) {
  if (op.getBlockSize())
    return StringRef("has a block layout (the reference lowering computes "
                     "it)");
  if (op.getQuery().getType().isDynamicDim(3) ||
      op.getValue().getType().isDynamicDim(3))
    return StringRef("has dynamic head sizes (the reference lowering "
                     "computes it)");
  // An empty operand (a batch of 0, no keys: found by attn-mutate-fuzzer)
  // has nothing to tile, and the padded tiles would slice past its end.
  for (Value operand : {op.getQuery(), op.getKey(), op.getValue()})
    if (llvm::is_contained(cast<ShapedType>(operand.getType()).getShape(), 0))
      return StringRef("has an empty operand (the reference lowering "
                       "computes it)");
  return std::nullopt;
}

FailureOr<scf::ForallOp> attn::tileSdpaGrad(RewriterBase &rewriter,
                                            SdpaGradOp op,
                                            const AttnTileOptions &options) {
  if (getTilingBlocker(op))
    return failure();
  int64_t d = op.getQuery().getType().getDimSize(3);
  int64_t dv = op.getValue().getType().getDimSize(3);
  int64_t tile =
      shrinkKeys(getKeyTileSize(d, dv, options.kvTile, options.smallHeadKvTile),
                 op.getKey().getType().getDimSize(2));
  int64_t rows =
      shrinkRows(options.qTile, op.getQuery().getType().getDimSize(2));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  GradTileBuilder builder(op, rewriter, rows, tile,
                          getKeyChunks(op, tile, options.gradKeyChunks),
                          options.gradHeadSums);
  rewriter.replaceOp(op, builder.build());
  return builder.getLoop();
}

void attn::populateTileSdpaGradPatterns(RewritePatternSet &patterns,
                                        const AttnTileOptions &options) {
  patterns.add<TileSdpaGrad>(patterns.getContext(), options);
}
