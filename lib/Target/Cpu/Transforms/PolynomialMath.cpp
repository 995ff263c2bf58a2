//===- PolynomialMath.cpp - f32 math functions as vectorisable polynomials ===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/Cpu/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPOLYNOMIALMATH
#include "attn/Target/Cpu/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// 2^y for y in [0, 1] by a degree-6 polynomial fitted for the least
/// maximum relative error on [0, 1] (0.7 ULP as evaluated in f32), by
/// Horner's rule; `constant` makes a scalar constant of y's type.
static Value buildExp2OfFraction(PatternRewriter &rewriter, Location loc,
                                 Value y,
                                 function_ref<Value(double)> constant) {
  static constexpr float kCoefficients[] = {
      1.0f,           0.693147004f,   0.240229845f,   0.0554833375f,
      0.00967884436f, 0.00124396826f, 0.000217021923f};
  Value poly = constant(kCoefficients[6]);
  for (int n = 5; n >= 0; --n)
    poly =
        math::FmaOp::create(rewriter, loc, poly, y, constant(kCoefficients[n]));
  return poly;
}

/// Lanes of the 512-bit registers vscalefps works on.
static constexpr int64_t kScalefLanes = 16;

/// f32 `math.exp2(x)` = 2^k * 2^y with k = floor(x) and y = x - k in
/// [0, 1] (k computed as roundeven(x - 1/2): ties and the rounding of
/// x - 1/2 may leave y a hair outside, where the polynomial is as good),
/// 2^y by buildExp2OfFraction, 2^k assembled in the exponent bits.
/// Reducing to floor(x) rather than to the nearest integer makes every
/// normal result reachable: the exponent field k + 127 takes the values 1
/// to 254 for the results 2^-126 to just below 2^128, where the nearest
/// integer would need 255 (+inf) for x in [127.5, 128) and 0 below -126.5.
/// x is clamped to [-126.5, 128] first: results below 2^-126 are 0 (f32
/// denormals are not produced; -inf gives 0), 2^128 and above +inf.
///
/// k is rounded by adding 1.5 * 2^23: the sum's last mantissa bits hold k
/// (two's complement), so its bits give the exponent field without a
/// float-to-int conversion, which would be poison for NaN. NaN stays NaN
/// through every step (the clamps propagate it, and NaN times any 2^k is
/// NaN), so no select is needed for it. Upstream approximates exp but not
/// exp2, and exp2 of a libm call does not vectorise.
///
/// With `scalef`, a 1-D vector of a multiple of 16 lanes (what
/// attn-vectorize-tiles makes of a softmax row) takes AVX-512's
/// instructions for the two ends: k = floor(x) is one `vrndscaleps`
/// (`math.floor`) and 2^k * 2^y one `vscalefps` per 16 lanes, where the
/// shifter and the exponent bits take six instructions. The function is
/// the same: x is clamped above at 128 (2^128 * 1 = +inf; +inf itself would
/// make y = inf - inf), and lanes below -126 are 0 by a select, which also
/// gives -inf its 0 (its y is NaN) and keeps vscalefps from producing
/// denormals (slow on some x86 cores); NaN compares unordered and is kept.
struct Exp2Polynomial : OpRewritePattern<math::Exp2Op> {
  Exp2Polynomial(MLIRContext *context, bool scalef)
      : OpRewritePattern(context), scalef(scalef) {}

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Type intType = rewriter.getI32Type();
    auto vector = dyn_cast<VectorType>(type);
    if (vector)
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
    if (scalef && vector && vector.getRank() == 1 && !vector.isScalable() &&
        vector.getNumElements() % kScalefLanes == 0) {
      Value clamped =
          arith::MinimumFOp::create(rewriter, loc, x, floatConst(128.0));
      Value k = math::FloorOp::create(rewriter, loc, clamped);
      Value y = arith::SubFOp::create(rewriter, loc, clamped, k);
      Value poly = buildExp2OfFraction(rewriter, loc, y, floatConst);
      // 2^k * poly, 16 lanes at a time (the x86vector op's one width).
      auto chunkType = VectorType::get({kScalefLanes}, rewriter.getF32Type());
      Value allLanes = arith::ConstantOp::create(
          rewriter, loc, rewriter.getI16IntegerAttr(-1));
      Value currentRounding = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getI32IntegerAttr(/*_MM_FROUND_CUR_DIRECTION*/ 4));
      Value scaled = floatConst(0.0);
      for (int64_t offset = 0; offset < vector.getNumElements();
           offset += kScalefLanes) {
        auto chunk = [&](Value whole) {
          return vector::ExtractStridedSliceOp::create(
              rewriter, loc, whole, ArrayRef<int64_t>{offset},
              ArrayRef<int64_t>{kScalefLanes}, ArrayRef<int64_t>{1});
        };
        Value polyChunk = chunk(poly);
        // Operands in the intrinsic's order (a, b, passthrough, mask,
        // rounding): a * 2^floor(b) in every lane.
        Value part = x86vector::MaskScaleFOp::create(
            rewriter, loc, chunkType, polyChunk, chunk(k), polyChunk, allLanes,
            currentRounding);
        scaled = vector::InsertStridedSliceOp::create(
            rewriter, loc, part, scaled, ArrayRef<int64_t>{offset},
            ArrayRef<int64_t>{1});
      }
      Value kept = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::UGE, x, floatConst(-126.0));
      rewriter.replaceOpWithNewOp<arith::SelectOp>(op, kept, scaled,
                                                   floatConst(0.0));
      return success();
    }

    Value clamped = arith::MaximumFOp::create(
        rewriter, loc,
        arith::MinimumFOp::create(rewriter, loc, x, floatConst(128.0)),
        floatConst(-126.5));
    // t = clamped - 1/2 + 1.5 * 2^23 is exact in its last bits: roundeven,
    // as the addition rounds to nearest even.
    Value shifter = floatConst(0x1.8p23);
    Value t = arith::AddFOp::create(
        rewriter, loc,
        arith::SubFOp::create(rewriter, loc, clamped, floatConst(0.5)),
        shifter);
    Value k = arith::SubFOp::create(rewriter, loc, t, shifter);
    Value y = arith::SubFOp::create(rewriter, loc, clamped, k);
    Value poly = buildExp2OfFraction(rewriter, loc, y, floatConst);

    // 2^k as the f32 with biased exponent k + 127 (0 for k = -127): t's
    // bits are those of 1.5 * 2^23 plus k, and the shift by 23 drops the
    // former (its lowest set bit is bit 22).
    Value exponent = arith::AddIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, intType, t),
        intConst(127));
    Value pow2k = arith::BitcastOp::create(
        rewriter, loc, type,
        arith::ShLIOp::create(rewriter, loc, exponent, intConst(23)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, poly, pow2k);
    return success();
  }

private:
  bool scalef;
};

/// The f32 functions upstream's polynomial approximations replace: exp for
/// the softmax, the rest for score modifiers (a softcap's tanh, erf, logs),
/// which LLVM otherwise scalarises into one libm call per element. Their
/// errors are measured in docs/Numerics.md (at most 4.3 ULP). sin and cos
/// stay with libm: upstream's range reduction is 6e-6 off (absolute) at
/// |x| = 100 and 8e-4 at 10^4, where positions put them.
static bool isApproximated(StringRef name) {
  return llvm::is_contained(
      {math::ExpOp::getOperationName(), math::TanhOp::getOperationName(),
       math::LogOp::getOperationName(), math::Log2Op::getOperationName(),
       math::Log1pOp::getOperationName(), math::ErfOp::getOperationName()},
      name);
}

/// Applies upstream's approximations to the f32 functions isApproximated
/// names and ours to f32 math.exp2. The patterns only match f32 (scalar or
/// vector) operands, so f64 and the other math functions are left to libm.
struct AttnPolynomialMathPass
    : attn::impl::AttnPolynomialMathBase<AttnPolynomialMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    patterns.add<Exp2Polynomial>(&getContext(), scalef);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
