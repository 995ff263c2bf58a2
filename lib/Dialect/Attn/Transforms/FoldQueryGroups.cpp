//===- FoldQueryGroups.cpp - GQA groups as query rows of one head ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNFOLDQUERYGROUPS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The reassociations between a rank-`rank` [B, Hq, Sq, ...] or
/// [B, Hkv, G Sq, ...] tensor and the rank + 1 [B, Hkv, G, Sq, ...] one:
/// heads split into (Hkv, G), and (G, Sq) merged into rows.
struct GroupReshapes {
  SmallVector<ReassociationIndices> heads, rows;
};

static GroupReshapes getGroupReshapes(int64_t rank) {
  GroupReshapes r{{{0}, {1, 2}}, {{0}, {1}, {2, 3}}};
  for (int64_t d = 2; d < rank; ++d)
    r.heads.push_back({d + 1});
  for (int64_t d = 3; d < rank; ++d)
    r.rows.push_back({d + 1});
  return r;
}

/// `t` ([B, Hq, Sq, ...] or [B, Hkv, G Sq, ...]) as [B, Hkv, G, Sq, ...].
static Value splitGroups(OpBuilder &b, Location loc, Value t, int64_t kvHeads,
                         int64_t group, int64_t rows,
                         ArrayRef<ReassociationIndices> reassociation) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  sizes.erase(sizes.begin() + 1, sizes.begin() + 3);
  sizes.insert(
      sizes.begin() + 1,
      {b.getIndexAttr(kvHeads), b.getIndexAttr(group), b.getIndexAttr(rows)});
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + 1, shape.begin() + 3);
  shape.insert(shape.begin() + 1, {kvHeads, group, rows});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t,
      reassociation, sizes);
}

/// `t` ([B, Hq, Sq, ...]) as [B, Hkv, G Sq, ...]: both reshapes are views
/// of contiguous dimensions.
static Value foldGroups(OpBuilder &b, Location loc, Value t, int64_t kvHeads,
                        int64_t group, int64_t rows) {
  GroupReshapes r = getGroupReshapes(cast<ShapedType>(t.getType()).getRank());
  Value split = splitGroups(b, loc, t, kvHeads, group, rows, r.heads);
  return tensor::CollapseShapeOp::create(b, loc, split, r.rows);
}

/// The inverse of foldGroups: `t` ([B, Hkv, G Sq, ...]) as `type`.
static Value unfoldGroups(OpBuilder &b, Location loc, Value t,
                          RankedTensorType type, int64_t kvHeads,
                          int64_t group) {
  GroupReshapes r = getGroupReshapes(type.getRank());
  Value split =
      splitGroups(b, loc, t, kvHeads, group, type.getDimSize(2), r.rows);
  return tensor::CollapseShapeOp::create(b, loc, type, split, r.heads);
}

/// Whether `mask` (broadcast against [B, H, Sq, Skv] from the right)
/// is the same for every head and query row.
static bool isSameForHeadsAndRows(Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  for (int64_t dim : {1, 2}) {
    int64_t maskDim = dim - (4 - rank);
    if (maskDim >= 0 && type.getDimSize(maskDim) != 1)
      return false;
  }
  return true;
}

/// attn.sdpa over [B, Hq, Sq, D] -> the same op over [B, Hkv, G Sq, D]
/// (see the pass description).
struct FoldQueryGroups : OpRewritePattern<SdpaOp> {
  FoldQueryGroups(MLIRContext *context, int64_t maxRows)
      : OpRewritePattern(context), maxRows(maxRows) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType queryType = op.getQuery().getType();
    int64_t heads = queryType.getDimSize(1);
    int64_t kvHeads = op.getKey().getType().getDimSize(1);
    int64_t rows = queryType.getDimSize(2);
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
        ShapedType::isDynamic(rows))
      return rewriter.notifyMatchFailure(op, "heads or rows are dynamic");
    if (kvHeads == 0 || heads % kvHeads || heads == kvHeads)
      return rewriter.notifyMatchFailure(op, "no query-head groups");
    int64_t group = heads / kvHeads;
    if (group * rows > maxRows)
      return rewriter.notifyMatchFailure(op, "more rows than max-rows");
    if (op.getCausal() || op.getWindow() ||
        op.getDropoutP().convertToDouble() != 0 || op.getDropoutSeed() ||
        !op.getScoreMod().empty() || !op.getMaskMod().empty() ||
        op.getBlockSize() || op.getBlockOffsets() || op.getBlockClasses())
      return rewriter.notifyMatchFailure(
          op, "a score condition depends on the query row or head");
    if (Value mask = op.getMask(); mask && !isSameForHeadsAndRows(mask))
      return rewriter.notifyMatchFailure(op,
                                         "the mask varies over heads or rows");

    Location loc = op.getLoc();
    auto fold = [&](Value t) {
      return t ? foldGroups(rewriter, loc, t, kvHeads, group, rows) : Value();
    };
    Value query = fold(op.getQuery());
    Value init = fold(op.getInit());
    Value lseInit = fold(op.getLseInit());
    auto folded = SdpaOp::create(
        rewriter, loc, init.getType(), lseInit ? lseInit.getType() : Type(),
        query, op.getKey(), op.getValue(), op.getMask(), op.getKvLens(),
        op.getBlockOffsets(), op.getBlockIndices(), op.getBlockClasses(),
        op.getDropoutSeed(), op.getScaleValue(), init, lseInit,
        op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(),
        op.getAlignmentAttr(), op.getDropoutPAttr(), op.getSeedAttr(),
        op.getBlockSizeAttr());
    SmallVector<Value> results = {
        unfoldGroups(rewriter, loc, folded.getResult(),
                     op.getResult().getType(), kvHeads, group)};
    if (Value lse = op.getLse())
      results.push_back(unfoldGroups(rewriter, loc, folded.getLse(),
                                     cast<RankedTensorType>(lse.getType()),
                                     kvHeads, group));
    rewriter.replaceOp(op, results);
    return success();
  }

  int64_t maxRows;
};

struct AttnFoldQueryGroupsPass
    : attn::impl::AttnFoldQueryGroupsBase<AttnFoldQueryGroupsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldQueryGroups>(&getContext(), maxRows);
    // One rewrite per op: walk, not a fixpoint (a folded op has no groups).
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
