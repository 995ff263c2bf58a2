//===- VerifyInput.cpp - what upstream verifiers accept and we cannot -----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNVERIFYINPUT
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// A `tensor.dim` or `memref.dim` (each a source and an index) whose
/// constant index names no dimension of its ranked source. Returns
/// failure after the diagnostic.
template <typename DimOp> LogicalResult verifyDimIndex(DimOp op) {
  std::optional<int64_t> index = getConstantIntValue(op.getIndex());
  auto type = dyn_cast<ShapedType>(op.getSource().getType());
  if (!index || !type || !type.hasRank())
    return success();
  if (*index >= 0 && *index < type.getRank())
    return success();
  return op.emitOpError("index ") << *index << " is not a dimension of " << type
                                  << " (0 to " << type.getRank() - 1 << ")";
}

/// A function argument whose `bufferization.buffer_layout` is one no
/// pipeline lowers (a view whose rows are not contiguous, a layout of
/// another rank): the drivers refuse it in the C ABI, and a pipeline run
/// directly made code that did not translate.
LogicalResult verifyBufferLayouts(func::FuncOp fn) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    Attribute layout = fn.getArgAttr(i, "bufferization.buffer_layout");
    if (!layout)
      continue;
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (auto map = dyn_cast<AffineMapAttr>(layout); map && map.isIdentity())
      continue;
    if (type && attn::isRowStridedLayout(layout, type.getRank()))
      continue;
    return fn.emitOpError("argument #")
           << i << " (" << fn.getArgumentTypes()[i]
           << ") has bufferization.buffer_layout = " << layout
           << "; the pipelines take the identity, or views whose innermost "
              "dimension is contiguous: strided<[?, ..., ?, 1], offset: ?> "
              "of the tensor's rank (at least 1)";
  }
  return success();
}

struct AttnVerifyInputPass
    : attn::impl::AttnVerifyInputBase<AttnVerifyInputPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](Operation *op) {
      LogicalResult result =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case<tensor::DimOp, memref::DimOp>(
                  [](auto dim) { return verifyDimIndex(dim); })
              .Case<func::FuncOp>(
                  [](func::FuncOp fn) { return verifyBufferLayouts(fn); })
              .Default([](Operation *) { return success(); });
      failed |= mlir::failed(result);
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
