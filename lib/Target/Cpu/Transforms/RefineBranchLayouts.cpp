//===- RefineBranchLayouts.cpp - static strides through scf.if ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNREFINEBRANCHLAYOUTS
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `value` without the memref.cast that produced it.
Value stripCast(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

/// The most static strided layout of `a`'s shape that both `a` and `b`
/// have: a stride or the offset stays static where both have the same one.
std::optional<MemRefType> joinLayouts(MemRefType a, MemRefType b) {
  if (a.getShape() != b.getShape() ||
      a.getElementType() != b.getElementType() ||
      a.getMemorySpace() != b.getMemorySpace())
    return std::nullopt;
  SmallVector<int64_t> stridesA, stridesB;
  int64_t offsetA, offsetB;
  if (failed(a.getStridesAndOffset(stridesA, offsetA)) ||
      failed(b.getStridesAndOffset(stridesB, offsetB)))
    return std::nullopt;
  SmallVector<int64_t> strides;
  for (auto [x, y] : llvm::zip(stridesA, stridesB))
    strides.push_back(x == y ? x : ShapedType::kDynamic);
  int64_t offset = offsetA == offsetB ? offsetA : ShapedType::kDynamic;
  return MemRefType::get(
      a.getShape(), a.getElementType(),
      StridedLayoutAttr::get(a.getContext(), offset, strides),
      a.getMemorySpace());
}

/// An scf.if yielding buffers of different layouts (a padded copy in one
/// branch, a view in the other) gets, from bufferization, a result with a
/// fully dynamic layout: every stride unknown, so that vector code reading
/// it loads one element at a time. Its result takes the layout both
/// branches share instead (e.g. strides [?, ?, 64, 1]), cast back for
/// users, which fold the cast.
struct RefineIfResultLayouts : OpRewritePattern<scf::IfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::IfOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumResults() == 0 || op.getElseRegion().empty())
      return rewriter.notifyMatchFailure(op, "no results from two branches");
    scf::YieldOp thenYield = op.thenYield(), elseYield = op.elseYield();
    SmallVector<Type> types(op.getResultTypes());
    bool refined = false;
    for (auto [i, type] : llvm::enumerate(types)) {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref)
        continue;
      auto thenType =
          cast<MemRefType>(stripCast(thenYield.getOperand(i)).getType());
      auto elseType =
          cast<MemRefType>(stripCast(elseYield.getOperand(i)).getType());
      std::optional<MemRefType> joined = joinLayouts(thenType, elseType);
      if (!joined || *joined == memref ||
          !memref::CastOp::areCastCompatible(*joined, memref))
        continue;
      // Only more static: every static stride of the result stays.
      std::optional<MemRefType> check = joinLayouts(*joined, memref);
      if (!check || *check != memref)
        continue;
      type = *joined;
      refined = true;
    }
    if (!refined)
      return rewriter.notifyMatchFailure(op, "layouts already as static");

    auto refinedIf =
        scf::IfOp::create(rewriter, op.getLoc(), types, op.getCondition(),
                          /*addThenBlock=*/false, /*addElseBlock=*/false);
    rewriter.inlineRegionBefore(op.getThenRegion(), refinedIf.getThenRegion(),
                                refinedIf.getThenRegion().end());
    rewriter.inlineRegionBefore(op.getElseRegion(), refinedIf.getElseRegion(),
                                refinedIf.getElseRegion().end());
    for (scf::YieldOp yield : {refinedIf.thenYield(), refinedIf.elseYield()}) {
      rewriter.setInsertionPoint(yield);
      for (auto [index, type] : llvm::enumerate(types)) {
        unsigned i = index;
        Value source = yield.getOperand(i);
        if (source.getType() == type || !isa<MemRefType>(type))
          continue;
        Value stripped = stripCast(source);
        Value value = stripped.getType() == type
                          ? stripped
                          : memref::CastOp::create(rewriter, yield.getLoc(),
                                                   type, stripped)
                                .getResult();
        rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(i, value); });
      }
    }
    rewriter.setInsertionPointAfter(refinedIf);
    SmallVector<Value> results;
    for (auto [old, refinedResult] :
         llvm::zip(op.getResults(), refinedIf.getResults()))
      results.push_back(old.getType() == refinedResult.getType()
                            ? Value(refinedResult)
                            : memref::CastOp::create(rewriter, op.getLoc(),
                                                     old.getType(),
                                                     refinedResult)
                                  .getResult());
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AttnRefineBranchLayoutsPass
    : attn::impl::AttnRefineBranchLayoutsBase<AttnRefineBranchLayoutsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<RefineIfResultLayouts>(ctx);
    // Users take the refined buffers where they fold the casts (subviews,
    // loads, vector transfers).
    memref::CastOp::getCanonicalizationPatterns(patterns, ctx);
    memref::SubViewOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
