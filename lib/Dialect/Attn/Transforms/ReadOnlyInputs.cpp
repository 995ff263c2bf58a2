//===- ReadOnlyInputs.cpp - public tensor arguments are read-only ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNREADONLYINPUTS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// Sets `bufferization.writable = false` on the tensor arguments of every
/// public function with a body.
struct AttnReadOnlyInputsPass
    : attn::impl::AttnReadOnlyInputsBase<AttnReadOnlyInputsPass> {
  void runOnOperation() override {
    // The attribute name one-shot bufferization reads; spelled out so this
    // pass does not depend on the bufferization dialect.
    StringRef writable = "bufferization.writable";
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(i, writable, readOnly);
    }
  }
};

} // namespace
