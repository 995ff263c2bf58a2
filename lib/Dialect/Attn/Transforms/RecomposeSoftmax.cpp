//===- RecomposeSoftmax.cpp - softmaxes frontends write in steps ---------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The part of attn-raise-attention (RaiseAttention.h) that finds the
// softmaxes frontends write as separate steps (a row maximum, exponentials
// of the differences, a row sum, a division or a multiplication by its
// reciprocal; named elementwise ops or generics) and recomposes each into
// a linalg.softmax, from which RaiseAttention.cpp matches the attention.
//
//===----------------------------------------------------------------------===//

#include "RaiseAttention.h"

#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raising;

/// Whether `map` reads one value per row of its loops: every loop but the
/// last, in order, then nothing or a constant 0 (a [.., 1] tensor).
static bool isRowMap(AffineMap map) {
  unsigned rows = map.getNumDims() - 1;
  if (map.getNumSymbols() || map.getNumResults() < rows ||
      map.getNumResults() > rows + 1)
    return false;
  for (unsigned d = 0; d < rows; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return false;
  if (map.getNumResults() == rows)
    return true;
  auto zero = dyn_cast<AffineConstantExpr>(map.getResult(rows));
  return zero && zero.getValue() == 0;
}

/// `value` before an expand_shape that only appends a unit dimension
/// ([.., n] into [.., n, 1]), or `value`.
static Value throughTrailingUnitExpand(Value value) {
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return value;
  int64_t rank = expand.getResultType().getRank();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (expand.getResultType().getDimSize(rank - 1) != 1 ||
      groups.size() != static_cast<size_t>(rank - 1) ||
      groups.back() != ReassociationIndices{rank - 2, rank - 1})
    return value;
  return expand.getSrc();
}

/// What operand `operand` of the elementwise `generic` reads one value per
/// row of: the tensor itself where its map is a row map, or the source of
/// a linalg.generic that only broadcasts it over the last dimension (its
/// one input read through a row map and yielded unchanged, what IREE
/// makes of StableHLO's broadcast_in_dim) where the map is the identity,
/// with that generic added to `steps`; null otherwise.
static Value getRowOperand(linalg::GenericOp generic, OpOperand *operand,
                           SmallVectorImpl<Operation *> &steps) {
  AffineMap map = generic.getMatchingIndexingMap(operand);
  if (isRowMap(map))
    return operand->get();
  auto broadcast = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!map.isIdentity() || !broadcast || !isElementwise(broadcast) ||
      broadcast.getNumDpsInputs() != 1 ||
      !isRowMap(
          broadcast.getMatchingIndexingMap(broadcast.getDpsInputOperand(0))))
    return {};
  auto yield = cast<linalg::YieldOp>(broadcast.getBody()->getTerminator());
  if (yield.getValues().front() !=
      broadcast.getMatchingBlockArgument(broadcast.getDpsInputOperand(0)))
    return {};
  steps.push_back(broadcast);
  return broadcast.getDpsInputOperand(0)->get();
}

/// Whether `value` is a row reduction of `input` over its last dimension
/// by `CombineOp`: a linalg.generic or linalg.reduce (TOSA's reductions
/// through tosa-to-linalg) reading `input` through the identity map,
/// reducing the last loop, writing `value` one per row, into a zero where
/// `zeroInit` (other results, such as an argmax, are ignored).
template <typename... CombineOp>
static bool isRowReductionOf(Value value, Value input, bool zeroInit) {
  value = throughTrailingUnitExpand(value);
  auto generic = value.getDefiningOp<linalg::LinalgOp>();
  if (!generic || !isa<linalg::GenericOp, linalg::ReduceOp>(generic) ||
      generic.getNumDpsInputs() != 1 ||
      generic.getDpsInputOperand(0)->get() != input ||
      !generic.getMatchingIndexingMap(generic.getDpsInputOperand(0))
           .isIdentity())
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction ||
      generic.getNumReductionLoops() != 1)
    return false;
  unsigned index = cast<OpResult>(value).getResultNumber();
  OpOperand *init = generic.getDpsInitOperand(index);
  if (!isRowMap(generic.getMatchingIndexingMap(init)) ||
      (zeroInit && !isZeroInit(init->get())))
    return false;
  Operation *combine = getYielded<CombineOp...>(generic, index);
  if (!combine)
    return false;
  Value in = generic.getMatchingBlockArgument(generic.getDpsInputOperand(0));
  Value acc = generic.getMatchingBlockArgument(init);
  return (combine->getOperand(0) == in && combine->getOperand(1) == acc) ||
         (combine->getOperand(0) == acc && combine->getOperand(1) == in);
}

/// The value `recip` (an elementwise linalg.generic's result) is the
/// reciprocal of, `1 / x`; null otherwise.
static Value getReciprocalOf(Value recip) {
  auto generic = recip.getDefiningOp<linalg::GenericOp>();
  if (!generic || !isElementwise(generic) || generic.getNumDpsInputs() != 1)
    return {};
  Operation *quotient = getYielded<arith::DivFOp>(generic);
  OpOperand *x =
      quotient ? getInputOf(generic, quotient->getOperand(1)) : nullptr;
  if (!x || !generic.getMatchingIndexingMap(x).isIdentity() ||
      !matchPattern(getValueRead(generic, quotient->getOperand(0)),
                    m_OneFloat()))
    return {};
  return x->get();
}

/// The scores `div` is the softmax of over their last dimension, when it is
/// the last step of `exp(s - max(s)) / sum(exp(s - max(s)))` as four
/// linalg.generics (row max, subtract, exp, row sum, divide; the row
/// values read through broadcasting maps, maybe from [.., 1] tensors), the
/// row reductions maybe linalg.reduce and the division maybe a product by
/// the reciprocal of the row sum (what tosa-to-linalg makes of TOSA's
/// softmax). Softmax is the same function whatever the subtracted row
/// value is, but only the row maximum keeps exp in range: that is what is
/// matched. Null otherwise; `why` then says what did not hold when `div`
/// divides exponentials by one value per row (a softmax's last step that
/// is not one), and stays empty for any other op.
static Value matchDecomposedSoftmax(linalg::GenericOp div,
                                    SmallVectorImpl<Operation *> &steps,
                                    Rejection &why) {
  if (!isElementwise(div) || div.getNumDpsInputs() != 2)
    return {};
  Operation *quotient = getYielded<arith::DivFOp, arith::MulFOp>(div);
  if (!quotient)
    return {};
  OpOperand *numerator = getInputOf(div, quotient->getOperand(0));
  OpOperand *denominator = getInputOf(div, quotient->getOperand(1));
  if (!numerator || !denominator)
    return {};
  // exp * (1 / sum), in either order: the sum is what the reciprocal's
  // input is. The row values may come broadcast (getRowOperand).
  SmallVector<Operation *> broadcasts;
  if (isa<arith::MulFOp>(quotient) &&
      isRowMap(div.getMatchingIndexingMap(numerator)))
    std::swap(numerator, denominator);
  Value sum = getRowOperand(div, denominator, broadcasts);
  Operation *reciprocal = nullptr;
  if (isa<arith::MulFOp>(quotient) && sum) {
    reciprocal = sum.getDefiningOp();
    sum = getReciprocalOf(sum);
  }
  if (!sum || !div.getMatchingIndexingMap(numerator).isIdentity())
    return {};
  Value exps = numerator->get();
  auto exp = exps.getDefiningOp<linalg::GenericOp>();
  Operation *expOp = exp && isElementwise(exp) && exp.getNumDpsInputs() == 1
                         ? getYielded<math::ExpOp>(exp)
                         : nullptr;
  if (!expOp)
    return {};
  // From here on `div` divides exponentials by one value per row: a
  // softmax's last step (a layer norm's division is not). What fails now
  // is worth a remark.
  auto reject = [&](const Twine &reason) -> Value {
    why =
        ("exponentials divided by a row value, not a softmax: " + reason).str();
    return {};
  };
  if (!isRowReductionOf<arith::AddFOp>(sum, exps, /*zeroInit=*/true))
    return reject("the divisor is not the row sum of the dividend");
  OpOperand *shiftedInput = getInputOf(exp, expOp->getOperand(0));
  if (!shiftedInput || !exp.getMatchingIndexingMap(shiftedInput).isIdentity())
    return reject("exp does not read its operand elementwise");
  auto sub = shiftedInput->get().getDefiningOp<linalg::GenericOp>();
  Operation *difference =
      sub && isElementwise(sub) && sub.getNumDpsInputs() == 2
          ? getYielded<arith::SubFOp>(sub)
          : nullptr;
  if (!difference)
    return reject("exp's operand is not the scores minus a row value");
  OpOperand *scores = getInputOf(sub, difference->getOperand(0));
  OpOperand *subtracted = getInputOf(sub, difference->getOperand(1));
  Value max = subtracted ? getRowOperand(sub, subtracted, broadcasts) : Value();
  if (!scores || !max || !sub.getMatchingIndexingMap(scores).isIdentity())
    return reject("exp's operand is not the scores minus a row value");
  if (!isRowReductionOf<arith::MaximumFOp, arith::MaxNumFOp>(
          max, scores->get(), /*zeroInit=*/false))
    return reject("the value subtracted from each row is not the row's "
                  "maximum");
  if (getElementTypeOrSelf(scores->get().getType()) !=
      getElementTypeOrSelf(div->getResult(0).getType()))
    return reject("the scores' element type is not the result's");
  for (Value row : {sum, max}) {
    steps.push_back(row.getDefiningOp());
    steps.push_back(throughTrailingUnitExpand(row).getDefiningOp());
  }
  if (reciprocal)
    steps.push_back(reciprocal);
  steps.append(broadcasts);
  steps.append({exp, sub});
  return scores->get();
}

/// Whether `op` is a named elementwise op (linalg.mul, div, add, sub, exp,
/// max, linalg.elementwise, ...) that the scale and mask steps may be
/// written as: all loops parallel, one result through the identity map.
/// Not fill, copy, transpose or broadcast: the products' zero accumulators
/// and K^T are matched as those ops.
static bool isNamedElementwiseStep(linalg::LinalgOp op) {
  if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp,
          linalg::TransposeOp, linalg::BroadcastOp>(op.getOperation()))
    return false;
  return op.getNumDpsInits() == 1 && op->getNumResults() == 1 &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         op.getNumParallelLoops() == op.getNumLoops();
}

/// The decomposed softmaxes of `root` written with named ops (linalg.exp,
/// linalg.sub, linalg.div or linalg.mul, the row values spread by
/// linalg.broadcast; the row reductions linalg.reduce), as the
/// linalg.generics each is, which matchDecomposedSoftmax reads. Only the
/// ops of a division of exponentials change (to equivalent generics): a
/// named division or product one of whose operands is a named exp, that
/// exp's operand, the subtraction's and the division's row values.
void attn::raising::generalizeNamedSoftmaxes(Operation *root) {
  IRRewriter rewriter(root->getContext());
  auto generalize = [&](Value value) -> Value {
    auto op = value.getDefiningOp<linalg::LinalgOp>();
    if (!op || (!isNamedElementwiseStep(op) &&
                !isa<linalg::BroadcastOp>(op.getOperation())))
      return value;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    return succeeded(generic) ? (*generic)->getResult(0) : value;
  };
  auto isNamedExp = [](Value value) {
    auto op = value.getDefiningOp<linalg::LinalgOp>();
    return op && isNamedElementwiseStep(op) && getYielded<math::ExpOp>(op);
  };
  SmallVector<linalg::LinalgOp> divisions;
  root->walk([&](linalg::LinalgOp op) {
    if (isNamedElementwiseStep(op) && op.getNumDpsInputs() == 2 &&
        getYielded<arith::DivFOp, arith::MulFOp>(op) &&
        llvm::any_of(op.getDpsInputs(), isNamedExp))
      divisions.push_back(op);
  });
  for (linalg::LinalgOp division : divisions) {
    for (Value input : division.getDpsInputs()) {
      if (!isNamedExp(input)) {
        generalize(input); // the row sum spread over the row
        continue;
      }
      auto exp = generalize(input).getDefiningOp<linalg::GenericOp>();
      if (!exp)
        continue;
      Value shifted = generalize(exp.getDpsInputOperand(0)->get());
      if (auto sub = shifted.getDefiningOp<linalg::GenericOp>())
        if (getYielded<arith::SubFOp>(sub) && sub.getNumDpsInputs() == 2)
          generalize(sub.getDpsInputOperand(1)->get()); // the row maximum
    }
    generalize(division->getResult(0));
  }
}

/// Every decomposed softmax in `root` as the linalg.softmax it computes;
/// with `explain`, a remark on each division of exponentials by a row
/// value that is not one, saying why.
void attn::raising::recomposeSoftmaxes(Operation *root, bool explain) {
  SmallVector<std::pair<linalg::GenericOp, Value>> found;
  llvm::SetVector<Operation *> steps;
  root->walk([&](linalg::GenericOp div) {
    SmallVector<Operation *> divSteps;
    Rejection why;
    if (Value scores = matchDecomposedSoftmax(div, divSteps, why)) {
      found.push_back({div, scores});
      steps.insert(divSteps.begin(), divSteps.end());
    } else if (explain && !why.empty()) {
      div.emitRemark("attn-raise-attention: not raised: ") << why;
    }
  });
  for (auto [div, scores] : found) {
    OpBuilder b(div);
    int64_t rank = cast<ShapedType>(scores.getType()).getRank();
    auto softmax = linalg::SoftmaxOp::create(
        b, div.getLoc(), div->getResultTypes(), scores,
        div.getDpsInitOperand(0)->get(), static_cast<uint64_t>(rank - 1));
    div->getResult(0).replaceAllUsesWith(softmax->getResult(0));
    div->erase();
  }
  eraseDeadSteps(steps.takeVector());
}

/// The steps between each linalg.softmax of `root` and its scores' product
/// written as named elementwise ops, as the linalg.generic each is (what
/// the matchers read): `softmax(linalg.mul(Q K^T, splat c)) V`, which
/// several frontends write, is a scale like the generic form. Only ops on
/// that path change (to an equivalent generic); the walk follows the
/// operand read through the identity map that a linalg op computes.
void attn::raising::generalizeSoftmaxSteps(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::SoftmaxOp> softmaxes;
  root->walk([&](linalg::SoftmaxOp op) { softmaxes.push_back(op); });
  for (linalg::SoftmaxOp softmax : softmaxes) {
    Value scores = softmax.getInput();
    while (auto op = scores.getDefiningOp<linalg::LinalgOp>()) {
      if (linalg::isaContractionOpInterface(op))
        break;
      if (isNamedElementwiseStep(op)) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generic))
          break;
        op = *generic;
      }
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic || !isElementwise(generic))
        break;
      // The scores: computed by an op (a mask is most often an argument).
      Value next;
      for (OpOperand *input : generic.getDpsInputOperands())
        if (generic.getMatchingIndexingMap(input).isIdentity() &&
            input->get().getDefiningOp<linalg::LinalgOp>()) {
          next = input->get();
          break;
        }
      if (!next)
        break;
      scores = next;
    }
  }
}
