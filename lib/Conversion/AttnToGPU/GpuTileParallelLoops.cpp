//===- GpuTileParallelLoops.cpp - parallel loops into grid x block --------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNGPUTILEPARALLELLOOPS
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Rewrites `loop` into an outer loop whose last dimension steps by
/// `threads` around an inner loop over [0, threads) that runs the body for
/// the iterations that exist.
void splitForThreads(scf::ParallelOp loop, int64_t threads) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  unsigned last = loop.getNumLoops() - 1;
  SmallVector<Value> steps(loop.getStep());
  Value threadsValue = arith::ConstantIndexOp::create(b, loc, threads);
  Value lastStep = steps[last];
  steps[last] = arith::MulIOp::create(b, loc, lastStep, threadsValue);
  auto outer = scf::ParallelOp::create(b, loc, loop.getLowerBound(),
                                       loop.getUpperBound(), steps);
  b.setInsertionPointToStart(outer.getBody());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto inner = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{threadsValue}, ValueRange{one});
  b.setInsertionPointToStart(inner.getBody());
  Value offset =
      arith::MulIOp::create(b, loc, inner.getInductionVars()[0], lastStep);
  Value iv =
      arith::AddIOp::create(b, loc, outer.getInductionVars()[last], offset);
  Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv,
                                       loop.getUpperBound()[last]);
  auto guard = scf::IfOp::create(b, loc, exists, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  IRMapping mapping;
  for (unsigned d = 0; d < last; ++d)
    mapping.map(loop.getInductionVars()[d], outer.getInductionVars()[d]);
  mapping.map(loop.getInductionVars()[last], iv);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
}

struct AttnGpuTileParallelLoopsPass
    : attn::impl::AttnGpuTileParallelLoopsBase<AttnGpuTileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threadsPerBlock <= 0 || threadsPerBlock > 1024) {
      getOperation().emitError()
          << "threads-per-block must be in [1, 1024], got "
          << static_cast<int64_t>(threadsPerBlock);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumReductions() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<gpu::LaunchOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      splitForThreads(loop, threadsPerBlock);
  }
};

} // namespace
