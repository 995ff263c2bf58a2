//===- RegionDerivative.cpp - derivatives of modifier regions -------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/RegionDerivative.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

/// Whether `op` produces a float whose tangent the differentiation cannot
/// build.
static bool isNonDifferentiable(Operation &op) {
  bool producesFloat = llvm::any_of(op.getResultTypes(), [](Type type) {
    return isa<FloatType>(getElementTypeOrSelf(type));
  });
  if (!producesFloat)
    return false;
  return !isa<arith::ConstantOp, arith::AddFOp, arith::SubFOp, arith::MulFOp,
              arith::DivFOp, arith::NegFOp, arith::MaximumFOp,
              arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
              arith::SelectOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
              arith::UIToFPOp, math::TanhOp, math::ExpOp, math::Exp2Op,
              math::LogOp, math::Log2Op, math::Log1pOp, math::SqrtOp,
              math::RsqrtOp, math::AbsFOp, math::ErfOp, math::SinOp,
              math::CosOp, tensor::ExtractOp>(op);
}

Operation *attn::findNonDifferentiableOp(Region &region) {
  for (Operation &op : region.front().without_terminator())
    if (isNonDifferentiable(op))
      return &op;
  return nullptr;
}

namespace {

/// Builds tangents next to the cloned values. A null tangent is zero (the
/// value does not depend on the argument), so that index arithmetic and
/// constants cost nothing.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The tangent of `op`'s single result, from its (cloned) operands
  /// `x` and their tangents `dx`, and its cloned result `r`.
  Value build(Operation &op, ValueRange x, ArrayRef<Value> dx, Value r) {
    return llvm::TypeSwitch<Operation *, Value>(&op)
        .Case([&](arith::AddFOp) { return add(dx[0], dx[1]); })
        .Case([&](arith::SubFOp) { return sub(dx[0], dx[1]); })
        .Case([&](arith::MulFOp) {
          return add(mul(dx[0], x[1]), mul(x[0], dx[1]));
        })
        .Case([&](arith::DivFOp) {
          // d(a / b) = (da - (a / b) db) / b.
          return div(sub(dx[0], mul(r, dx[1])), x[1]);
        })
        .Case([&](arith::NegFOp) { return neg(dx[0]); })
        .Case<arith::MaximumFOp, arith::MaxNumFOp>(
            [&](Operation *) { return pick(arith::CmpFPredicate::OGE, x, dx); })
        .Case<arith::MinimumFOp, arith::MinNumFOp>(
            [&](Operation *) { return pick(arith::CmpFPredicate::OLE, x, dx); })
        .Case([&](arith::SelectOp) -> Value {
          if (!dx[1] && !dx[2])
            return {};
          return arith::SelectOp::create(b, loc, x[0], orZero(dx[1], r),
                                         orZero(dx[2], r));
        })
        .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *) -> Value {
          if (!dx[0])
            return {};
          Operation *cast = b.clone(op);
          cast->setOperand(0, dx[0]);
          return cast->getResult(0);
        })
        // d tanh = (1 - tanh^2) da.
        .Case([&](math::TanhOp) {
          return mul(sub(constant(r, 1.0), mul(r, r)), dx[0]);
        })
        .Case([&](math::ExpOp) { return mul(r, dx[0]); })
        .Case([&](math::Exp2Op) {
          return mul(mul(r, constant(r, llvm::numbers::ln2)), dx[0]);
        })
        .Case([&](math::LogOp) { return div(dx[0], x[0]); })
        .Case([&](math::Log1pOp) {
          return div(dx[0],
                     arith::AddFOp::create(b, loc, constant(r, 1.0), x[0]));
        })
        // d erf = 2 / sqrt(pi) exp(-a^2) da.
        .Case([&](math::ErfOp) {
          Value gauss = math::ExpOp::create(b, loc, neg(mul(x[0], x[0])));
          return mul(mul(constant(r, 2.0 * llvm::numbers::inv_sqrtpi), gauss),
                     dx[0]);
        })
        .Case([&](math::SinOp) {
          return mul(math::CosOp::create(b, loc, x[0]), dx[0]);
        })
        .Case([&](math::CosOp) {
          return neg(mul(math::SinOp::create(b, loc, x[0]), dx[0]));
        })
        .Case([&](math::Log2Op) {
          return div(dx[0], mul(x[0], constant(r, llvm::numbers::ln2)));
        })
        // d sqrt = da / (2 sqrt), d rsqrt = -rsqrt^3 / 2 da.
        .Case(
            [&](math::SqrtOp) { return div(dx[0], mul(constant(r, 2.0), r)); })
        .Case([&](math::RsqrtOp) {
          return mul(mul(constant(r, -0.5), mul(r, mul(r, r))), dx[0]);
        })
        .Case([&](math::AbsFOp) {
          return mul(math::CopySignOp::create(b, loc, constant(r, 1.0), x[0]),
                     dx[0]);
        })
        // Constants, floats made from integers and elements read from
        // tensors (captured, not differentiated) do not vary.
        .Default([](Operation *) { return Value(); });
  }

private:
  Value constant(Value like, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(like.getType(), v));
  }
  Value orZero(Value tangent, Value like) {
    return tangent ? tangent : constant(like, 0.0);
  }
  Value add(Value a, Value c) {
    if (!a || !c)
      return a ? a : c;
    return arith::AddFOp::create(b, loc, a, c);
  }
  Value sub(Value a, Value c) {
    if (!c)
      return a;
    if (!a)
      return neg(c);
    return arith::SubFOp::create(b, loc, a, c);
  }
  Value neg(Value a) { return a ? arith::NegFOp::create(b, loc, a) : a; }
  Value mul(Value a, Value c) {
    if (!a || !c)
      return {};
    return arith::MulFOp::create(b, loc, a, c);
  }
  Value div(Value a, Value c) {
    if (!a)
      return {};
    return arith::DivFOp::create(b, loc, a, c);
  }
  /// The tangent of max/min: that of the operand the op picks (the first
  /// where `predicate` holds between them).
  Value pick(arith::CmpFPredicate predicate, ValueRange x, ArrayRef<Value> dx) {
    if (!dx[0] && !dx[1])
      return {};
    Value first = arith::CmpFOp::create(b, loc, predicate, x[0], x[1]);
    return arith::SelectOp::create(b, loc, first, orZero(dx[0], x[0]),
                                   orZero(dx[1], x[0]));
  }

  OpBuilder &b;
  Location loc;
};

} // namespace

std::pair<Value, Value>
attn::buildValueAndDerivative(OpBuilder &b, Location loc, Region &region,
                              ValueRange args, unsigned wrt) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  DenseMap<Value, Value> tangents;
  tangents[args[wrt]] = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(args[wrt].getType(), 1.0));
  TangentBuilder builder(b, loc);
  for (Operation &op : block.without_terminator()) {
    assert(!isNonDifferentiable(op) && "checked by findNonDifferentiableOp");
    Operation *clone = b.clone(op, mapping);
    if (clone->getNumResults() != 1 ||
        !isa<FloatType>(clone->getResult(0).getType()))
      continue;
    SmallVector<Value> operandTangents;
    for (Value operand : clone->getOperands())
      operandTangents.push_back(tangents.lookup(operand));
    if (llvm::all_of(operandTangents, [](Value t) { return !t; }))
      continue;
    if (Value tangent = builder.build(op, clone->getOperands(), operandTangents,
                                      clone->getResult(0)))
      tangents[clone->getResult(0)] = tangent;
  }
  // The region is not isolated from above: the yielded value may be defined
  // outside it (a constant the greedy driver hoisted).
  Value result =
      mapping.lookupOrDefault(cast<YieldOp>(block.getTerminator()).getValue());
  Value derivative = tangents.lookup(result);
  if (!derivative)
    derivative = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(result.getType(), 0.0));
  return {result, derivative};
}
