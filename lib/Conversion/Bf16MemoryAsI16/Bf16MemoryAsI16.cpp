//===- Bf16MemoryAsI16.cpp - bf16 vector memory as i16 --------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Loads and stores of bf16 vectors of 8k + 1 elements as i16 vectors, with
// bitcasts between: a workaround for LLVM 22's X86 backend, which cannot
// legalise such a vector copied from memory to memory on AVX512-BF16 CPUs
// (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Bf16MemoryAsI16/Bf16MemoryAsI16.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNBF16MEMORYASI16
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The i16 vector with the bits of `type` when it is a fixed bf16 vector
/// of 8k + 1 elements (k >= 1), the lengths the X86 backend fails on; null
/// otherwise.
VectorType getBitsType(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() != 1 || vector.isScalable() ||
      !vector.getElementType().isBF16())
    return {};
  int64_t length = vector.getDimSize(0);
  if (length < 9 || length % 8 != 1)
    return {};
  return VectorType::get({length}, IntegerType::get(type.getContext(), 16));
}

/// `load <N x bfloat>` as `bitcast (load <N x i16>)`.
struct LoadAsI16 : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    VectorType bits = getBitsType(load.getType());
    if (!bits)
      return rewriter.notifyMatchFailure(load, "not a bf16 vector of 8k + 1");
    // A copy keeps the load's alignment, ordering and metadata.
    Operation *loadBits = rewriter.clone(*load);
    loadBits->getResult(0).setType(bits);
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(load, load.getType(),
                                                 loadBits->getResult(0));
    return success();
  }
};

/// `store <N x bfloat> %v` as `store (bitcast %v to <N x i16>)`.
struct StoreAsI16 : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::StoreOp store,
                                PatternRewriter &rewriter) const override {
    VectorType bits = getBitsType(store.getValue().getType());
    if (!bits)
      return rewriter.notifyMatchFailure(store, "not a bf16 vector of 8k + 1");
    Value cast = LLVM::BitcastOp::create(rewriter, store.getLoc(), bits,
                                         store.getValue());
    rewriter.modifyOpInPlace(store,
                             [&] { store.getValueMutable().assign(cast); });
    return success();
  }
};

struct AttnBf16MemoryAsI16Pass
    : attn::impl::AttnBf16MemoryAsI16Base<AttnBf16MemoryAsI16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LoadAsI16, StoreAsI16>(&getContext());
    // One rewrite per op and nothing to fold: a single walk.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
