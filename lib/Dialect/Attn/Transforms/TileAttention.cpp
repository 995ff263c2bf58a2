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

#include "TileBuilder.h"

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

AttentionTiles attn::getAttentionTiles(SdpaOp op, int64_t qTile, int64_t kvTile,
                                       int64_t smallHeadKvTile) {
  if (std::optional<ArrayRef<int64_t>> blockSize = op.getBlockSize())
    return {(*blockSize)[0], (*blockSize)[1], /*fromBlockSize=*/true};
  return {qTile, getKeyTileSize(op, kvTile, smallHeadKvTile),
          /*fromBlockSize=*/false};
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
  AttentionTiles tiles = getAttentionTiles(op, options.qTile, options.kvTile,
                                           options.smallHeadKvTile);
  int64_t kvTile = tiles.kvTile;
  // The loop nest of `target` with `keys` keys per step, in place of it.
  auto tile = [&](SdpaOp target, int64_t keys) {
    TileBuilder builder(target, rewriter, tiles.qTile, keys, options.bf16Pairs,
                        options.decodeKeyChunks, options.valuePanel);
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
