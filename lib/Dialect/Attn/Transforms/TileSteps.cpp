//===- TileSteps.cpp - attn-tile: one key tile and the key loops ----------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The members of TileBuilder (TileBuilder.h) that build one query tile's
// work over its keys: the online-softmax step on one key tile, the sources
// the steps read (K packed or where it lies, paged tiles, padded values,
// varlen dead rows) and the banded key loops (empty, partial and full
// tiles from the key band).
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
