//===- WidenToF64.cpp - retype a module's float tensors to f64 ------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The float64 reference of a module is the same module with every float
// tensor widened to f64, lowered by the same passes: the attn lowering then
// accumulates in f64. This keeps one definition of the semantics (the
// reference lowering) rather than a second, hand-written one in the runner.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNWIDENTOF64
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Ranked tensors of f16/bf16/f32 become tensors of f64; all else is kept.
/// Scalars are kept on purpose: modifier regions are defined on f32.
Type widenType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto element =
      tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
  if (!element || element.getWidth() >= 64)
    return type;
  return tensor.clone(Float64Type::get(type.getContext()));
}

/// Whether `op` produces or consumes a tensor `widenType` would change.
bool touchesNarrowFloats(Operation *op) {
  auto narrow = [](Type t) { return widenType(t) != t; };
  return llvm::any_of(op->getOperandTypes(), narrow) ||
         llvm::any_of(op->getResultTypes(), narrow);
}

/// Whether `op` is in a score_mod or mask_mod region, which computes on f32
/// scalars whatever the tensors' type.
bool isInModifierRegion(Operation *op) {
  return op->getParentOfType<SdpaOp>() || op->getParentOfType<WeightsOp>() ||
         op->getParentOfType<SdpaGradOp>();
}

/// Ops whose only dependence on the element type is through their operand
/// and result types, so that retyping them in place is exact. linalg.fill
/// also takes a scalar, which is widened separately. Packs and unpacks move
/// elements (weights a module takes pre-packed into panels); a pack with a
/// padding value would need that scalar widened too.
bool isRetypable(Operation *op) {
  if (auto pack = dyn_cast<linalg::PackOp>(op))
    return !pack.getPaddingValue();
  return isa<AttnDialect, func::FuncDialect>(op->getDialect()) ||
         isa<ModuleOp, linalg::FillOp, linalg::SoftmaxOp, tensor::EmptyOp,
             tensor::DimOp, tensor::CastOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::ExtractSliceOp,
             tensor::InsertSliceOp, tensor::ConcatOp, scf::ForallOp,
             scf::InParallelOp, tensor::ParallelInsertSliceOp,
             linalg::UnPackOp>(op);
}

/// Whether `generic` computes with float arithmetic alone (add, sub, mul,
/// div, max, min, neg on its arguments and float constants), so that
/// retyping its float arguments and results to f64 computes the same
/// function in float64: projections and other contractions written as
/// linalg.generic, such as Linformer's.
bool isWidenableGeneric(linalg::GenericOp generic) {
  Region *body = &generic.getRegion();
  return llvm::all_of(generic.getBody()->getOperations(), [&](Operation &op) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      return isa<FloatAttr>(constant.getValue());
    // A float captured from outside the body (a frontend's scale) must be
    // a constant: it is widened with the body.
    bool capturesOnlyConstants = llvm::all_of(op.getOperands(), [&](Value v) {
      return !isa<FloatType>(v.getType()) ||
             body->isAncestor(v.getParentRegion()) ||
             matchPattern(v, m_Constant<FloatAttr>(nullptr));
    });
    // exp and square roots computed in f64 are the reference's; comparisons,
    // selects and index arithmetic (a frontend's argmax beside a row max) mean
    // the same at any float width.
    return capturesOnlyConstants &&
           isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
               arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
               arith::MinNumFOp, arith::NegFOp, arith::CmpFOp, arith::SelectOp,
               arith::CmpIOp, arith::AddIOp, arith::SubIOp, arith::IndexCastOp,
               arith::TruncFOp, arith::ExtFOp, linalg::IndexOp, math::ExpOp,
               math::SqrtOp, math::RsqrtOp, linalg::YieldOp>(op);
  });
}

/// Retypes the body of a widenable generic: block arguments of tensors that
/// become f64 become f64, float constants are converted, and each op's
/// result takes its operands' type.
void widenGenericBody(linalg::GenericOp generic) {
  Block *body = generic.getBody();
  Type f64 = Float64Type::get(generic.getContext());
  // Operands defined by block arguments (the function's) are retyped after
  // this, so ask what their type becomes.
  for (auto [operand, arg] :
       llvm::zip(generic->getOperands(), body->getArguments()))
    if (isa<FloatType>(arg.getType()) &&
        getElementTypeOrSelf(widenType(operand.getType())).isF64())
      arg.setType(f64);
  // Float constants captured from outside: an f64 copy in the body.
  OpBuilder b = OpBuilder::atBlockBegin(body);
  for (Operation &op : body->without_terminator())
    for (OpOperand &operand : op.getOpOperands()) {
      FloatAttr value;
      if (!generic.getRegion().isAncestor(operand.get().getParentRegion()) &&
          matchPattern(operand.get(), m_Constant(&value)))
        operand.set(arith::ConstantOp::create(
            b, generic.getLoc(), f64,
            FloatAttr::get(f64, value.getValueAsDouble())));
    }
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator())) {
    // A rounding between float types (torch-mlir truncates its f64 scale
    // to f32 in the body) is no rounding in float64.
    if (isa<arith::TruncFOp, arith::ExtFOp>(op) &&
        op.getOperand(0).getType().isF64()) {
      op.getResult(0).replaceAllUsesWith(op.getOperand(0));
      op.erase();
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto value = cast<FloatAttr>(constant.getValue());
      constant.setValueAttr(FloatAttr::get(f64, value.getValueAsDouble()));
      constant.getResult().setType(f64);
      continue;
    }
    if (llvm::any_of(op.getOperandTypes(), [](Type t) { return t.isF64(); }))
      for (Value result : op.getResults())
        if (isa<FloatType>(result.getType()))
          result.setType(f64);
  }
}

/// The values of an f32 tensor constant held as a resource blob (the
/// weights torch-mlir and iree-turbine write as `dense_resource`), when
/// the blob is there.
std::optional<ArrayRef<float>> getResourceFloats(arith::ConstantOp op) {
  auto attr = dyn_cast<DenseF32ResourceElementsAttr>(op.getValue());
  if (!attr)
    return std::nullopt;
  return attr.tryGetAsArrayRef();
}

/// A dense float tensor constant's value (inline or an f32 resource blob)
/// converted to f64, or null when `op` is not one.
DenseElementsAttr getWidenedConstant(arith::ConstantOp op,
                                     RankedTensorType type) {
  SmallVector<double> values;
  if (auto attr = dyn_cast<DenseFPElementsAttr>(op.getValue())) {
    for (const APFloat &v : attr.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  } else if (std::optional<ArrayRef<float>> blob = getResourceFloats(op)) {
    values.assign(blob->begin(), blob->end());
  } else {
    return {};
  }
  return DenseElementsAttr::get(type, ArrayRef<double>(values));
}

/// Checks that every op can be retyped, then retypes the whole module in
/// one walk.
struct AttnWidenToF64Pass : attn::impl::AttnWidenToF64Base<AttnWidenToF64Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();

    // Named structured ops (linalg.matmul, transpose, broadcast, reduce, ...)
    // as the generics they are, whose bodies are then checked and retyped
    // like any generic's. linalg.fill keeps its form (its scalar is widened
    // below).
    SmallVector<linalg::LinalgOp> named;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::FillOp>(op) &&
          touchesNarrowFloats(op) && !isInModifierRegion(op))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }

    // Report every op the retyping cannot follow before touching anything,
    // so the user sees all of them and the module stays as it was. Ops in
    // modifier regions compute on f32 scalars and are left alone.
    bool unsupported = false;
    module.walk([&](Operation *op) {
      if (isRetypable(op) || !touchesNarrowFloats(op) || isInModifierRegion(op))
        return;
      auto constant = dyn_cast<arith::ConstantOp>(op);
      if (constant && (isa<DenseFPElementsAttr>(constant.getValue()) ||
                       getResourceFloats(constant)))
        return;
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (generic && isWidenableGeneric(generic))
        return;
      op->emitOpError()
          << "has float tensors but no float64 form; a float64 reference "
             "can only be built for modules of attn ops, func ops, tensor "
             "shape ops (empty, dim, cast, reshapes, slices, concat), "
             "linalg.fill, linalg.softmax, linalg.pack (without padding) "
             "and linalg.unpack, linalg ops (named or generic) "
             "with float arithmetic (and exp, sqrt, comparisons, selects) "
             "only and "
             "dense constants";
      unsupported = true;
    });
    if (unsupported)
      return signalPassFailure();

    // Results of attn ops that other ops read, with their declared element
    // types (rounded to them below).
    SmallVector<std::pair<Value, Type>> passedOn;
    module.walk([&](Operation *op) {
      if (!isa<AttnDialect>(op->getDialect()) || isInModifierRegion(op))
        return;
      for (Value result : op->getResults()) {
        Type element = getElementTypeOrSelf(result.getType());
        bool readByOps = llvm::any_of(result.getUsers(), [](Operation *user) {
          return !isa<func::ReturnOp>(user);
        });
        if (widenType(result.getType()) != result.getType() && readByOps)
          passedOn.push_back({result, element});
      }
    });
    // Every value is retyped at once, so the IR is consistent again when
    // the walk ends; the verifier runs after the pass.
    auto widen = [](Value v) { v.setType(widenType(v.getType())); };
    module.walk([&](Operation *op) {
      if (isInModifierRegion(op))
        return;
      if (auto func = dyn_cast<func::FuncOp>(op)) {
        SmallVector<Type> inputs, results;
        llvm::transform(func.getArgumentTypes(), std::back_inserter(inputs),
                        widenType);
        llvm::transform(func.getResultTypes(), std::back_inserter(results),
                        widenType);
        func.setFunctionType(
            FunctionType::get(func.getContext(), inputs, results));
        for (BlockArgument arg : func.getArguments())
          widen(arg);
        return;
      }
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        // linalg.fill carries a region typed by its element type: rebuild
        // it with the value widened and the (already retyped) destination.
        OpBuilder b(fill);
        Value value = fill.getInputs()[0];
        if (auto type = dyn_cast<FloatType>(value.getType());
            type && type.getWidth() < 64 &&
            getElementTypeOrSelf(fill.getOutputs()[0]).isF64())
          value =
              arith::ExtFOp::create(b, fill.getLoc(), b.getF64Type(), value);
        auto widened = linalg::FillOp::create(b, fill.getLoc(), value,
                                              fill.getOutputs()[0]);
        fill->replaceAllUsesWith(widened);
        fill->erase();
        return;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
        // The walk is post-order: the body was visited (and left alone,
        // being scalar) before its generic.
        widenGenericBody(generic);
        for (Value result : op->getResults())
          widen(result);
        return;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        auto type = dyn_cast<RankedTensorType>(widenType(constant.getType()));
        if (DenseElementsAttr value =
                type ? getWidenedConstant(constant, type) : nullptr) {
          constant.setValueAttr(value);
          widen(constant.getResult());
        }
        return;
      }
      // Loops of tiles (a transform schedule's scf.forall): their shared
      // outputs are block arguments too.
      for (Region &region : op->getRegions())
        for (BlockArgument arg : region.getArguments())
          widen(arg);
      for (Value result : op->getResults())
        widen(result);
    });
    // A value one attn op passes to another is rounded to its declared type
    // in between, as the program rounds it: what the reference then checks
    // is the compiled code's error, not the program's. (A bf16 attention
    // output fed to its backward: dS = P (dP - D) with D from the rounded
    // output cancels where one or two keys are visible, and dQ from an
    // unrounded one differed by 1e-2 from every correct compilation.)
    for (auto [value, element] : passedOn)
      roundToDeclaredType(rewriter, value, cast<FloatType>(element));
  }

  /// Replaces the uses of `value` (widened to f64) by other ops than a
  /// return with `value` rounded to `element` and widened again.
  static void roundToDeclaredType(RewriterBase &rewriter, Value value,
                                  FloatType element) {
    auto type = cast<RankedTensorType>(value.getType());
    rewriter.setInsertionPointAfterValue(value);
    Location loc = value.getLoc();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, value);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
    auto rounded = linalg::GenericOp::create(
        rewriter, loc, type, value, init,
        ArrayRef<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          // Through f32, as the compiled code rounds its f32 values (and
          // f64 -> bf16 would call a runtime function the JIT lacks).
          Value narrow = args[0];
          for (Type step : {Type(b.getF32Type()), Type(element)})
            if (cast<FloatType>(narrow.getType()).getWidth() >
                cast<FloatType>(step).getWidth())
              narrow = arith::TruncFOp::create(b, loc, step, narrow);
          Value wide = narrow;
          for (Type step : {Type(b.getF32Type()), type.getElementType()})
            if (cast<FloatType>(wide.getType()).getWidth() <
                cast<FloatType>(step).getWidth())
              wide = arith::ExtFOp::create(b, loc, step, wide);
          linalg::YieldOp::create(b, loc, wide);
        });
    rewriter.replaceUsesWithIf(
        value, rounded.getResult(0), [&](OpOperand &use) {
          return use.getOwner() != rounded.getOperation() &&
                 !isa<func::ReturnOp>(use.getOwner()) &&
                 !isa<tensor::DimOp>(use.getOwner());
        });
  }
};

} // namespace
