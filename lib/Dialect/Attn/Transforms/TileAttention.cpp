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

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "TileBuilderBase.h"

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
#include "mlir/IR/Dominance.h"
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

/// The most query rows (per head) an op may have and still be bound by
/// reading K and V rather than by arithmetic: decode, speculative decode.
constexpr int64_t kFewRows = 16;

/// The most query rows (per head, a static count in one query tile) whose
/// scores are dot products with K's rows where they lie: more read K^T
/// packed, which then pays for its copy (see build).
constexpr int64_t kMinPackedKeyRows = 64;

/// Builds the loop nest for one attn.sdpa.
class TileBuilder : TileBuilderBase {
public:
  using TileBuilderBase::getLoop;

  TileBuilder(SdpaOp op, OpBuilder &b, int64_t qTile, int64_t kvTile,
              bool bf16Pairs, int64_t decodeKeyChunks, int64_t valuePanel)
      : TileBuilderBase(b, op.getLoc(), qTile, kvTile,
                        op.getResult().getType().getElementType()),
        op(op), sem(getScoreSemantics(op)), valuePanel(valuePanel),
        decodeKeyChunks(decodeKeyChunks) {
    // Block classes describe tiles of `block_size`: the tiles are those.
    if (std::optional<ArrayRef<int64_t>> blockSize = op.getBlockSize()) {
      this->qTile = (*blockSize)[0];
      this->kvTile = (*blockSize)[1];
    }
    // Pairs of the head dimension (Q K^T) and of keys (P V) need an even
    // head size and whole pairs of keys in every tile.
    auto isBf16 = [](Value v) {
      return cast<ShapedType>(v.getType()).getElementType().isBF16();
    };
    int64_t headSize = op.getQuery().getType().getDimSize(3);
    // A few query rows (decode) make a step bound by reading K and V, not
    // by the multiply-adds pairs halve, and pairs need K packed on every
    // call (a pass over the cache): such ops widen their tiles instead and
    // read K where it is (packKeys).
    int64_t rows = op.getQuery().getType().getDimSize(2);
    bool fewRows = !ShapedType::isDynamic(rows) && rows <= kFewRows;
    pairs = bf16Pairs && !fewRows && isBf16(op.getQuery()) &&
            isBf16(op.getKey()) && isBf16(op.getValue()) &&
            !ShapedType::isDynamic(headSize) && headSize % 2 == 0 &&
            this->kvTile % 2 == 0;
  }

  /// The op's replacements: the result and, when the op has one, the row
  /// log-sum-exp.
  ValueRange build();

private:
  /// The forall over (batch, head, query tile) for `count` query tiles,
  /// writing into the op's destinations. Each tile has min(q-tile, Sq -
  /// start) rows, or with `lastRows`, q-tile rows but the last tile, which
  /// has `lastRows`: each built with its constant count.
  ValueRange buildQueryTiles(OpFoldResult batches, OpFoldResult heads,
                             OpFoldResult count,
                             std::optional<int64_t> lastRows);

  /// One query tile, [rowStart, rowStart + rows), through all its key
  /// tiles: the normalised output tile and, when the op returns it, the
  /// tile's rows of the log-sum-exp.
  SmallVector<Value> buildQueryTile(Value batch, Value head, Value kvHead,
                                    Value rowStart, Value rows,
                                    OpFoldResult outDim);

  /// The running (m, l, acc) of a query tile after all its key tiles (of
  /// the current key chunk, where keys are split).
  SmallVector<Value> buildTileStatistics(Value batch, Value head, Value kvHead,
                                         Value rowStart, Value rows,
                                         OpFoldResult outDim);

  /// O = acc / l (0 where no key took part) in the destination's element
  /// type, into `init`: `unnormalised` [..., rows, Dv] by `sum` [...,
  /// rows], of any rank (a tile, or every head's rows).
  Value buildOutput(Value unnormalised, Value sum, Value init);

  /// The log-sum-exp (buildLogSumExp) of rows with maxima `max` and sums
  /// `sum` (same shape, any rank), into `init`.
  Value buildRowLogSumExp(Value max, Value sum, Value init);

  /// The key/value head read by query head `head`, and the keys batch
  /// `batch` may see (kvLength) set: the start of a parallel iteration.
  Value beginIteration(Value batch, Value head);

  /// The number of key chunks (flash-decoding) for an op whose heads have
  /// one query tile of `rows` static rows: 1 (no split) unless the
  /// (batch, head) pairs are too few to occupy kMinParallelIterations.
  int64_t getKeyChunks(OpFoldResult batches, OpFoldResult heads,
                       std::optional<int64_t> staticKeys);

  /// The forall over (batch, head, key chunk) of an op with one query
  /// tile per head, each iteration writing its chunk's (m, l, acc), then
  /// the chunks combined by their maxima into the destinations: the op's
  /// replacements.
  ValueRange buildKeyChunks(OpFoldResult batches, OpFoldResult heads,
                            int64_t chunks);

  /// V (or an unpacked K) as the steps read it: padded by padToKeyTiles
  /// where the keys are padded and Skv is not a whole number of tiles,
  /// decided at run time for a dynamic Skv (a whole number of tiles costs
  /// no copy).
  Value buildValueSource(Value value);

  /// The attn.gather_pages that produces `kv` (the op's keys or values)
  /// where the steps can read its tiles from the pages themselves: a
  /// static page size that holds whole tiles or is held whole by one, and
  /// no padding of the keys (see sliceKeyTile). Null otherwise: the steps
  /// then read the gathered tensor.
  GatherPagesOp getPagedSource(Value kv);
  /// The attn.unpad_sequences that is the only reader of the op's results
  /// (the varlen form: padding rows of the output are dropped), or null.
  UnpadSequencesOp getPackedOutput();
  /// Whether query rows [rowStart, rowStart + rows) of batch `batch` all
  /// lie outside the sequence packedOutput keeps of it.
  Value buildDeadRows(Value batch, Value rowStart, Value rows);

  /// The key tile [keyStart, keyStart + keyTileLength) of head `kvHead`
  /// of batch `batch` of `source` as a [keys, D] tensor: a slice of it, or
  /// with `paged`, the slice of the page that holds it or the whole pages
  /// that make it up.
  Value sliceKeyTile(Value source, GatherPagesOp paged, Value batch,
                     Value kvHead, Value keyStart, Value keys);

  /// `t` ([rows, 2n]) as [rows, n, 2]: pairs along the last dimension.
  Value splitPairs(Value t, OpFoldResult pairCount) {
    auto type = cast<RankedTensorType>(t.getType());
    int64_t last = type.getDimSize(1);
    auto pairType = RankedTensorType::get(
        {type.getDimSize(0), ShapedType::isDynamic(last) ? last : last / 2, 2},
        type.getElementType());
    // A dimension the type leaves dynamic takes its size as a value, even a
    // constant one: a static size there contradicts the type.
    OpFoldResult pairs =
        pairType.isDynamicDim(1)
            ? getValueOrCreateConstantIndexOp(b, loc, pairCount)
            : pairCount;
    return tensor::ExpandShapeOp::create(
        b, loc, pairType, t, SmallVector<ReassociationIndices>{{0}, {1, 2}},
        ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, t, 0), pairs,
                               b.getIndexAttr(2)});
  }

  /// Emits the loops over key tiles for rows [rowStart, rowStart + rows),
  /// visiting only the tiles the masks leave non-empty and evaluating the
  /// masks only on partial ones (see KeyBand.h); returns (m, l, acc).
  SmallVector<Value> buildKeyLoops(Value qTileValue, Value batch, Value head,
                                   Value kvHead, Value rowStart, Value rows,
                                   ValueRange init);

  /// One loop over `tiles` (buildKeyTileLoop), each step masked or not;
  /// `boundKeys` as in buildStep.
  SmallVector<Value> buildKeyLoop(const KeyTiles &tiles, bool masked,
                                  bool boundKeys, Value qTileValue, Value batch,
                                  Value head, Value kvHead, Value rowStart,
                                  Value rows, ValueRange init);

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
  /// unmasked step is for a tile in which every key is visible. A step
  /// with `boundKeys` may reach the padding keys past Skv: they get -inf,
  /// and the masks and modifiers see the last key's index instead of
  /// theirs (a mask or a region may read a tensor at it).
  SmallVector<Value> buildStep(Value qTileValue, Value batch, Value head,
                               Value kvHead, Value rowStart, Value rows,
                               Value keyStart, ValueRange carried, bool masked,
                               bool boundKeys);

  SdpaOp op;
  ScoreSemantics sem;
  // Problem-wide values, set by build(); lastKey = Skv - 1 where the keys
  // are padded.
  Value queryLength, keyCount, kvLength, lastKey;
  // Scores are kept in log2 units (exp2 in the softmax).
  Log2ScoreScale scale;
  // Whether each query tile is multiplied by `scale.scale` once (where the
  // score is linear in the scale, and the contractions are not on bf16
  // pairs, which would round the scaled query): a [qTile, D] pass per query
  // tile instead of a [qTile, kvTile] one per step.
  bool queryScaled = false;
  // The keys of every step, a constant: kvTile, or Skv where a static Skv
  // is shorter. Where Skv is dynamic or not a whole number of tiles, K and
  // V are padded with zero keys to whole tiles (`padKeys`) and the steps
  // that may reach past Skv mask the padding: every tile keeps a static
  // shape. (With both the rows and the keys of a tile dynamic, one-shot
  // bufferization's slice comparisons cost seconds of Presburger
  // arithmetic.)
  int64_t keyTileLength = 0;
  bool padKeys = false;
  // V, padded when `padKeys` (without pairs; the pairs are packed padded).
  Value valueSource;
  // K packed by packTiles, once for all query tiles: [.., D, kvTile] in
  // the accumulator type, or [.., D/2, kvTile, 2] bf16 pairs; with pairs, V
  // as [.., kvTile/2, Dv, 2]. Without pairs, where each (batch, head) has
  // one query tile of at most kMinPackedKeyRows rows (`packKeys` false:
  // decode, short sequences), K in its own type, padded like V, each step's
  // scores dot products of Q rows and the rows of K's tile where they lie:
  // no other tile would read a packed K again, and packing it is a pass
  // that writes all of K and reads it back (decode: 2x the bytes of the
  // cache).
  Value keyT, valuePairs;
  // `value-panel`, and where this op takes it (see build), V packed in
  // panels [.., Dv / valuePanel, kvTile, valuePanel] by packTiles, once for
  // all query tiles (null: V read where it is, valueSource).
  int64_t valuePanel;
  Value valuePanels;
  bool packKeys = true;
  Value keySource;
  // The gathers of a paged K and V whose tiles the steps read from the
  // pages (getPagedSource), or null.
  GatherPagesOp pagedKeys, pagedValues;
  // The attn.unpad_sequences that alone reads the result (getPackedOutput),
  // or null: query rows outside its sequences are read by no one, and
  // their tiles visit no key.
  UnpadSequencesOp packedOutput;
  // Key chunks: `decode-key-chunks` (0: automatic); with a split, the key
  // range [chunkStart, chunkEnd) of the current iteration (buildKeyLoops
  // clamps its tiles to it), and the op's replacements.
  int64_t decodeKeyChunks;
  Value chunkStart, chunkEnd;
  SmallVector<Value> chunkResults;
};

SmallVector<Value> TileBuilder::buildStep(Value qTileValue, Value batch,
                                          Value head, Value kvHead,
                                          Value rowStart, Value rows,
                                          Value keyStart, ValueRange carried,
                                          bool masked, bool boundKeys) {
  Value m = carried[0], l = carried[1], out = carried[2];
  ScoreSemantics stepSem = masked ? sem : sem.withoutKeepConditions();
  Value keys = constIndex(keyTileLength);
  // K^T packed, or (packKeys false) K's tile where it lies, [keys, D].
  Value kTile =
      packKeys
          ? packedTile(keyT, batch, kvHead, keyStart, /*keyDim=*/1, keys)
          : sliceKeyTile(keySource, pagedKeys, batch, kvHead, keyStart, keys);
  // V_t in the accumulator type, or its pairs of keys (the last one padded
  // with a zero key when `keys` is odd).
  OpFoldResult keyPairs;
  Value vTile;
  if (pairs) {
    AffineExpr s0 = getAffineSymbolExpr(0, ctx);
    keyPairs = affine::makeComposedFoldedAffineApply(b, loc, s0.ceilDiv(2),
                                                     {OpFoldResult(keys)});
    vTile = packedTile(valuePairs, batch, kvHead, keyStart, /*keyDim=*/0,
                       getValueOrCreateConstantIndexOp(b, loc, keyPairs));
  } else if (valuePanels) {
    vTile =
        packedTile(valuePanels, batch, kvHead, keyStart, /*keyDim=*/1, keys);
  } else {
    // Read in its own type: the product widens each row as it loads it.
    vTile =
        sliceKeyTile(valueSource, pagedValues, batch, kvHead, keyStart, keys);
  }

  // S = Q_t K_t^T in the accumulator type. From the packed K^T: the
  // innermost loop (after the pair) runs over keys, contiguously in both
  // K_t^T and S, and vectorises without reassociating a sum; loop order
  // (i, d, j[, t]): rows, the reduced head dimension (pairs of it), keys,
  // the pair. From K where it lies: a dot product of a Q row and a K row
  // per score, both contiguous (no transposed copy of the tile).
  Value zero = createFilledTensor(b, loc, {rows, keys}, accAttr(0));
  Value scores = packKeys ? buildContraction(qTileValue, kTile, zero)
                          : buildDotContraction(qTileValue, kTile, zero);

  // Scale, masks and modifiers on global indices, in log2 units (times
  // log2(e)) so that the exponentials below are exp2.
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap rowMap = AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx);
  Log2ScoreScale stepScale = queryScaled ? Log2ScoreScale{} : scale;
  auto modified = linalg::GenericOp::create(
      b, loc, scores.getType(), ValueRange{}, scores, {id2}, {kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx =
            globalIndices(nb, nl, batch, head, rowStart, keyStart);
        // The padding keys fail one more keep condition. Only a mask
        // or a region, which may read a tensor at the key's index,
        // needs that index kept in range; the arithmetic conditions
        // (causal, window, kv_lens) take it as it is.
        Value inRange;
        if (boundKeys) {
          inRange = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                          idx[3], keyCount);
          if (stepSem.hasMask || stepSem.maskMod || stepSem.scoreMod)
            idx[3] = arith::MinSIOp::create(nb, nl, idx[3], lastKey);
        }
        Value maskValue = stepSem.hasMask
                              ? buildMaskElement(nb, nl, op.getMask(), idx)
                              : Value();
        linalg::YieldOp::create(
            nb, nl,
            buildLog2ModifiedScore(nb, nl, stepSem, args[0], stepScale, idx,
                                   maskValue, kvLength, queryLength, inRange));
      });
  // With the query scaled and nothing to mask, the scores are the product.
  if (modified.getBody()->getTerminator()->getOperand(0) ==
      modified.getBody()->getArgument(0))
    modified.erase();
  else
    scores = modified.getResult(0);

  // m' = max(m, rowmax(S)), marked: only a bound for the exponentials.
  auto rowMax = linalg::GenericOp::create(
      b, loc, m.getType(), scores, m, {id2, rowMap}, {kPar, kRed},
      buildReassociableBody<arith::MaximumFOp>);
  rowMax->setAttr(kSoftmaxMaxAttr, b.getUnitAttr());
  Value newMax = rowMax.getResult(0);

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
  Value newSum = linalg::GenericOp::create(b, loc, l.getType(), probs,
                                           scaleRows(l, id1, id1, 1),
                                           {id2, rowMap}, {kPar, kRed},
                                           buildReassociableBody<arith::AddFOp>)
                     .getResult(0);

  // acc' = alpha acc + dropout(P) V_t, in loop order (i, j, e[, t]): the
  // innermost loop (after the pair) runs over output features, contiguously
  // in V_t and acc.
  Value scaledOut = scaleRows(out, id2, rowMap, 2);
  Value lhs = dropped;
  if (pairs) {
    // P in bf16, padded with a zero to whole pairs of keys (V's padding
    // row is zero too).
    AffineExpr s0 = getAffineSymbolExpr(0, ctx);
    OpFoldResult evenKeys =
        affine::makeComposedFoldedAffineApply(b, loc, s0 * 2, {keyPairs});
    Value narrow = createElementCast(b, loc, dropped, b.getBF16Type());
    Value zeroBf16 =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getBF16Type()));
    Value padded = tensor::createPadHighOp(
        RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                              b.getBF16Type()),
        narrow, zeroBf16, /*nofold=*/false, loc, b,
        {rows, getValueOrCreateConstantIndexOp(b, loc, evenKeys)});
    lhs = splitPairs(padded, keyPairs);
  }
  Value newOut = valuePanels ? buildPanelContraction(lhs, vTile, scaledOut)
                             : buildContraction(lhs, vTile, scaledOut);
  return {newMax, newSum, newOut};
}

Value TileBuilder::buildValueSource(Value value) {
  if (!padKeys)
    return value;
  if (getStaticLength(keyCount))
    return padToKeyTiles(value);
  Value partial = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::RemUIOp::create(b, loc, keyCount, constIndex(kvTile)),
      constIndex(0));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{value.getType()}, partial,
                                /*addThenBlock=*/true, /*addElseBlock=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, padToKeyTiles(value));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, value);
  return ifOp.getResult(0);
}

UnpadSequencesOp TileBuilder::getPackedOutput() {
  if (Value lse = op.getLse(); lse && !lse.use_empty())
    return {};
  Value result = op.getResult();
  if (!result.hasOneUse())
    return {};
  auto unpad = dyn_cast<UnpadSequencesOp>(*result.user_begin());
  if (!unpad || unpad.getPadded() != result)
    return {};
  // The offsets are read inside the tiles: they must be there already.
  DominanceInfo dominance(op->getParentOp());
  return dominance.properlyDominates(unpad.getCuSeqlens(), op)
             ? unpad
             : UnpadSequencesOp();
}

Value TileBuilder::buildDeadRows(Value batch, Value rowStart, Value rows) {
  // Without the packed rows (the destination may come after the op), as
  // many rows per sequence as the offsets allow: never fewer than the
  // unpad reads.
  SequenceBounds seq = buildSequenceBounds(
      b, loc, packedOutput.getCuSeqlens(), batch, /*rows=*/Value(), queryLength,
      packedOutput.getAlignment() == Alignment::bottom_right);
  Value liveEnd = arith::AddIOp::create(b, loc, seq.paddedStart, seq.length);
  Value rowEnd = arith::AddIOp::create(b, loc, rowStart, rows);
  return arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, rowEnd,
                            seq.paddedStart),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, rowStart,
                            liveEnd));
}

GatherPagesOp TileBuilder::getPagedSource(Value kv) {
  auto gather = kv.getDefiningOp<GatherPagesOp>();
  if (!gather)
    return {};
  int64_t pageSize = gather.getStaticPageSize();
  if (ShapedType::isDynamic(pageSize))
    return {};
  // Tiles start at multiples of kvTile (of keyTileLength, which is kvTile
  // unless a static Skv is shorter, when there is one tile).
  if (pageSize % keyTileLength == 0)
    // Every tile within a page; a dynamic Skv (padKeys) is a whole number
    // of pages, so of tiles: nothing to pad.
    return gather;
  if (keyTileLength % pageSize == 0 && !padKeys)
    return gather;
  return {};
}

Value TileBuilder::sliceKeyTile(Value source, GatherPagesOp paged, Value batch,
                                Value kvHead, Value keyStart, Value keys) {
  if (!paged)
    return slice2d(source, batch, kvHead, keyStart, keys);
  Value pages = paged.getPages(), table = paged.getPageTable();
  RankedTensorType pagesType = paged.getPages().getType();
  int64_t pageSize = paged.getStaticPageSize();
  OpFoldResult headSize = tensor::getMixedSize(b, loc, pages, 3);
  PageCacheDims dims = paged.getCacheDims();
  // Keys [offset, offset + length) of the page in slot `slot` of the
  // batch's row of the table, head kvHead.
  auto pageSlice = [&](Value slot, OpFoldResult offset, int64_t length) {
    OpFoldResult one = b.getIndexAttr(1);
    SmallVector<OpFoldResult, 4> offsets = dims.order<OpFoldResult>(
        buildPageIndex(b, loc, pages, table, batch, slot), offset, kvHead,
        b.getIndexAttr(0));
    SmallVector<OpFoldResult, 4> sizes =
        dims.order<OpFoldResult>(one, b.getIndexAttr(length), one, headSize);
    auto type = RankedTensorType::get({length, pagesType.getDimSize(3)},
                                      pagesType.getElementType());
    return tensor::ExtractSliceOp::create(
        b, loc, type, pages, offsets, sizes,
        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
  };
  Value firstSlot =
      arith::DivUIOp::create(b, loc, keyStart, constIndex(pageSize));
  if (keyTileLength <= pageSize)
    return pageSlice(
        firstSlot,
        arith::RemUIOp::create(b, loc, keyStart, constIndex(pageSize))
            .getResult(),
        keyTileLength);
  // A tile of whole pages, assembled: a page's run of keys of one head is
  // not contiguous with the next page's.
  Value tile = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(keyTileLength), headSize},
      pagesType.getElementType());
  for (int64_t i = 0; i < keyTileLength / pageSize; ++i) {
    Value slot = arith::AddIOp::create(b, loc, firstSlot, constIndex(i));
    tile = tensor::InsertSliceOp::create(
        b, loc, pageSlice(slot, b.getIndexAttr(0), pageSize), tile,
        ArrayRef<OpFoldResult>{b.getIndexAttr(i * pageSize), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(pageSize), headSize},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }
  return tile;
}

SmallVector<Value> TileBuilder::buildKeyLoop(const KeyTiles &tiles, bool masked,
                                             bool boundKeys, Value qTileValue,
                                             Value batch, Value head,
                                             Value kvHead, Value rowStart,
                                             Value rows, ValueRange init) {
  return buildKeyTileLoop(
      tiles, init,
      [&](Value keyStart, ValueRange carried) -> SmallVector<Value> {
        if (!op.getBlockClasses())
          return buildStep(qTileValue, batch, head, kvHead, rowStart, rows,
                           keyStart, carried, masked, boundKeys);
        // Run-time classes: skip class 0, no mask on class 2.
        Value classes = op.getBlockClasses();
        auto classType = cast<RankedTensorType>(classes.getType());
        Value qt = arith::DivUIOp::create(b, loc, rowStart, constIndex(qTile));
        Value kt = arith::DivUIOp::create(b, loc, keyStart, constIndex(kvTile));
        Value zero = constIndex(0);
        Value cls = tensor::ExtractOp::create(
            b, loc, classes,
            ValueRange{classType.getDimSize(0) == 1 ? zero : batch,
                       classType.getDimSize(1) == 1 ? zero : head, qt, kt});
        auto classIs = [&](int64_t c) {
          return arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, cls,
              arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(c)));
        };
        OpBuilder::InsertionGuard guard(b);
        auto skip = scf::IfOp::create(b, loc, carried.getTypes(), classIs(0),
                                      /*withElseRegion=*/true);
        b.setInsertionPointToStart(skip.thenBlock());
        scf::YieldOp::create(b, loc, carried);
        b.setInsertionPointToStart(skip.elseBlock());
        auto full = scf::IfOp::create(b, loc, carried.getTypes(), classIs(2),
                                      /*withElseRegion=*/true);
        scf::YieldOp::create(b, loc, full.getResults());
        for (bool isFull : {true, false}) {
          b.setInsertionPointToStart(isFull ? full.thenBlock()
                                            : full.elseBlock());
          scf::YieldOp::create(b, loc,
                               buildStep(qTileValue, batch, head, kvHead,
                                         rowStart, rows, keyStart, carried,
                                         /*masked=*/!isFull, boundKeys));
        }
        return SmallVector<Value>(skip.getResults());
      });
}

SmallVector<Value> TileBuilder::buildKeyLoops(Value qTileValue, Value batch,
                                              Value head, Value kvHead,
                                              Value rowStart, Value rows,
                                              ValueRange init) {
  MaskAnalysis masks = analyzeMasks(op);
  if (masks.band.empty)
    return llvm::to_vector(init);
  BandValues values{batch, head, queryLength, kvLength};
  Value lastRow = arith::AddIOp::create(
      b, loc, rowStart, arith::SubIOp::create(b, loc, rows, constIndex(1)));
  // With padded keys the full tiles are whole ones, and only the masked
  // steps bound the keys.
  KeyTileRanges tiles =
      buildKeyTileRanges(b, loc, masks.band, rowStart, lastRow, values,
                         keyCount, kvTile, /*wholeFullTiles=*/padKeys);
  // A key chunk's tiles: every bound clamped into the chunk (whole tiles:
  // the chunk's bounds are multiples of kv-tile), which keeps them in
  // order.
  if (chunkStart)
    for (Value *bound :
         {&tiles.first, &tiles.fullStart, &tiles.fullEnd, &tiles.end})
      *bound = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, *bound, chunkStart), chunkEnd);
  // Rows no one reads (the padding of a varlen batch's queries): no key
  // tile, so the tile is zeros at the cost of a few comparisons.
  if (packedOutput) {
    Value dead = buildDeadRows(batch, rowStart, rows);
    for (Value *bound : {&tiles.fullStart, &tiles.fullEnd, &tiles.end})
      *bound = arith::SelectOp::create(b, loc, dead, tiles.first, *bound);
  }
  auto loop = [&](const KeyTiles &range, bool masked, ValueRange carried) {
    return buildKeyLoop(range, masked, /*boundKeys=*/padKeys && masked,
                        qTileValue, batch, head, kvHead, rowStart, rows,
                        carried);
  };
  // Block classes decide per tile (a class-2 tile may be the short last
  // one: those steps bound the keys too); without them and without an
  // exact band, every tile in the band is evaluated with the masks.
  if (op.getBlockClasses() || !masks.exact)
    return loop({tiles.first, tiles.end}, /*masked=*/true, init);
  // The partial tiles before and after the full ones in one loop (one
  // masked step where two would double the code LLVM compiles for them),
  // then the full tiles. The softmax does not depend on the order in which
  // tiles are visited.
  SmallVector<Value> carried =
      loop({tiles.first, tiles.fullStart, tiles.fullEnd, tiles.end},
           /*masked=*/true, init);
  return loop({tiles.fullStart, tiles.fullEnd}, /*masked=*/false, carried);
}

ValueRange TileBuilder::build() {
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  packedOutput = getPackedOutput();
  OpFoldResult batches = tensor::getMixedSize(b, loc, query, 0);
  OpFoldResult heads = tensor::getMixedSize(b, loc, query, 1);
  queryLength = tensor::DimOp::create(b, loc, query, 2);
  keyCount = tensor::DimOp::create(b, loc, key, 2);
  std::optional<int64_t> staticKeys = getStaticLength(keyCount);
  // A static Skv shorter than a tile is the tile (rounded up to whole
  // pairs): packing K into kv-tile keys would copy mostly padding on every
  // call (10 keys in 128: 13x the K it packs). Block-sparse ops keep the
  // tiles their layout is given in.
  // No keys at all is a tile of one (of a pair): every row sees no key.
  if (staticKeys && *staticKeys < kvTile && !op.getBlockSize())
    kvTile = pairs ? llvm::alignTo(std::max<int64_t>(*staticKeys, 1), 2)
                   : std::max<int64_t>(*staticKeys, 1);
  padKeys = !staticKeys || (*staticKeys > kvTile && *staticKeys % kvTile);
  if (padKeys)
    lastKey = arith::SubIOp::create(b, loc, keyCount, constIndex(1));
  keyTileLength = staticKeys ? std::min(*staticKeys, kvTile) : kvTile;
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
  queryScaled = !pairs && !scale.log2e;
  // One O(Skv D) copy per call instead of a transpose in every step. Q, K
  // and V tiles are converted to the accumulator type once (bf16/f16
  // inputs), so that both contractions are plain f32 register blocks; or,
  // with pairs, K and V keep bf16 and are packed in pairs.
  int64_t headSize = op.getQuery().getType().getDimSize(3);
  if (pairs) {
    keyT = packTiles(key, {kvTile}, {headSize / 2, 2}, {0, 1, 2, 4, 3, 5});
    valuePairs = packTiles(value, {kvTile / 2, 2}, {}, {0, 1, 2, 3, 5, 4});
  } else {
    // K^T is packed where several query tiles read it, or one tile of more
    // than kMinPackedKeyRows rows: each 4-row block then reads contiguous
    // runs of keys instead of taking dot products whose partial sums cost
    // shuffles (on an Emerald Rapids, B1 H8 S = Skv = 128: 1.13-1.27x, 77:
    // 1.00-1.06x, 64 and fewer: 0.75-0.98x; benchmarks/RESULTS.md,
    // session 27).
    bool severalTiles =
        ShapedType::isDynamic(staticQueryLength) || staticQueryLength > qTile;
    packKeys = severalTiles || staticQueryLength > kMinPackedKeyRows;
    pagedKeys = packKeys ? GatherPagesOp() : getPagedSource(key);
    pagedValues = getPagedSource(value);
    if (packKeys)
      keyT = packTiles(createElementCast(b, loc, key, acc), {kvTile}, {},
                       {0, 1, 2, 4, 3});
    else
      keySource = pagedKeys ? key : buildValueSource(key);
    valueSource = pagedValues ? value : buildValueSource(value);
    // V in panels where its columns make at least kMinValuePanels of them
    // (fewer, wider blocks lost to the packing pass) and several query
    // tiles read it.
    constexpr int64_t kMinValuePanels = 4;
    int64_t dv = op.getValue().getType().getDimSize(3);
    if (severalTiles && valuePanel > 0 && !ShapedType::isDynamic(dv) &&
        dv % valuePanel == 0 && dv / valuePanel >= kMinValuePanels)
      valuePanels =
          packTiles(createElementCast(b, loc, value, acc), {kvTile},
                    {dv / valuePanel, valuePanel}, {0, 1, 2, 4, 3, 5});
  }

  // A static query length that is not a whole number of tiles: the last
  // tile is built apart with its own constant row count, so that every
  // tile's size is a constant (static tensors keep the later analyses
  // cheap; see tileSize).
  std::optional<int64_t> lastRows;
  if (!ShapedType::isDynamic(staticQueryLength) && staticQueryLength > qTile &&
      staticQueryLength % qTile != 0)
    lastRows = staticQueryLength % qTile;
  if (!lastRows && isConstantIntValue(queryTiles, 1))
    if (int64_t chunks = getKeyChunks(batches, heads, staticKeys); chunks > 1)
      return buildKeyChunks(batches, heads, chunks);
  return buildQueryTiles(batches, heads, queryTiles, lastRows);
}

/// ln(2^m l) = (m + log2 l) ln 2: the log-sum-exp of a row from its
/// maximum `m` (log2 units) and sum `l`; -inf where no key took part
/// (l = 0).
static Value buildLogSumExp(OpBuilder &b, Location loc, Value max, Value sum) {
  Value log2Lse = arith::AddFOp::create(b, loc, buildSafeRowMax(b, loc, max),
                                        math::Log2Op::create(b, loc, sum));
  Value ln2 = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(max.getType(), llvm::numbers::ln2));
  return arith::MulFOp::create(b, loc, log2Lse, ln2);
}

/// The fewest key tiles of a chunk: shorter ones cost more in partial
/// results to combine than their parallelism gains.
static constexpr int64_t kMinChunkTiles = 4;

int64_t TileBuilder::getKeyChunks(OpFoldResult batches, OpFoldResult heads,
                                  std::optional<int64_t> staticKeys) {
  if (op.getBlockClasses() || !staticKeys)
    return 1;
  if (decodeKeyChunks > 0)
    return decodeKeyChunks;
  std::optional<int64_t> b = getConstantIntValue(batches);
  std::optional<int64_t> h = getConstantIntValue(heads);
  // No (batch, head) pair at all (a batch of 0): nothing to split.
  if (!b || !h || *b * *h == 0 || *b * *h >= kMinParallelIterations)
    return 1;
  int64_t tiles = llvm::divideCeil(*staticKeys, kvTile);
  return std::max<int64_t>(
      1, std::min<int64_t>(llvm::divideCeil(kMinParallelIterations, *b * *h),
                           tiles / kMinChunkTiles));
}

Value TileBuilder::beginIteration(Value batch, Value head) {
  Value group = arith::DivUIOp::create(
      b, loc, tensor::DimOp::create(b, loc, op.getQuery(), 1),
      tensor::DimOp::create(b, loc, op.getKey(), 1));
  // Keys batch b may see: kv_lens[b] when given.
  kvLength = keyCount;
  if (Value lens = op.getKvLens()) {
    Value len = tensor::ExtractOp::create(b, loc, lens, batch);
    kvLength = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
  }
  return arith::DivUIOp::create(b, loc, head, group);
}

ValueRange TileBuilder::buildKeyChunks(OpFoldResult batches, OpFoldResult heads,
                                       int64_t chunks) {
  // Whole key tiles per chunk: the last chunk may have fewer (or none).
  int64_t chunkKeys =
      llvm::divideCeil(llvm::divideCeil(*getStaticLength(keyCount), kvTile),
                       chunks) *
      kvTile;
  OpFoldResult rowsSize = tensor::getMixedSize(b, loc, op.getQuery(), 2);
  OpFoldResult outDim = tensor::getMixedSize(b, loc, op.getValue(), 3);
  OpFoldResult chunkCount = b.getIndexAttr(chunks);
  // Each chunk's unnormalised output, row maxima and row sums.
  Value accParts = tensor::EmptyOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{batches, heads, chunkCount, rowsSize, outDim},
      acc);
  auto statParts = [&] {
    return tensor::EmptyOp::create(
        b, loc, ArrayRef<OpFoldResult>{batches, heads, chunkCount, rowsSize},
        acc);
  };
  auto forall = loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batches, heads, chunkCount},
      ValueRange{accParts, statParts(), statParts()},
      /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    Value batch = forall.getInductionVar(0), head = forall.getInductionVar(1);
    Value chunk = forall.getInductionVar(2);
    Value kvHead = beginIteration(batch, head);
    chunkStart = arith::MulIOp::create(b, loc, chunk, constIndex(chunkKeys));
    chunkEnd = arith::AddIOp::create(b, loc, chunkStart, constIndex(chunkKeys));
    Value rows = tensor::DimOp::create(b, loc, op.getQuery(), 2);
    SmallVector<Value> stats =
        buildTileStatistics(batch, head, kvHead, constIndex(0), rows, outDim);
    chunkStart = chunkEnd = Value();
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets = {batch, head, chunk, b.getIndexAttr(0),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(1), rows, outDim};
    SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
    auto outs = forall.getRegionOutArgs();
    tensor::ParallelInsertSliceOp::create(b, loc, stats[2], outs[0], offsets,
                                          sizes, strides);
    for (auto [stat, out] :
         llvm::zip(ArrayRef(stats).take_front(2), outs.drop_front()))
      tensor::ParallelInsertSliceOp::create(
          b, loc, stat, out, ArrayRef(offsets).take_front(4),
          ArrayRef(sizes).take_front(4), ArrayRef(strides).take_front(4));
  }
  Value accs = forall.getResult(0), maxima = forall.getResult(1),
        sums = forall.getResult(2);

  // The chunks combined: M = max_c m_c, w_c = 2^(m_c - M) (m in log2
  // units; 0 for a chunk without visible keys), L = sum_c w_c l_c,
  // O = sum_c w_c acc_c / L (0 where L is 0), lse = (M + log2 L) ln 2.
  auto map = [&](unsigned dims, ArrayRef<unsigned> results) {
    return AffineMap::getMultiDimMapWithTargets(dims, results, b.getContext());
  };
  double negInf = -std::numeric_limits<double>::infinity();
  SmallVector<OpFoldResult> statSizes = {batches, heads, rowsSize};
  // (b, h, i, c): over chunks.
  Value maximumInit = createFilledTensor(b, loc, statSizes, accAttr(negInf));
  Value maximum =
      linalg::GenericOp::create(
          b, loc, maximumInit.getType(), ValueRange{maxima}, maximumInit,
          {map(4, {0, 1, 3, 2}), map(4, {0, 1, 2})}, {kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                arith::MaximumFOp::create(nb, nl, args[0], args[1])
                    .getResult());
          })
          .getResult(0);
  // (b, h, c, i): each chunk's weight.
  Value weightsInit = statParts();
  Value weights =
      linalg::GenericOp::create(
          b, loc, weightsInit.getType(), ValueRange{maxima, maximum},
          weightsInit,
          {map(4, {0, 1, 2, 3}), map(4, {0, 1, 3}), map(4, {0, 1, 2, 3})},
          {kPar, kPar, kPar, kPar}, buildExp2MinusMaxBody)
          .getResult(0);
  auto weightedSum = [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value term = arith::MulFOp::create(nb, nl, args[0], args[1]);
    linalg::YieldOp::create(
        nb, nl, arith::AddFOp::create(nb, nl, args[2], term).getResult());
  };
  Value sum =
      linalg::GenericOp::create(
          b, loc, maximum.getType(), ValueRange{weights, sums},
          createFilledTensor(b, loc, statSizes, accAttr(0)),
          {map(4, {0, 1, 3, 2}), map(4, {0, 1, 3, 2}), map(4, {0, 1, 2})},
          {kPar, kPar, kPar, kRed}, weightedSum)
          .getResult(0);
  // (b, h, i, d, c)
  SmallVector<OpFoldResult> outSizes = {batches, heads, rowsSize, outDim};
  Value unnormalisedInit = createFilledTensor(b, loc, outSizes, accAttr(0));
  Value unnormalised =
      linalg::GenericOp::create(
          b, loc, unnormalisedInit.getType(), ValueRange{weights, accs},
          unnormalisedInit,
          {map(5, {0, 1, 4, 2}), map(5, {0, 1, 4, 2, 3}), map(5, {0, 1, 2, 3})},
          {kPar, kPar, kPar, kPar, kRed}, weightedSum)
          .getResult(0);
  chunkResults.push_back(buildOutput(unnormalised, sum, op.getInit()));
  if (Value lseInit = op.getLseInit())
    chunkResults.push_back(buildRowLogSumExp(maximum, sum, lseInit));
  return chunkResults;
}

ValueRange TileBuilder::buildQueryTiles(OpFoldResult batches,
                                        OpFoldResult heads, OpFoldResult count,
                                        std::optional<int64_t> lastRows) {
  Value qTileC = constIndex(qTile);
  OpFoldResult outDim = tensor::getMixedSize(b, loc, op.getValue(), 3);
  auto forall = loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batches, heads, count}, op.getDpsInits(),
      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  Value batch = forall.getInductionVar(0), head = forall.getInductionVar(1);
  Value tile = forall.getInductionVar(2);
  Value rowStart = arith::MulIOp::create(b, loc, tile, qTileC);
  Value kvHead = beginIteration(batch, head);

  Value rows;
  SmallVector<Value> tiles;
  if (!lastRows) {
    rows = tileSize(rowStart, queryLength, qTile);
    tiles = buildQueryTile(batch, head, kvHead, rowStart, rows, outDim);
  } else {
    // The last tile and the whole ones, each built with its constant row
    // count, in one parallel loop (a second loop for the last tile alone
    // left the cores idle at its start: up to 9% on causal problems).
    Value last = constIndex(getConstantIntValue(count).value() - 1);
    // Before the branch that reads it: a constant made while building the
    // then-branch's arguments would land after the scf.if (the builder's
    // point), where it does not dominate its use (a greedy driver would
    // hoist it; transform.attn.tile runs none).
    Value lastRowsC = constIndex(*lastRows);
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tile, last);
    SmallVector<Type> tileTypes = {RankedTensorType::get(
        {ShapedType::kDynamic, op.getInit().getType().getDimSize(3)}, element)};
    if (op.getLse())
      tileTypes.push_back(RankedTensorType::get({ShapedType::kDynamic}, acc));
    auto ifOp = scf::IfOp::create(b, loc, tileTypes, isLast,
                                  /*addThenBlock=*/true, /*addElseBlock=*/true);
    auto buildBranch = [&](Block *block, Value branchRows) {
      b.setInsertionPointToStart(block);
      SmallVector<Value> branchTiles =
          buildQueryTile(batch, head, kvHead, rowStart, branchRows, outDim);
      for (auto [tile, type] : llvm::zip_equal(branchTiles, tileTypes))
        tile = tensor::CastOp::create(b, loc, type, tile);
      scf::YieldOp::create(b, loc, branchTiles);
    };
    buildBranch(ifOp.thenBlock(), lastRowsC);
    buildBranch(ifOp.elseBlock(), qTileC);
    b.setInsertionPointAfter(ifOp);
    tiles = ifOp.getResults();
    rows = arith::SelectOp::create(b, loc, isLast, lastRowsC, qTileC);
  }

  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets = {batch, head, rowStart,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     outDim};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(
      b, loc, tiles[0], forall.getRegionOutArgs()[0], offsets, sizes, strides);
  if (op.getLse())
    tensor::ParallelInsertSliceOp::create(
        b, loc, tiles[1], forall.getRegionOutArgs()[1],
        ArrayRef<OpFoldResult>(offsets).take_front(3),
        ArrayRef<OpFoldResult>(sizes).take_front(3),
        ArrayRef<OpFoldResult>(strides).take_front(3));
  return forall.getResults();
}

SmallVector<Value> TileBuilder::buildTileStatistics(Value batch, Value head,
                                                    Value kvHead,
                                                    Value rowStart, Value rows,
                                                    OpFoldResult outDim) {
  int64_t headSize = op.getQuery().getType().getDimSize(3);
  Value qSlice = slice2d(op.getQuery(), batch, head, rowStart, rows);
  Value qTileValue =
      pairs ? splitPairs(qSlice, b.getIndexAttr(headSize / 2))
            : createElementCast(b, loc, qSlice, acc,
                                queryScaled ? scale.scale : Value());
  double negInf = -std::numeric_limits<double>::infinity();
  SmallVector<Value> init = {
      createFilledTensor(b, loc, {rows}, accAttr(negInf)),
      createFilledTensor(b, loc, {rows}, accAttr(0)),
      createFilledTensor(b, loc, {rows, outDim}, accAttr(0))};
  return buildKeyLoops(qTileValue, batch, head, kvHead, rowStart, rows, init);
}

SmallVector<Value> TileBuilder::buildQueryTile(Value batch, Value head,
                                               Value kvHead, Value rowStart,
                                               Value rows,
                                               OpFoldResult outDim) {
  SmallVector<Value> result =
      buildTileStatistics(batch, head, kvHead, rowStart, rows, outDim);

  Value outInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{rows, outDim}, element);
  SmallVector<Value> tiles = {buildOutput(result[2], result[1], outInit)};
  if (op.getLse())
    tiles.push_back(buildRowLogSumExp(
        result[0], result[1],
        tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{rows}, acc)));
  return tiles;
}

Value TileBuilder::buildOutput(Value unnormalised, Value sum, Value init) {
  unsigned rank = cast<ShapedType>(init.getType()).getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank, kPar);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{unnormalised, sum}, init,
             {id, id.dropResult(rank - 1), id}, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value o = buildNormalize(nb, nl, args[0], args[1]);
               linalg::YieldOp::create(nb, nl, castFloat(nb, nl, o, element));
             })
      .getResult(0);
}

Value TileBuilder::buildRowLogSumExp(Value max, Value sum, Value init) {
  unsigned rank = cast<ShapedType>(init.getType()).getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank, kPar);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{max, sum}, init, {id, id, id},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, buildLogSumExp(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

} // namespace

int64_t attn::getKeyTileSize(int64_t d, int64_t dv, int64_t kvTile,
                             int64_t smallHeadKvTile) {
  bool smallHead = !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
                   d <= 64 && dv <= 64;
  return smallHeadKvTile > 0 && smallHead ? smallHeadKvTile : kvTile;
}

int64_t attn::getKeyTileSize(SdpaOp op, int64_t kvTile,
                             int64_t smallHeadKvTile) {
  return getKeyTileSize(op.getQuery().getType().getDimSize(3),
                        op.getValue().getType().getDimSize(3), kvTile,
                        smallHeadKvTile);
}

LogicalResult attn::verifyTileSizes(Operation *op, StringRef pass,
                                    int64_t qTile, int64_t kvTile,
                                    int64_t smallHeadKvTile) {
  if (smallHeadKvTile < 0)
    return op->emitError() << pass
                           << ": small-head-kv-tile must be 0 (off) or "
                              "positive, got "
                           << smallHeadKvTile;
  if (qTile > 0 && kvTile > 0)
    return success();
  return op->emitError() << pass
                         << ": tile sizes must be positive, got q-tile = "
                         << qTile << " and kv-tile = " << kvTile;
}

std::optional<StringRef> attn::getTilingBlocker(SdpaOp op) {
  // A layout is turned into block classes by attn-sparsify; the tiled
  // step does not evaluate it element by element.
  if (op.getBlockOffsets())
    return StringRef("has a block-sparse layout: classify its blocks "
                     "(attn-sparsify) before tiling it");
  return std::nullopt;
}

/// Whether `op` gets a second tiling of `shortTile` keys per step besides
/// its `kvTile` one (attn-tile short-kv-tile): a dynamic Skv, tiles that
/// are the tiler's own (no block layout or classes, which set them), keys
/// and values not read from pages (whose steps need tiles that fit the
/// pages) and a result not read by attn.unpad_sequences (whose padding
/// rows the tiles skip by looking at that reader).
static bool hasShortKeyTiling(SdpaOp op, int64_t kvTile, int64_t shortTile) {
  if (shortTile <= 0 || shortTile >= kvTile ||
      !op.getKey().getType().isDynamicDim(2) || op.getBlockSize() ||
      op.getBlockClasses() || op.getKey().getDefiningOp<GatherPagesOp>() ||
      op.getValue().getDefiningOp<GatherPagesOp>())
    return false;
  return llvm::none_of(op.getResult().getUsers(), [](Operation *user) {
    return isa<UnpadSequencesOp>(user);
  });
}

/// Whether a call takes the short tiles: padded to whole kv-tiles, its keys
/// are more than 9/8 of what whole short tiles make them.
static Value buildUsesShortKeyTiles(OpBuilder &b, Location loc, Value keys,
                                    int64_t kvTile, int64_t shortTile) {
  AffineExpr s0 = getAffineSymbolExpr(0, b.getContext());
  auto paddedTimes = [&](int64_t tile, int64_t factor) {
    return getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(
            b, loc, s0.ceilDiv(tile) * (tile * factor), {keys}));
  };
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                               paddedTimes(kvTile, 8),
                               paddedTimes(shortTile, 9));
}

FailureOr<scf::ForallOp> attn::tileSdpa(RewriterBase &rewriter, SdpaOp op,
                                        const AttnTileOptions &options) {
  if (getTilingBlocker(op))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  int64_t kvTile = getKeyTileSize(op, options.kvTile, options.smallHeadKvTile);
  // The loop nest of `target` with `keys` keys per step, in place of it.
  auto tile = [&](SdpaOp target, int64_t keys) {
    TileBuilder builder(target, rewriter, options.qTile, keys,
                        options.bf16Pairs, options.decodeKeyChunks,
                        options.valuePanel);
    rewriter.replaceOp(target, builder.build());
    return builder.getLoop();
  };
  if (!hasShortKeyTiling(op, kvTile, options.shortKvTile))
    return tile(op, kvTile);

  // Both tilings, each of a copy of the op in its branch; the kv-tile one
  // is the loop returned (the one a schedule that named no short tiles
  // would get).
  Location loc = op.getLoc();
  Value keys = tensor::DimOp::create(rewriter, loc, op.getKey(), 2);
  auto version = scf::IfOp::create(
      rewriter, loc, op->getResultTypes(),
      buildUsesShortKeyTiles(rewriter, loc, keys, kvTile, options.shortKvTile),
      /*addThenBlock=*/true, /*addElseBlock=*/true);
  scf::ForallOp loop;
  for (auto [block, keysPerStep] :
       {std::make_pair(version.thenBlock(), options.shortKvTile),
        std::make_pair(version.elseBlock(), kvTile)}) {
    rewriter.setInsertionPointToStart(block);
    auto copy = cast<SdpaOp>(rewriter.clone(*op));
    // The yield takes the tiled results when the copy is replaced.
    scf::YieldOp::create(rewriter, loc, copy->getResults());
    rewriter.setInsertionPoint(copy);
    loop = tile(copy, keysPerStep);
  }
  rewriter.replaceOp(op, version.getResults());
  return loop;
}

namespace {

/// attn.sdpa -> the tiled loop nest.
struct TileSdpa : OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *ctx, const AttnTileOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    return tileSdpa(rewriter, op, options);
  }

  AttnTileOptions options;
};

/// Tiles every attn.sdpa; rejects tile sizes that are not positive.
struct AttnTilePass : attn::impl::AttnTileBase<AttnTilePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyTileSizes(getOperation(), getArgument(), qTile, kvTile,
                               smallHeadKvTile)))
      return signalPassFailure();
    if (decodeKeyChunks < 0) {
      getOperation()->emitError()
          << getArgument() << ": decode-key-chunks must be 0 (automatic) or "
          << "positive, got " << static_cast<int64_t>(decodeKeyChunks);
      return signalPassFailure();
    }
    if (valuePanel < 0) {
      getOperation()->emitError()
          << getArgument() << ": value-panel must be 0 (off) or positive, got "
          << static_cast<int64_t>(valuePanel);
      return signalPassFailure();
    }
    if (shortKvTile < 0) {
      getOperation()->emitError()
          << getArgument() << ": short-kv-tile must be 0 (off) or positive, "
          << "got " << static_cast<int64_t>(shortKvTile);
      return signalPassFailure();
    }
    if (gradKeyChunks < 0) {
      getOperation()->emitError()
          << getArgument() << ": grad-key-chunks must be 0 (automatic) or "
          << "positive, got " << static_cast<int64_t>(gradKeyChunks);
      return signalPassFailure();
    }
    WalkResult layouts = getOperation()->walk([](SdpaOp op) {
      std::optional<StringRef> blocker = getTilingBlocker(op);
      if (!blocker)
        return WalkResult::advance();
      op.emitOpError() << *blocker;
      return WalkResult::interrupt();
    });
    if (layouts.wasInterrupted())
      return signalPassFailure();
    AttnTileOptions options{qTile,      kvTile,        smallHeadKvTile,
                            bf16Pairs,  gradKeyChunks, decodeKeyChunks,
                            valuePanel, shortKvTile,   gradHeadSums};
    RewritePatternSet patterns(&getContext());
    patterns.add<TileSdpa>(&getContext(), options);
    populateTileSdpaGradPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
