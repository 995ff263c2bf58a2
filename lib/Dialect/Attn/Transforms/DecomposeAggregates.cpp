//===- DecomposeAggregates.cpp - aggregate linalg ops into their steps ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Upstream lowers linalg.softmax only through its AggregatedOpInterface
// (the transform dialect's decompose_interface); a module from a frontend
// carries softmaxes that are not attention (or not raised), and the
// pipelines must still compile them.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEAGGREGATES
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

struct DecomposeAggregatesPass
    : attn::impl::AttnDecomposeAggregatesBase<DecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> steps = op.decomposeOperation(rewriter);
      if (failed(steps)) {
        op->emitError("attn-decompose-aggregates: ")
            << op->getName() << " could not be decomposed";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *steps);
    }
  }
};

} // namespace
