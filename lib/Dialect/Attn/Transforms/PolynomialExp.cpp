//===- PolynomialExp.cpp - f32 exp and exp2 as vectorisable polynomials ---===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPOLYNOMIALEXP
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// f32 `math.exp2(x)` = 2^k * 2^f with k = roundeven(x), f = x - k in
/// [-1/2, 1/2], 2^f by its Taylor polynomial of degree 7 (truncation error
/// below 2^-27 relative, under the rounding of the evaluation), and 2^k
/// assembled in the exponent bits. x is clamped to [-127, 128] first:
/// below -127 the result is 0 (-inf included; f32 denormals are flushed),
/// 128 and above gives the exponent field 255, that is +inf. NaN stays NaN.
/// Upstream approximates exp but not exp2, and exp2 of a libm call does not
/// vectorise.
struct Exp2Polynomial : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Type intType = rewriter.getI32Type();
    if (auto vector = dyn_cast<VectorType>(type))
      intType = vector.clone(intType);
    // A scalar constant, splat when the operand is a vector.
    auto constant = [&](Type like, TypedAttr scalar) -> Value {
      auto vector = dyn_cast<VectorType>(like);
      return arith::ConstantOp::create(
          rewriter, loc, like,
          vector ? TypedAttr(DenseElementsAttr::get(vector, scalar)) : scalar);
    };
    auto floatConst = [&](double v) {
      return constant(type, rewriter.getF32FloatAttr(v));
    };
    auto intConst = [&](int32_t v) {
      return constant(intType, rewriter.getI32IntegerAttr(v));
    };

    Value x = op.getOperand();
    Value clamped = arith::MaximumFOp::create(
        rewriter, loc,
        arith::MinimumFOp::create(rewriter, loc, x, floatConst(128.0)),
        floatConst(-127.0));
    Value k = math::RoundEvenOp::create(rewriter, loc, clamped);
    Value f = arith::SubFOp::create(rewriter, loc, clamped, k);

    // sum_n (ln 2)^n / n! f^n, by Horner's rule.
    double coefficient[8];
    coefficient[0] = 1.0;
    for (int n = 1; n < 8; ++n)
      coefficient[n] = coefficient[n - 1] * llvm::numbers::ln2 / n;
    Value poly = floatConst(coefficient[7]);
    for (int n = 6; n >= 0; --n)
      poly = math::FmaOp::create(rewriter, loc, poly, f,
                                 floatConst(coefficient[n]));

    // 2^k as the f32 with biased exponent k + 127 (0 for k = -127).
    Value exponent = arith::AddIOp::create(
        rewriter, loc, arith::FPToSIOp::create(rewriter, loc, intType, k),
        intConst(127));
    Value pow2k = arith::BitcastOp::create(
        rewriter, loc, type,
        arith::ShLIOp::create(rewriter, loc, exponent, intConst(23)));
    Value result = arith::MulFOp::create(rewriter, loc, poly, pow2k);

    Value isNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isNaN, x, result);
    return success();
  }
};

/// Applies upstream's exp approximation to f32 math.exp and ours to f32
/// math.exp2. The patterns only match f32 (scalar or vector) operands, so
/// f64 and the other math functions are left to libm.
struct AttnPolynomialExpPass
    : attn::impl::AttnPolynomialExpBase<AttnPolynomialExpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName();
    });
    patterns.add<Exp2Polynomial>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
