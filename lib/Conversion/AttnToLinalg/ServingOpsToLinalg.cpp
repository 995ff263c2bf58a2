//===- ServingOpsToLinalg.cpp - paged caches and packed sequences ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The serving ops of attn-lower-to-linalg: attn.gather_pages as a gather
// through the page table, attn.append_pages as a loop of row writes, and
// attn.pad_sequences / attn.unpad_sequences as element-wise gathers or
// (row copies) parallel copies of whole rows per sequence.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

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

} // namespace

void attn::populateServingOpsToLinalgPatterns(RewritePatternSet &patterns,
                                              bool rowCopies) {
  patterns.add<LowerGatherPages, LowerAppendPages>(patterns.getContext());
  patterns.add<LowerPadSequences, LowerUnpadSequences>(patterns.getContext(),
                                                       rowCopies);
}
