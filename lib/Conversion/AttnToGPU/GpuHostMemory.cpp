//===- GpuHostMemory.cpp - host buffers to device memory ------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Compiled for CUDA, a public function receives device pointers and its
// kernels read and write device memory; what bufferization left on the host
// (allocations, whole-buffer copies, deallocations) must therefore be
// device operations too, and anything that would touch a buffer's contents
// on the CPU is an error rather than a segfault at run time.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNGPUHOSTMEMORY
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Whether `op` itself (not what its regions hold) reads or writes a
/// memref's contents.
bool opTouchesBufferContents(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>);
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()) &&
           e.getValue() && isa<MemRefType>(e.getValue().getType());
  });
}

/// Whether `op` (or, for control flow, an op nested in it outside kernels)
/// reads or writes the contents of a memref on the host (not its metadata:
/// dim, views, casts and allocation itself are fine). Kernels and calls
/// (whose callee is rewritten on its own) do not count.
bool touchesBufferContents(Operation *op) {
  // One walk: control flow (recursive effects) is looked into; any other op
  // answers for itself, its regions (a function's body) not included.
  WalkResult found = op->walk<WalkOrder::PreOrder>([](Operation *inner) {
    if (isa<gpu::LaunchOp, CallOpInterface>(inner))
      return WalkResult::skip();
    if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return opTouchesBufferContents(inner) ? WalkResult::interrupt()
                                          : WalkResult::skip();
  });
  return found.wasInterrupted();
}

/// Replaces a host allocation by a device one, freed at the end of its
/// block unless the block's terminator passes it on (the CUDA pipeline runs
/// no ownership-based deallocation: its helpers would read pointer tables
/// in host memory).
void replaceAllocation(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  auto type = cast<MemRefType>(op->getResult(0).getType());
  ValueRange dynamicSizes, symbols;
  if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
    dynamicSizes = alloc.getDynamicSizes();
    symbols = alloc.getSymbolOperands();
  } else {
    auto alloca = cast<memref::AllocaOp>(op);
    dynamicSizes = alloca.getDynamicSizes();
    symbols = alloca.getSymbolOperands();
  }
  rewriter.setInsertionPoint(op);
  Value buffer = gpu::AllocOp::create(
                     rewriter, loc, type, /*asyncToken=*/Type(),
                     /*asyncDependencies=*/ValueRange(), dynamicSizes, symbols,
                     /*hostShared=*/false)
                     .getMemref();
  rewriter.replaceOp(op, buffer);
  Operation *terminator = buffer.getParentBlock()->getTerminator();
  bool escapes = llvm::is_contained(terminator->getOperands(), buffer);
  bool freed =
      llvm::any_of(buffer.getUsers(), llvm::IsaPred<memref::DeallocOp>);
  if (escapes || freed)
    return;
  rewriter.setInsertionPoint(terminator);
  gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), buffer);
}

/// A constant buffer (a tensor constant in the source, e.g. document ids a
/// mask_mod reads) lives in host memory: kernels get a device copy, made
/// where the host took its address and freed at the end of the block.
void copyGlobalToDevice(RewriterBase &rewriter, memref::GetGlobalOp global) {
  Location loc = global.getLoc();
  rewriter.setInsertionPointAfter(global);
  auto type = global.getType();
  Value copy = gpu::AllocOp::create(rewriter, loc, type, Type(), ValueRange(),
                                    ValueRange(), ValueRange(),
                                    /*hostShared=*/false)
                   .getMemref();
  rewriter.replaceAllUsesWith(global.getResult(), copy);
  gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange(), copy,
                        global.getResult());
  rewriter.setInsertionPoint(copy.getParentBlock()->getTerminator());
  gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), copy);
}

/// Moves `op` into a gpu.launch of one block of one thread.
void runOnOneThread(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch =
      gpu::LaunchOp::create(rewriter, loc, one, one, one, one, one, one);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(rewriter, loc);
  rewriter.moveOpBefore(op, body.getTerminator());
}

struct AttnGpuHostMemoryPass
    : attn::impl::AttnGpuHostMemoryBase<AttnGpuHostMemoryPass> {
  void runOnOperation() override {
    // Host operations, outside kernels and device modules.
    SmallVector<Operation *> hostOps;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      hostOps.push_back(op);
      // Control flow over buffers is taken (or refused) as a whole.
      if (op->getNumRegions() && !isa<func::FuncOp, ModuleOp>(op) &&
          touchesBufferContents(op))
        return WalkResult::skip();
      return WalkResult::advance();
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : hostOps) {
      if (failed(rewrite(rewriter, op)))
        return signalPassFailure();
    }
  }

  LogicalResult rewrite(IRRewriter &rewriter, Operation *op) {
    rewriter.setInsertionPoint(op);
    if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
      replaceAllocation(rewriter, op);
      return success();
    }
    if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      copyGlobalToDevice(rewriter, global);
      return success();
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      rewriter.replaceOpWithNewOp<gpu::DeallocOp>(dealloc, Type(), ValueRange(),
                                                  dealloc.getMemref());
      return success();
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (!source.getLayout().isIdentity() || !target.getLayout().isIdentity())
        return copy.emitOpError()
               << "copies a strided view on the host; compiled for CUDA, only "
                  "whole contiguous buffers can be copied there ("
               << source << " to " << target << ")";
      rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(
          copy, Type(), ValueRange(), copy.getTarget(), copy.getSource());
      return success();
    }
    if (!touchesBufferContents(op))
      return success();
    // Sequential code over buffers (the block table of a CSR layout) runs
    // as a kernel of one thread: slow, but only ever small bookkeeping.
    if (op->getNumResults() == 0) {
      runOnOneThread(rewriter, op);
      return success();
    }
    return op->emitOpError()
           << "would read or write a device buffer on the host, and its "
              "results are needed there: nothing in the CUDA pipeline mapped "
              "it to a kernel";
  }
};

} // namespace
