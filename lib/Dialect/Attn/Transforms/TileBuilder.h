//===- TileBuilder.h - attn-tile's loop nest for one attn.sdpa --*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The builder behind attn-tile (tileSdpa, TileAttention.cpp), its members
// defined by stage: TileSteps.cpp (one key tile's online-softmax step, the
// sources it reads: packed, paged, padded, and the banded key loops) and
// TileLoops.cpp (the op's loop nest: query tiles, key chunks, the
// normalised output and log-sum-exp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDER_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDER_H

#include "TileBuilderBase.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"

namespace mlir {
namespace attn {

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

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEBUILDER_H
