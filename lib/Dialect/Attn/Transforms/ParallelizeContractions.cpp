//===- ParallelizeContractions.cpp - row blocks of contractions in forall -===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPARALLELIZECONTRACTIONS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

struct AttnParallelizeContractionsPass
    : attn::impl::AttnParallelizeContractionsBase<
          AttnParallelizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (rows <= 0) {
      getOperation()->emitError()
          << "attn-parallelize-contractions: rows must be positive, got "
          << static_cast<int64_t>(rows);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> contractions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          linalg::isaContractionOpInterface(op) &&
          !op->getParentOfType<scf::ForallOp>())
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : contractions) {
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      if (failed(dims) || dims->m.empty())
        continue;
      // Batch and outer M dimensions one at a time, the innermost M in
      // blocks, the rest whole.
      SmallVector<OpFoldResult> sizes(op.getNumLoops(),
                                      rewriter.getIndexAttr(0));
      for (unsigned batch : dims->batch)
        sizes[batch] = rewriter.getIndexAttr(1);
      for (unsigned m : dims->m)
        sizes[m] = rewriter.getIndexAttr(1);
      sizes[dims->m.back()] = rewriter.getIndexAttr(rows);
      scf::SCFTilingOptions options;
      options.setTileSizes(sizes);
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("attn-parallelize-contractions: cannot distribute this "
                     "contraction");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
