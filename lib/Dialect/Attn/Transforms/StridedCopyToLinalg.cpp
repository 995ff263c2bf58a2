//===- StridedCopyToLinalg.cpp - strided memref.copy as linalg.copy -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSTRIDEDCOPYTOLINALG
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// memref.copy with a non-identity layout on either side -> linalg.copy.
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto isContiguous = [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && type.getLayout().isIdentity();
    };
    if (isContiguous(op.getSource()) && isContiguous(op.getTarget()))
      return rewriter.notifyMatchFailure(op, "lowers to memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

/// Applies `StridedCopyToLinalg` everywhere.
struct AttnStridedCopyToLinalgPass
    : attn::impl::AttnStridedCopyToLinalgBase<AttnStridedCopyToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
