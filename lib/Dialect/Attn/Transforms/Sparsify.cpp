//===- Sparsify.cpp - empty, full and partial attention tiles ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The run-time half of block sparsity. Masks that are bands are classified
// from the op alone (Analysis/KeyBand.h) and need nothing here; for the
// rest, the code built below evaluates every keep condition once per call,
// tile by tile, and hands the tiled lowering a table of classes. This is
// FlexAttention's block mask, computed by generated code rather than by the
// caller.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "attn/Dialect/Attn/Analysis/KeyBand.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSPARSIFY
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Block classes as the tiled lowering reads them.
enum BlockClass : int8_t { kEmpty = 0, kPartial = 1, kFull = 2 };

/// Whether the keep conditions can differ between batches (`dim` 0) or
/// heads (`dim` 1): otherwise one table serves all of them.
static bool keepDependsOn(SdpaOp op, unsigned dim) {
  if (dim == 0 && op.getKvLens())
    return true;
  if (!op.getMaskMod().empty() &&
      !op.getMaskMod().front().getArgument(dim).use_empty())
    return true;
  Value mask = op.getMask();
  if (!mask || !cast<ShapedType>(mask.getType()).getElementType().isInteger(1))
    return false;
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t at = type.getRank() - 4 + dim;
  return at >= 0 && type.getDimSize(at) != 1;
}

/// Emits the classes of `op`'s tiles of `qTile` x `kvTile`.
class ClassBuilder {
public:
  ClassBuilder(SdpaOp op, const MaskAnalysis &masks, OpBuilder &b,
               int64_t qTile, int64_t kvTile)
      : op(op), b(b), loc(op.getLoc()), sem(getScoreSemantics(op)),
        masks(masks), qTile(qTile), kvTile(kvTile) {}

  Value build();

private:
  Value constIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value minIndex(Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }

  /// The class of the tile at (rowStart, keyStart), evaluating every keep
  /// condition of the tile's elements.
  Value classifyByElements(Value batch, Value head, Value rowStart, Value rows,
                           Value keyStart, Value keys);

  SdpaOp op;
  OpBuilder &b;
  Location loc;
  ScoreSemantics sem;
  const MaskAnalysis &masks;
  int64_t qTile, kvTile;
  Value queryLength, keyCount, kvLength;
};

Value ClassBuilder::classifyByElements(Value batch, Value head, Value rowStart,
                                       Value rows, Value keyStart, Value keys) {
  auto classConst = [&](BlockClass c) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(c));
  };
  Value zero = constIndex(0), one = constIndex(1);
  Value size = arith::MulIOp::create(b, loc, rows, keys);
  // Count the visible elements; 0 is empty, all of them full.
  auto rowLoop = scf::ForOp::create(
      b, loc, zero, rows, one, ValueRange{zero},
      [&](OpBuilder &rb, Location rl, Value i, ValueRange rowCount) {
        Value row = arith::AddIOp::create(rb, rl, rowStart, i);
        auto keyLoop = scf::ForOp::create(
            rb, rl, zero, keys, one, rowCount,
            [&](OpBuilder &kb, Location kl, Value j, ValueRange count) {
              Value key = arith::AddIOp::create(kb, kl, keyStart, j);
              SmallVector<Value> idx = {batch, head, row, key};
              Value maskValue =
                  sem.hasMask && sem.boolMask
                      ? buildMaskElement(kb, kl, op.getMask(), idx)
                      : Value();
              Value keep =
                  buildKeep(kb, kl, sem, idx, maskValue, kvLength, queryLength);
              Value add = arith::SelectOp::create(
                  kb, kl, keep, arith::ConstantIndexOp::create(kb, kl, 1),
                  arith::ConstantIndexOp::create(kb, kl, 0));
              scf::YieldOp::create(
                  kb, kl,
                  ValueRange{arith::AddIOp::create(kb, kl, count[0], add)});
            });
        scf::YieldOp::create(rb, rl, keyLoop.getResults());
      });
  Value visible = rowLoop.getResult(0);
  Value none =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, visible, zero);
  Value all =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, visible, size);
  return arith::SelectOp::create(b, loc, none, classConst(kEmpty),
                                 arith::SelectOp::create(b, loc, all,
                                                         classConst(kFull),
                                                         classConst(kPartial)));
}

Value ClassBuilder::build() {
  Value query = op.getQuery(), key = op.getKey();
  queryLength = tensor::DimOp::create(b, loc, query, 2);
  keyCount = tensor::DimOp::create(b, loc, key, 2);
  auto ceilDiv = [&](OpFoldResult v, int64_t by) -> OpFoldResult {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return b.getIndexAttr(llvm::divideCeil(*c, by));
    return arith::CeilDivUIOp::create(b, loc, cast<Value>(v), constIndex(by))
        .getResult();
  };
  OpFoldResult queryTiles =
      ceilDiv(tensor::getMixedSize(b, loc, query, 2), qTile);
  OpFoldResult keyTiles = ceilDiv(tensor::getMixedSize(b, loc, key, 2), kvTile);
  SmallVector<OpFoldResult> grid = {
      keepDependsOn(op, 0) ? tensor::getMixedSize(b, loc, query, 0)
                           : b.getIndexAttr(1),
      keepDependsOn(op, 1) ? tensor::getMixedSize(b, loc, query, 1)
                           : b.getIndexAttr(1),
      queryTiles, keyTiles};
  Value listed;
  if (op.getBlockOffsets())
    listed =
        buildListedBlocks(b, loc, op.getBlockOffsets(), op.getBlockIndices(),
                          getValueOrCreateConstantIndexOp(b, loc, queryTiles),
                          getValueOrCreateConstantIndexOp(b, loc, keyTiles));
  Value init = tensor::EmptyOp::create(b, loc, grid, b.getI8Type());

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>(grid).take_front(3), ValueRange{init},
      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  Value batch = forall.getInductionVar(0), head = forall.getInductionVar(1);
  Value queryTile = forall.getInductionVar(2);
  Value rowStart = arith::MulIOp::create(b, loc, queryTile, constIndex(qTile));
  Value rows = minIndex(constIndex(qTile),
                        arith::SubIOp::create(b, loc, queryLength, rowStart));
  kvLength = keyCount;
  if (Value lens = op.getKvLens())
    kvLength = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, lens, batch));

  // Tiles outside the band of the first and last rows are empty without
  // looking at their elements.
  BandValues values{batch, head, queryLength, kvLength};
  Value lastRow = arith::AddIOp::create(
      b, loc, rowStart, arith::SubIOp::create(b, loc, rows, constIndex(1)));
  Value bandStart, bandEnd;
  std::tie(bandStart, bandEnd) =
      buildRowsKeyRange(b, loc, masks.band, rowStart, lastRow, values, keyCount,
                        /*everyRow=*/false);

  Value rowInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{grid[3]}, b.getI8Type());
  Value keyTileCount = getValueOrCreateConstantIndexOp(b, loc, keyTiles);
  auto keyLoop = scf::ForOp::create(
      b, loc, constIndex(0), keyTileCount, constIndex(1), ValueRange{rowInit},
      [&](OpBuilder &nb, Location nl, Value keyTile, ValueRange row) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value keyStart =
            arith::MulIOp::create(b, nl, keyTile, constIndex(kvTile));
        Value keys = minIndex(constIndex(kvTile),
                              arith::SubIOp::create(b, nl, keyCount, keyStart));
        Value keyEnd = arith::AddIOp::create(b, nl, keyStart, keys);
        Value visit = arith::AndIOp::create(
            b, nl,
            arith::CmpIOp::create(b, nl, arith::CmpIPredicate::sgt, keyEnd,
                                  bandStart),
            arith::CmpIOp::create(b, nl, arith::CmpIPredicate::slt, keyStart,
                                  bandEnd));
        if (listed) {
          Value zero = constIndex(0);
          visit = arith::AndIOp::create(
              b, nl, visit,
              tensor::ExtractOp::create(
                  b, nl, listed, ValueRange{zero, zero, queryTile, keyTile}));
        }
        auto ifVisit = scf::IfOp::create(b, nl, TypeRange{b.getI8Type()}, visit,
                                         /*withElseRegion=*/true);
        b.setInsertionPointToStart(ifVisit.thenBlock());
        // A layout alone (no other keep condition) makes listed tiles full.
        bool anyKeep = sem.hasKvLens || sem.maskMod || sem.causal ||
                       sem.window || (sem.hasMask && sem.boolMask);
        Value cls =
            anyKeep
                ? classifyByElements(batch, head, rowStart, rows, keyStart,
                                     keys)
                : arith::ConstantOp::create(b, nl, b.getI8IntegerAttr(kFull))
                      .getResult();
        scf::YieldOp::create(b, nl, cls);
        b.setInsertionPointToStart(ifVisit.elseBlock());
        scf::YieldOp::create(b, nl,
                             ValueRange{arith::ConstantOp::create(
                                 b, nl, b.getI8IntegerAttr(kEmpty))});
        b.setInsertionPointAfter(ifVisit);
        scf::YieldOp::create(
            b, nl,
            ValueRange{tensor::InsertOp::create(b, nl, ifVisit.getResult(0),
                                                row[0], keyTile)});
      });

  // The row of classes goes in rank-reduced: [Kt] into [1, 1, 1, Kt].
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets = {batch, head, queryTile,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1), grid[3]};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(b, loc, keyLoop.getResult(0),
                                        forall.getRegionOutArgs()[0], offsets,
                                        sizes, strides);
  return forall.getResult(0);
}

} // namespace

bool attn::classifyBlocksAtRunTime(RewriterBase &rewriter, SdpaOp op,
                                   const AttnSparsifyOptions &options) {
  if (op.getBlockClasses())
    return false;
  MaskAnalysis masks = analyzeMasks(op);
  if (masks.exact)
    return false;
  AttentionTiles tiles = getAttentionTiles(op, options.qTile, options.kvTile,
                                           options.smallHeadKvTile);
  int64_t bq = tiles.qTile, bk = tiles.kvTile;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value classes = ClassBuilder(op, masks, rewriter, bq, bk).build();
  rewriter.modifyOpInPlace(op, [&] {
    op.getBlockOffsetsMutable().clear();
    op.getBlockIndicesMutable().clear();
    op.getBlockClassesMutable().assign(classes);
    op.setBlockSize(ArrayRef<int64_t>{bq, bk});
  });
  return true;
}

namespace {

/// Attaches run-time block classes to an attn.sdpa whose masks are not all
/// bands (and drops its block layout, which the classes now carry).
struct ClassifyBlocksAtRunTime : OpRewritePattern<SdpaOp> {
  ClassifyBlocksAtRunTime(MLIRContext *ctx, const AttnSparsifyOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    return success(classifyBlocksAtRunTime(rewriter, op, options));
  }

  AttnSparsifyOptions options;
};

struct AttnSparsifyPass : attn::impl::AttnSparsifyBase<AttnSparsifyPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(verifyTileSizes(getOperation(), getArgument(), qTile, kvTile,
                               smallHeadKvTile)))
      return signalPassFailure();
    if (explain)
      getOperation()->walk([&](SdpaOp op) {
        if (op.getBlockClasses())
          return;
        MaskAnalysis masks = analyzeMasks(op);
        InFlightDiagnostic remark = op.emitRemark()
                                    << "keys of row i: " << masks.band.str();
        // The layout's blocks are the tiles whatever the options say: said
        // where they differ, not silently.
        AttentionTiles tiles =
            getAttentionTiles(op, qTile, kvTile, smallHeadKvTile);
        int64_t rows = qTile,
                keys = getKeyTileSize(op, kvTile, smallHeadKvTile);
        if (tiles.fromBlockSize &&
            (tiles.qTile != rows || tiles.kvTile != keys))
          remark << "; tiled by the block layout's " << tiles.qTile << " x "
                 << tiles.kvTile << " blocks, not " << rows << " x " << keys;
        if (masks.exact)
          remark << "; classified statically";
        else
          remark << "; run-time block classes for "
                 << llvm::join(masks.reasons, ", ");
      });
    RewritePatternSet patterns(&getContext());
    patterns.add<ClassifyBlocksAtRunTime>(
        &getContext(),
        AttnSparsifyOptions{qTile, kvTile, smallHeadKvTile, explain});
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
