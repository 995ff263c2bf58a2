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

/// Whether `value` changes with `loop`'s induction variable: it is the
/// variable or computed from it in the loop body.
static bool dependsOnInductionVar(scf::ForOp loop, Value value) {
  if (value == loop.getInductionVar())
    return true;
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == loop.getBody() &&
         llvm::any_of(def->getOperands(), [&](Value operand) {
           return dependsOnInductionVar(loop, operand);
         });
}

/// The induction variable of the iteration of `loop` that reads `rowBytes`
/// rows `distance` bytes ahead (whole iterations), computed at the start of
/// its body.
static Value getInductionVarAhead(RewriterBase &rewriter, scf::ForOp loop,
                                  int64_t rowBytes, int64_t distance) {
  int64_t iterations = llvm::divideCeil(distance, rowBytes);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(loop.getBody());
  Location loc = loop.getLoc();
  Value step = loop.getStep();
  if (std::optional<int64_t> constant = getConstantIntValue(step))
    return addConstant(rewriter, loc, loop.getInductionVar(),
                       *constant * iterations);
  Value count = arith::ConstantOp::create(
      rewriter, loc, rewriter.getIntegerAttr(step.getType(), iterations));
  return arith::AddIOp::create(
      rewriter, loc, loop.getInductionVar(),
      arith::MulIOp::create(rewriter, loc, step, count));
}

/// Prefetches the row `read` reads `distance` bytes of rows ahead in
/// `loop`, one prefetch per cache line, from the first memref of the
/// subview chain `read` reads through that is defined outside the loop, at
/// the read's indices in it with the induction variable advanced. Reads
/// that do not change with the induction variable get none. The prefetches
/// come last in the loop body: LLVM schedules no load across one, and
/// between the loads of a step they made AArch64's 12 x 8 blocks load all
/// 12 broadcasts first (38 live vector registers of 32: spills).
static void prefetchAhead(RewriterBase &rewriter, scf::ForOp loop,
                          vector::TransferReadOp read, int64_t distance) {
  // The subviews in the loop between the read and that memref.
  SmallVector<memref::SubViewOp> views;
  Value base = read.getBase();
  while (auto view = base.getDefiningOp<memref::SubViewOp>()) {
    if (view->getBlock() != loop.getBody())
      break;
    views.push_back(view);
    base = view.getSource();
  }
  if (loop->isAncestor(base.getParentRegion()->getParentOp()))
    return;
  auto dependent = [&](Value value) {
    return dependsOnInductionVar(loop, value);
  };
  bool streams = llvm::any_of(read.getIndices(), dependent) ||
                 llvm::any_of(views, [&](memref::SubViewOp view) {
                   return llvm::any_of(view->getOperands(), dependent);
                 });
  if (!streams)
    return;
  VectorType vector = read.getVectorType();
  int64_t elementBytes = vector.getElementTypeBitWidth() / 8;
  int64_t rowBytes = vector.getNumElements() * elementBytes;
  IRMapping mapping;
  mapping.map(loop.getInductionVar(),
              getInductionVarAhead(rewriter, loop, rowBytes, distance));
  // The indices, and each subview's offsets and strides, of that
  // iteration, resolved through the chain.
  Location loc = read.getLoc();
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  auto shift = [&](ArrayRef<OpFoldResult> values)
      -> FailureOr<SmallVector<OpFoldResult>> {
    SmallVector<OpFoldResult> shifted;
    for (OpFoldResult value : values) {
      auto dynamic = dyn_cast<Value>(value);
      if (!dynamic) {
        shifted.push_back(value);
        continue;
      }
      FailureOr<Value> clone = cloneShifted(rewriter, loop, dynamic, mapping);
      if (failed(clone))
        return failure();
      shifted.push_back(*clone);
    }
    return shifted;
  };
  SmallVector<Value> indices;
  for (Value index : read.getIndices()) {
    FailureOr<Value> clone = cloneShifted(rewriter, loop, index, mapping);
    if (failed(clone))
      return;
    indices.push_back(*clone);
  }
  for (memref::SubViewOp view : views) {
    FailureOr<SmallVector<OpFoldResult>> offsets =
        shift(view.getMixedOffsets());
    FailureOr<SmallVector<OpFoldResult>> strides =
        shift(view.getMixedStrides());
    if (failed(offsets) || failed(strides))
      return;
    SmallVector<Value> resolved;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, loc, *offsets, *strides, view.getDroppedDims(), indices,
        resolved);
    indices = std::move(resolved);
  }
  // One prefetch per line of the row (innermost stride 1, isStreamedRow).
  int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
  int64_t lines = llvm::divideCeil(rowBytes, kCacheLineBytes);
  Value inner = indices.back();
  for (int64_t line = 0; line < lines; ++line) {
    if (line > 0)
      indices.back() = addConstant(rewriter, loc, inner, line * lineElements);
    memref::PrefetchOp::create(rewriter, loc, base, indices,
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

struct AttnPrefetchStreamsPass
    : attn::impl::AttnPrefetchStreamsBase<AttnPrefetchStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(attn::verifyOptionAtLeast(getOperation(), getArgument(),
                                         "distance", distance, 0)))
      return signalPassFailure();
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
      for (vector::TransferReadOp read : rows)
        prefetchAhead(rewriter, loop, read, distance);
    }
  }
};

} // namespace
