//===- StackIterationBuffers.cpp - small iteration buffers on the stack ---===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSTACKITERATIONBUFFERS
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// The bytes of a statically shaped buffer of integers or floats in the
/// default memory space, or nullopt for any other.
std::optional<int64_t> getStaticBytes(MemRefType type) {
  if (!type.hasStaticShape() || type.getMemorySpace() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Whether `value` (a buffer or a view of one) may be passed beyond the
/// iteration's block or freed by anything but `dealloc`: a use by a
/// terminator, branch, call or region-branching op (a loop's initial
/// value) could carry it out, and a free of a view could free it. (Ops
/// inside nested loops reading it, or linalg ops writing it, keep it.)
bool mayEscape(Value value, Operation *dealloc) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user == dealloc)
      continue;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == value &&
          llvm::any_of(user->getResults(),
                       [&](Value r) { return mayEscape(r, dealloc); }))
        return true;
      continue;
    }
    if (user->hasTrait<OpTrait::IsTerminator>() ||
        isa<BranchOpInterface, CallOpInterface, RegionBranchOpInterface,
            memref::DeallocOp>(user))
      return true;
  }
  return false;
}

/// The single memref.dealloc of `alloc` in its own block, or null when it
/// has none, several or a conditional one.
memref::DeallocOp getBlockDealloc(memref::AllocOp alloc) {
  memref::DeallocOp found;
  for (Operation *user : alloc->getUsers()) {
    auto dealloc = dyn_cast<memref::DeallocOp>(user);
    if (!dealloc)
      continue;
    if (found || dealloc->getBlock() != alloc->getBlock())
      return nullptr;
    found = dealloc;
  }
  return found;
}

/// Fills `buffer` (integers or floats) with all-ones bits: NaN in every
/// float type, what the caching allocator's poison writes (0xff bytes).
void fillWithOnes(OpBuilder &builder, memref::AllocaOp buffer) {
  Type element = buffer.getType().getElementType();
  APInt ones = APInt::getAllOnes(element.getIntOrFloatBitWidth());
  TypedAttr value;
  if (auto floatType = dyn_cast<FloatType>(element))
    value = builder.getFloatAttr(floatType,
                                 APFloat(floatType.getFloatSemantics(), ones));
  else
    value = builder.getIntegerAttr(element, ones);
  Value scalar = arith::ConstantOp::create(builder, buffer.getLoc(), value);
  linalg::FillOp::create(builder, buffer.getLoc(), ValueRange{scalar},
                         ValueRange{buffer.getResult()});
}

struct AttnStackIterationBuffersPass
    : attn::impl::AttnStackIterationBuffersBase<AttnStackIterationBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(attn::verifyOptionAtLeast(getOperation(), getArgument(),
                                         "max-bytes", maxBytes, 0)))
      return signalPassFailure();
    getOperation()->walk([&](scf::ForallOp loop) { promote(loop); });
  }

  /// Promotes the allocations of one iteration of `loop`, in program
  /// order, while they fit in `maxBytes`.
  void promote(scf::ForallOp loop) {
    int64_t used = 0;
    SmallVector<memref::AllocOp> allocs(
        loop.getBody()->getOps<memref::AllocOp>());
    for (memref::AllocOp alloc : allocs) {
      std::optional<int64_t> bytes = getStaticBytes(alloc.getType());
      if (!bytes || used + *bytes > maxBytes)
        continue;
      memref::DeallocOp dealloc = getBlockDealloc(alloc);
      if (!dealloc || mayEscape(alloc, dealloc))
        continue;
      used += *bytes;
      OpBuilder builder(alloc);
      auto alloca = memref::AllocaOp::create(
          builder, alloc.getLoc(), alloc.getType(), ValueRange(),
          alloc.getSymbolOperands(), alloc.getAlignmentAttr());
      if (poison)
        fillWithOnes(builder, alloca);
      alloc.replaceAllUsesWith(alloca.getResult());
      dealloc.erase();
      alloc.erase();
    }
  }
};

} // namespace
