//===- TileLoops.cpp - attn-tile: the loop nest of one op -----------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The members of TileBuilder (TileBuilder.h) that build the op's loop
// nest: the parallel loop over (batch, head, query tile) or, for few query
// rows, over key chunks merged by their maxima (flash-decoding), and each
// tile's normalised output and log-sum-exp.
//
//===----------------------------------------------------------------------===//

#include "TileBuilder.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

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
