//===- SlidingWindow.cpp - causal attention limited to a window -----------===//
//
// An example project built on the installed attn-mlir (docs/Install.md): a
// pass on the attn dialect, written against its installed headers and
// generated op classes only.
//
//===----------------------------------------------------------------------===//

#include "AttnExt/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/Builders.h"

namespace attn_ext {
#define GEN_PASS_DEF_ATTNEXTSLIDINGWINDOW
#include "AttnExt/Passes.h.inc"
} // namespace attn_ext

using namespace mlir;

namespace {

struct SlidingWindowPass
    : attn_ext::impl::AttnExtSlidingWindowBase<SlidingWindowPass> {
  using AttnExtSlidingWindowBase::AttnExtSlidingWindowBase;

  void runOnOperation() override {
    if (size < 1) {
      getOperation()->emitError()
          << "attn-ext-sliding-window: size must be at least 1, got "
          << static_cast<int64_t>(size);
      return signalPassFailure();
    }
    getOperation()->walk([&](attn::SdpaOp op) {
      // A window on a non-causal op would also hide earlier keys, and an
      // existing window is the model's own: both are left as they are.
      if (!op.getCausal()) {
        if (remarks)
          op.emitRemark("attn-ext-sliding-window: not causal, left alone");
        return;
      }
      if (std::optional<ArrayRef<int64_t>> window = op.getWindow()) {
        if (remarks)
          op.emitRemark("attn-ext-sliding-window: has window [")
              << (*window)[0] << ", " << (*window)[1] << "], left alone";
        return;
      }
      // Key j takes part in row i when i + off - (size - 1) <= j <= i + off
      // (the op's window semantics), the causal bound included.
      int64_t left = size - 1;
      op.setWindow(ArrayRef<int64_t>{left, 0});
      if (remarks)
        op.emitRemark("attn-ext-sliding-window: window [") << left << ", 0]";
    });
  }
};

} // namespace
