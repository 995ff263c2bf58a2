//===- PrefetchStreams.cpp - prefetch the rows register blocks stream -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPREFETCHSTREAMS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// The cache line of the CPUs the pipeline targets (x86-64; AArch64's
/// Neoverse cores): one prefetch per line a row covers.
constexpr int64_t kCacheLineBytes = 64;

/// A row `loop` reads each iteration: a contiguous 1-D vector of more than
/// one element (a broadcast operand is one) read from a memref whose
/// innermost stride is 1 (a strided layout), unmasked, along the innermost
/// dimension.
static bool isStreamedRow(vector::TransferReadOp read) {
  auto type = dyn_cast<MemRefType>(read.getBase().getType());
  VectorType vector = read.getVectorType();
  if (!type || vector.getRank() != 1 || vector.isScalable() ||
      vector.getNumElements() < 2 || read.getMask() ||
      !read.getPermutationMap().isMinorIdentity())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// `value + offset` (an index or integer), folded when `value` is a
/// constant.
static Value addConstant(RewriterBase &rewriter, Location loc, Value value,
                         int64_t offset) {
  Type type = value.getType();
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return arith::ConstantOp::create(
        rewriter, loc, rewriter.getIntegerAttr(type, *constant + offset));
  return arith::AddIOp::create(
      rewriter, loc, value,
      arith::ConstantOp::create(rewriter, loc,
                                rewriter.getIntegerAttr(type, offset)));
}

/// `value` with `loop`'s induction variable replaced as `mapping` says:
/// the pure ops of the loop body it is computed by are cloned at the
/// rewriter's insertion point (values from outside the loop stay). Fails
/// on a value the body computes with side effects, in a nested region or
/// from an iteration argument.
static FailureOr<Value> cloneShifted(RewriterBase &rewriter, scf::ForOp loop,
                                     Value value, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  if (!loop->isAncestor(value.getParentRegion()->getParentOp()))
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || !isPure(def) ||
      def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(cloneShifted(rewriter, loop, operand, mapping)))
      return failure();
  rewriter.clone(*def, mapping);
  return mapping.lookup(value);
}

/// Prefetches the row `read` reads `distance` iterations of `loop` ahead
/// (`ahead` is that iteration's induction variable), one prefetch per
/// cache line, from the first memref of the subview chain `read` reads
/// through that is defined outside the loop. Reads that do not change with
/// the induction variable get none. The prefetches come last in the loop
/// body: LLVM schedules no load across one, and between the loads of a
/// step they made AArch64's 12 x 8 blocks load all 12 broadcasts first
/// (38 live vector registers of 32: spills).
static void prefetchAhead(RewriterBase &rewriter, scf::ForOp loop,
                          vector::TransferReadOp read, Value ahead) {
  Location loc = read.getLoc();
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  // The read's indices in the loop-invariant memref it is a view of.
  Value base = read.getBase();
  SmallVector<Value> indices(read.getIndices());
  while (auto view = base.getDefiningOp<memref::SubViewOp>()) {
    if (view->getBlock() != loop.getBody())
      break;
    SmallVector<Value> resolved;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, loc, view.getMixedOffsets(), view.getMixedStrides(),
        view.getDroppedDims(), indices, resolved);
    base = view.getSource();
    indices = std::move(resolved);
  }
  if (loop->isAncestor(base.getParentRegion()->getParentOp()))
    return;
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), ahead);
  SmallVector<Value> shifted;
  for (Value index : indices) {
    FailureOr<Value> clone = cloneShifted(rewriter, loop, index, mapping);
    if (failed(clone))
      return;
    shifted.push_back(*clone);
  }
  if (shifted == indices)
    return;
  // One prefetch per line of the row (innermost stride 1, isStreamedRow).
  VectorType vector = read.getVectorType();
  int64_t elementBytes = vector.getElementTypeBitWidth() / 8;
  int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
  int64_t lines =
      llvm::divideCeil(vector.getNumElements() * elementBytes, kCacheLineBytes);
  Value inner = shifted.back();
  for (int64_t line = 0; line < lines; ++line) {
    if (line > 0)
      shifted.back() = addConstant(rewriter, loc, inner, line * lineElements);
    memref::PrefetchOp::create(rewriter, loc, base, shifted,
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

struct AttnPrefetchStreamsPass
    : attn::impl::AttnPrefetchStreamsBase<AttnPrefetchStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (distance < 0) {
      getOperation()->emitError()
          << "attn-prefetch-streams: distance must be non-negative, got "
          << static_cast<int64_t>(distance);
      return signalPassFailure();
    }
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (loop->removeAttr(attn::kStreamLoopAttr) && distance > 0)
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      SmallVector<vector::TransferReadOp> rows;
      for (auto read : loop.getBody()->getOps<vector::TransferReadOp>())
        if (isStreamedRow(read))
          rows.push_back(read);
      for (vector::TransferReadOp read : rows) {
        // `distance` bytes of rows ahead, in whole iterations.
        VectorType vector = read.getVectorType();
        int64_t rowBytes =
            vector.getNumElements() * vector.getElementTypeBitWidth() / 8;
        int64_t iterations = llvm::divideCeil(distance, rowBytes);
        rewriter.setInsertionPointToStart(loop.getBody());
        Location loc = loop.getLoc();
        Value step = loop.getStep(), ahead;
        if (std::optional<int64_t> constant = getConstantIntValue(step)) {
          ahead = addConstant(rewriter, loc, loop.getInductionVar(),
                              *constant * iterations);
        } else {
          Value count = arith::ConstantOp::create(
              rewriter, loc,
              rewriter.getIntegerAttr(step.getType(), iterations));
          ahead = arith::AddIOp::create(
              rewriter, loc, loop.getInductionVar(),
              arith::MulIOp::create(rewriter, loc, step, count));
        }
        prefetchAhead(rewriter, loop, read, ahead);
      }
    }
  }
};

} // namespace
