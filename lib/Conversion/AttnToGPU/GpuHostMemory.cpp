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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
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

/// Whether `op` reads or writes the contents of a memref operand (not its
/// metadata: dim, views, casts and allocation itself are fine).
bool touchesBufferContents(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>) &&
           !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()) &&
           e.getValue() && isa<MemRefType>(e.getValue().getType());
  });
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
  Value buffer = gpu::AllocOp::create(rewriter, loc, type, /*asyncToken=*/Type(),
                                      /*asyncDependencies=*/ValueRange(),
                                      dynamicSizes, symbols,
                                      /*hostShared=*/false)
                     .getMemref();
  rewriter.replaceOp(op, buffer);
  Operation *terminator = buffer.getParentBlock()->getTerminator();
  bool escapes = llvm::is_contained(terminator->getOperands(), buffer);
  bool freed = llvm::any_of(buffer.getUsers(), llvm::IsaPred<memref::DeallocOp>);
  if (escapes || freed)
    return;
  rewriter.setInsertionPoint(terminator);
  gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), buffer);
}

struct AttnGpuHostMemoryPass
    : attn::impl::AttnGpuHostMemoryBase<AttnGpuHostMemoryPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult result = getOperation()->walk<WalkOrder::PreOrder>(
        [&](Operation *op) -> WalkResult {
          // Kernels and device modules are device code.
          if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
            return WalkResult::skip();
          rewriter.setInsertionPoint(op);
          if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
            replaceAllocation(rewriter, op);
            return WalkResult::advance();
          }
          if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
            rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
                dealloc, Type(), ValueRange(), dealloc.getMemref());
            return WalkResult::advance();
          }
          if (auto copy = dyn_cast<memref::CopyOp>(op)) {
            auto source = cast<MemRefType>(copy.getSource().getType());
            auto target = cast<MemRefType>(copy.getTarget().getType());
            if (!source.getLayout().isIdentity() ||
                !target.getLayout().isIdentity()) {
              copy.emitOpError()
                  << "copies a strided view on the host; compiled for "
                     "CUDA, only whole contiguous buffers can be copied "
                     "there (" << source << " to " << target << ")";
              return WalkResult::interrupt();
            }
            rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(
                copy, Type(), ValueRange(), copy.getTarget(),
                copy.getSource());
            return WalkResult::advance();
          }
          if (touchesBufferContents(op)) {
            op->emitOpError()
                << "would read or write a device buffer on the host: "
                   "nothing in the CUDA pipeline mapped it to a kernel";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
