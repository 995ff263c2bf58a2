//===- RaiseAttention.cpp - attention written in linalg into attn.sdpa ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Frontends (ONNX and torch importers, StableHLO and TOSA to linalg) write
// attention as two contractions around a softmax. None of attn-mlir's
// tiling, sparsity or GPU work applies to that form, and it materialises
// the whole score matrix. This pass recognises it, from each linalg.softmax
// outwards, and rewrites it into attn.sdpa. A rewrite that changed the
// numbers would be worse than none, so every property the rewrite relies
// on is checked, and the first one that does not hold is what `explain`
// reports.
//
//===----------------------------------------------------------------------===//

#include "RaiseAttention.h"

#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRAISEATTENTION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raising;

namespace {

/// `A[b.., i, r] * B[b.., r, j] -> C[b.., i, j]`, or with `B[b.., j, r]`
/// (`rhsTransposed`): the only contraction form the pass raises. `lhs`,
/// `rhs` and `result` are at the attention's rank: where the product runs
/// on [B*H, ..] (a frontend's linalg.batch_matmul between reshapes), the
/// sources of the operands' collapse_shapes and the expand_shape of the
/// result.
struct Product {
  linalg::LinalgOp op;
  Value lhs, rhs, result;
  bool rhsTransposed;
};

/// The attention a linalg.softmax is the middle of.
struct Attention {
  Value query, key, value;
  // The key as [b.., Skv, D] needs a transpose of `key` ([b.., D, Skv]).
  bool transposeKey;
  double scale;
  Product scores, output;
  // The elementwise scale and mask steps and the transpose K^T was read
  // from, if there are.
  linalg::GenericOp scaleOp, maskOp;
  linalg::TransposeOp keyTranspose;
  // The mask: additive (float), or boolean, `true` keeping a key unless
  // `invertMask`; or `causal` (top-left) in its place.
  Value mask;
  bool invertMask = false;
  bool causal = false;
};

} // namespace

/// Whether `init` starts a sum at zero: a linalg.fill of a zero, or a zero
/// constant. A product accumulated onto anything else is not attention.
bool attn::raising::isZeroInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(init, m_AnyZeroFloat());
}

/// The reassociation between rank `rank` and rank 4 with the leading
/// dimensions grouped: the first dimension with the unit (or merged batch)
/// ones, then one each.
static SmallVector<ReassociationIndices>
getLeadingUnitReassociation(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  groups.push_back(llvm::to_vector(llvm::seq<int64_t>(5 - rank)));
  for (int64_t dim = 5 - rank; dim < 4; ++dim)
    groups.push_back({dim});
  return groups;
}

/// Whether `generic` is elementwise: parallel loops only, one result
/// written through the identity map.
bool attn::raising::isElementwise(linalg::GenericOp generic) {
  return generic.getNumDpsInits() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops() &&
         generic.getIndexingMapsArray().back().isIdentity();
}

/// The input of `generic` whose block argument is `value`, or null.
OpOperand *attn::raising::getInputOf(linalg::GenericOp generic, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != generic.getBody() ||
      arg.getArgNumber() >= generic.getNumDpsInputs())
    return nullptr;
  return generic.getDpsInputOperand(arg.getArgNumber());
}

/// What `value`, used in the body of `generic`, reads: the operand whose
/// block argument it is, or `value` itself (a constant, a capture).
Value attn::raising::getValueRead(linalg::GenericOp generic, Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && arg.getOwner() == generic.getBody())
    return generic->getOperand(arg.getArgNumber());
  return value;
}

/// The permutation that swaps the last two of `rank` dimensions (K and
/// K^T).
static SmallVector<int64_t> getLastTwoSwapped(int64_t rank) {
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return permutation;
}

/// Prints the results of `map` as `(d0, d2, d1)`.
static std::string formatMap(AffineMap map) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleaveComma(map.getResults(), os);
  os << ")";
  return text;
}

/// `result` as a Product of rank `rank`: a mul-add contraction (any
/// linalg op the contraction interface recognises) with one reduction
/// loop, into a zero-initialised tensor, whose maps put the same batch
/// loops first everywhere, then (i, r) for the left operand and (r, j) or
/// (j, r) for the right one.
static FailureOr<Product> matchProduct(Value result, int64_t rank,
                                       StringRef what, Rejection &why) {
  auto fail = [&](const Twine &reason) {
    why = (what + " " + reason).str();
    return failure();
  };
  // [B, H, ..] run as [B*H, ..]: the product's operands and result with
  // the batch and head dimensions merged, and nothing else reshaped.
  SmallVector<ReassociationIndices> merge = getLeadingUnitReassociation(3);
  Value top = result;
  bool merged = false;
  if (auto expand = result.getDefiningOp<tensor::ExpandShapeOp>()) {
    if (rank != 4 || expand.getReassociationIndices() != merge)
      return fail("is reshaped by an expand_shape that does not split "
                  "[B*H, ..] into [B, H, ..]");
    result = expand.getSrc();
    merged = true;
    --rank;
  }
  auto op = result.getDefiningOp<linalg::LinalgOp>();
  if (!op)
    return fail("is not computed by a linalg op");
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op->getNumResults() != 1)
    return fail("is not a multiply-add contraction of two operands (" +
                op->getName().getStringRef() + ")");
  if (!op.hasPureTensorSemantics())
    return fail("is not on tensors");
  if (op.getNumLoops() != static_cast<unsigned>(rank) + 1 ||
      op.getNumReductionLoops() != 1)
    return fail("does not reduce exactly one dimension");
  if (!isZeroInit(op.getDpsInitOperand(0)->get()))
    return fail("accumulates onto a tensor that is not zero");

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps[2];
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != static_cast<unsigned>(rank))
    return fail("writes its result through the map " + formatMap(outMap));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned reduction =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  MLIRContext *ctx = op->getContext();
  SmallVector<AffineExpr> batch(outMap.getResults().drop_back(2));
  AffineExpr i = outMap.getResult(rank - 2), j = outMap.getResult(rank - 1);
  AffineExpr r = getAffineDimExpr(reduction, ctx);
  auto expect = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> results(batch);
    results.append({a, b});
    return AffineMap::get(op.getNumLoops(), 0, results, ctx);
  };
  if (maps[0] != expect(i, r))
    return fail("reads its left operand through the map " + formatMap(maps[0]) +
                ", not " + formatMap(expect(i, r)));
  bool rhsTransposed = maps[1] == expect(j, r);
  if (!rhsTransposed && maps[1] != expect(r, j))
    return fail("reads its right operand through the map " +
                formatMap(maps[1]));
  Value lhs = op.getDpsInputOperand(0)->get();
  Value rhs = op.getDpsInputOperand(1)->get();
  if (merged) {
    auto unmerge = [&](Value operand) -> Value {
      auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
      if (!collapse || collapse.getReassociationIndices() != merge)
        return {};
      return collapse.getSrc();
    };
    lhs = unmerge(lhs);
    rhs = unmerge(rhs);
    if (!lhs || !rhs)
      return fail("runs on merged batch dimensions, and an operand is not "
                  "a collapse_shape that merges them");
  }
  return Product{op, lhs, rhs, top, rhsTransposed};
}

/// `x * c` or `x / c` with `c` a constant: the factor (1/c for a division)
/// when `value` is the scale block argument `x` of `generic` times or over
/// such a constant; nothing otherwise.
static std::optional<double> matchScaleBody(linalg::GenericOp generic,
                                            BlockArgument x) {
  Operation *def = getYielded<arith::MulFOp, arith::DivFOp>(generic);
  if (!def)
    return std::nullopt;
  // A constant operand of the body: an arith.constant (inside or outside
  // the region), or the block argument of an operand that is a splat; or
  // such a constant rounded to the scores' type in the body (torch-mlir
  // writes a Python float as an f64 constant and an arith.truncf), with
  // the value the rounding gives.
  auto constantOf = [&](Value v) -> std::optional<double> {
    auto truncated = v.getDefiningOp<arith::TruncFOp>();
    APFloat c(0.0);
    if (!matchPattern(getValueRead(generic, truncated ? truncated.getIn() : v),
                      m_ConstantFloat(&c)))
      return std::nullopt;
    if (truncated) {
      bool lost;
      c.convert(cast<FloatType>(truncated.getType()).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
    }
    return c.convertToDouble();
  };
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  if (isa<arith::MulFOp>(def)) {
    if (lhs == x)
      return constantOf(rhs);
    if (rhs == x)
      return constantOf(lhs);
    return std::nullopt;
  }
  if (lhs != x)
    return std::nullopt;
  std::optional<double> divisor = constantOf(rhs);
  if (!divisor || *divisor == 0.0)
    return std::nullopt;
  return 1.0 / *divisor;
}

/// Whether `map` reads a tensor of type `type` broadcast NumPy-style
/// (aligned on the right) over all the loops: its results are the last
/// loops in order, or constant 0 where the dimension is 1.
static bool isRightAlignedBroadcast(AffineMap map, ShapedType type) {
  unsigned loops = map.getNumDims(), results = map.getNumResults();
  if (map.getNumSymbols() || results == 0 || results > loops ||
      type.getRank() != results)
    return false;
  for (unsigned r = 0; r < results; ++r) {
    AffineExpr expr = map.getResult(r);
    if (expr == getAffineDimExpr(loops - results + r, map.getContext()))
      continue;
    auto zero = dyn_cast<AffineConstantExpr>(expr);
    if (!zero || zero.getValue() != 0 || type.getDimSize(r) != 1)
      return false;
  }
  return true;
}

/// A loop index the body of `generic` computes: `linalg.index d`, maybe
/// through index_cast and plus a constant. (loop, offset) or nothing.
static std::optional<std::pair<int64_t, int64_t>> matchIndex(Value value) {
  int64_t offset = 0;
  if (auto add = value.getDefiningOp<arith::AddIOp>()) {
    APInt c;
    if (matchPattern(add.getRhs(), m_ConstantInt(&c)))
      value = add.getLhs();
    else if (matchPattern(add.getLhs(), m_ConstantInt(&c)))
      value = add.getRhs();
    else
      return std::nullopt;
    offset = c.getSExtValue();
  }
  if (auto cast = value.getDefiningOp<arith::IndexCastOp>())
    value = cast.getIn();
  auto index = value.getDefiningOp<linalg::IndexOp>();
  if (!index)
    return std::nullopt;
  return std::make_pair(static_cast<int64_t>(index.getDim()), offset);
}

/// `predicate` with its operands swapped (a < b is b > a).
static arith::CmpIPredicate swapOperands(arith::CmpIPredicate predicate) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ule:
    return P::uge;
  case P::ugt:
    return P::ult;
  case P::uge:
    return P::ule;
  default:
    return predicate;
  }
}

/// Whether `mask` is [Sq, Skv] with exactly the keys after each query row
/// set (j > i), as a frontend builds torch.triu(ones, 1) for a causal
/// mask: a linalg.generic whose body compares its two loop indices (and
/// selects or ands the result with an all-true input, if at all).
static bool isStrictUpperTriangle(Value mask) {
  auto generic = mask.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumLoops() != 2 || !isElementwise(generic))
    return false;
  Operation *yielded =
      getYielded<arith::CmpIOp, arith::SelectOp, arith::AndIOp>(generic);
  if (!yielded)
    return false;
  // select(c, all-true, false) and and(c, all-true) are c.
  auto isAllTrue = [&](Value v) {
    return matchPattern(getValueRead(generic, v), m_One());
  };
  Value condition = yielded->getResult(0);
  if (auto select = dyn_cast<arith::SelectOp>(yielded)) {
    if (!isAllTrue(select.getTrueValue()) ||
        !matchPattern(select.getFalseValue(), m_Zero()))
      return false;
    condition = select.getCondition();
  } else if (auto andOp = dyn_cast<arith::AndIOp>(yielded)) {
    if (isAllTrue(andOp.getLhs()))
      condition = andOp.getRhs();
    else if (isAllTrue(andOp.getRhs()))
      condition = andOp.getLhs();
    else
      return false;
  }
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  auto lhs = matchIndex(cmp.getLhs()), rhs = matchIndex(cmp.getRhs());
  if (!lhs || !rhs || lhs->first == rhs->first)
    return false;
  // As `j - i PRED k`, j the key loop (1), i the query row (0).
  arith::CmpIPredicate predicate = cmp.getPredicate();
  int64_t k;
  if (lhs->first == 1) {
    k = rhs->second - lhs->second;
  } else {
    predicate = swapOperands(predicate);
    k = lhs->second - rhs->second;
  }
  using P = arith::CmpIPredicate;
  return ((predicate == P::sge || predicate == P::uge) && k == 1) ||
         ((predicate == P::sgt || predicate == P::ugt) && k == 0);
}

/// The scores `generic` masks, recording the mask in `attention`, when its
/// body is `s + m` (an additive float mask) or `select(c, s, -inf)` /
/// `select(c, -inf, s)` (a boolean mask, keeping where the scores are
/// selected), the mask read broadcast as attn.sdpa broadcasts it; null
/// otherwise.
static Value matchMaskStep(linalg::GenericOp generic, Attention &attention) {
  Operation *def = getYielded<arith::AddFOp, arith::SelectOp>(generic);
  if (!def)
    return {};
  auto broadcastInput = [&](Value v) -> OpOperand * {
    OpOperand *input = getInputOf(generic, v);
    if (!input ||
        !isRightAlignedBroadcast(generic.getMatchingIndexingMap(input),
                                 cast<ShapedType>(input->get().getType())))
      return nullptr;
    return input;
  };
  auto scoresInput = [&](Value v) -> OpOperand * {
    OpOperand *input = getInputOf(generic, v);
    return input && generic.getMatchingIndexingMap(input).isIdentity()
               ? input
               : nullptr;
  };
  if (auto add = dyn_cast<arith::AddFOp>(def)) {
    // Either operand may be the scores; a computed one (Q K^T or its scale)
    // is taken before one that is not.
    auto computed = [&](Value v) {
      OpOperand *input = getInputOf(generic, v);
      return input && input->get().getDefiningOp<linalg::LinalgOp>();
    };
    std::pair order(add.getLhs(), add.getRhs());
    if (!computed(order.first) && computed(order.second))
      std::swap(order.first, order.second);
    for (auto [s, m] : {order, std::pair(order.second, order.first)}) {
      OpOperand *scores = scoresInput(s), *mask = broadcastInput(m);
      if (scores && mask && scores != mask) {
        attention.mask = mask->get();
        return scores->get();
      }
    }
    return {};
  }
  auto select = cast<arith::SelectOp>(def);
  OpOperand *condition = broadcastInput(select.getCondition());
  if (!condition)
    return {};
  auto isMinusInfinity = [&](Value v) {
    APFloat c(0.0);
    return matchPattern(getValueRead(generic, v), m_ConstantFloat(&c)) &&
           c.isInfinity() && c.isNegative();
  };
  OpOperand *scores;
  if ((scores = scoresInput(select.getTrueValue())) &&
      isMinusInfinity(select.getFalseValue())) {
    attention.mask = condition->get();
  } else if ((scores = scoresInput(select.getFalseValue())) &&
             isMinusInfinity(select.getTrueValue())) {
    // Masked where the condition holds: a triangle above the diagonal
    // read as [Sq, Skv] is causal attention; anything else is inverted.
    AffineMap map = generic.getMatchingIndexingMap(condition);
    if (map.getNumResults() == 2 &&
        !isa<AffineConstantExpr>(map.getResult(0)) &&
        !isa<AffineConstantExpr>(map.getResult(1)) &&
        isStrictUpperTriangle(condition->get()))
      attention.causal = true;
    else {
      attention.mask = condition->get();
      attention.invertMask = true;
    }
  } else {
    return {};
  }
  return scores->get();
}

/// The attention around `softmax`, or why there is none this pass raises.
static FailureOr<Attention> matchAttention(linalg::SoftmaxOp softmax,
                                           Rejection &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  auto type = cast<ShapedType>(softmax.getInput().getType());
  int64_t rank = type.getRank();
  if (rank < 2 || rank > 4)
    return fail("the softmax is over a rank-" + Twine(rank) +
                " tensor: attention is rank 2 to 4 ([B, H,] S, Skv)");
  if (softmax.getDimension() != static_cast<uint64_t>(rank - 1))
    return fail("the softmax normalises dimension " +
                Twine(softmax.getDimension()) +
                ", not the last (the keys) of " + Twine(rank));

  // P V: the first reader of the probabilities that multiplies them, as
  // its left operand, with the values.
  Attention attention;
  Value probabilities = softmax->getResult(0);
  Rejection productWhy = "nothing multiplies the probabilities";
  bool found = false;
  // The readers of P, and of P with its batch dimensions merged; a
  // product's result split back by an expand_shape is the product at the
  // attention's rank.
  SmallVector<Operation *> readers;
  for (Operation *user : probabilities.getUsers()) {
    if (isa<tensor::CollapseShapeOp>(user))
      llvm::append_range(readers, user->getUsers());
    else
      readers.push_back(user);
  }
  for (Operation *reader : readers) {
    if (reader->getNumResults() != 1)
      continue;
    Value top = reader->getResult(0);
    if (top.hasOneUse() && isa<tensor::ExpandShapeOp>(*top.user_begin()))
      top = top.user_begin()->getResult(0);
    FailureOr<Product> output =
        matchProduct(top, rank, "the product of the probabilities", productWhy);
    if (failed(output) || output->lhs != probabilities)
      continue;
    if (output->rhsTransposed) {
      productWhy = "the product of the probabilities reads the values "
                   "transposed ([.., Dv, Skv])";
      continue;
    }
    attention.output = *output;
    found = true;
    break;
  }
  if (!found)
    return fail(productWhy);
  attention.value = attention.output.rhs;

  // The steps between Q K^T and the softmax, the softmax's side first: a
  // mask, then a scale (the order attn.sdpa applies them in reverse).
  Value scores = softmax.getInput();
  attention.scale = 1.0;
  while (auto generic = scores.getDefiningOp<linalg::GenericOp>()) {
    if (linalg::isaContractionOpInterface(generic))
      break;
    if (!isElementwise(generic))
      return fail("the scores come from a linalg.generic that is not "
                  "elementwise");
    if (!attention.maskOp && !attention.scaleOp) {
      if (Value source = matchMaskStep(generic, attention)) {
        attention.maskOp = generic;
        scores = source;
        continue;
      }
    }
    // The operand read through the identity map is the scores; the body
    // must multiply or divide it by a constant.
    std::optional<double> scale;
    Value source;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      if (!generic.getMatchingIndexingMap(input).isIdentity())
        continue;
      scale = matchScaleBody(generic, generic.getMatchingBlockArgument(input));
      source = input->get();
      if (scale)
        break;
    }
    if (!scale || attention.scaleOp)
      return fail("the scores come from a linalg.generic that is neither a "
                  "scale by a constant nor, nearest the softmax, a mask "
                  "(an added tensor, or a select against -inf)");
    attention.scale = *scale;
    attention.scaleOp = generic;
    scores = source;
  }
  FailureOr<Product> product =
      matchProduct(scores, rank, "the product of the scores", why);
  if (failed(product))
    return failure();
  attention.scores = *product;
  attention.query = product->lhs;
  attention.key = product->rhs;
  attention.transposeKey = !product->rhsTransposed;
  // K^T written by a transpose of K's last two dimensions: read K.
  if (attention.transposeKey) {
    if (auto transpose = attention.key.getDefiningOp<linalg::TransposeOp>()) {
      if (transpose.getPermutation() == ArrayRef(getLastTwoSwapped(rank))) {
        attention.key = transpose.getInput();
        attention.transposeKey = false;
        attention.keyTranspose = transpose;
      }
    }
  }

  Type element = type.getElementType();
  for (Value v :
       SmallVector<Value>{attention.query, attention.key, attention.value,
                          scores, attention.output.result}) {
    Type other = getElementTypeOrSelf(v.getType());
    if (other != element) {
      std::string types;
      llvm::raw_string_ostream(types) << element << " and " << other;
      return fail("the steps do not share one element type (" + types + ")");
    }
  }
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(element))
    return fail("the element type is not f16, bf16, f32 or f64");
  return attention;
}

/// `value` of rank < 4 as [1.., dims]: unit batch and head dimensions
/// added in front.
static Value expandTo4D(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (rank == 4)
    return value;
  SmallVector<int64_t> shape(4 - rank, 1);
  llvm::append_range(shape, type.getShape());
  return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), value,
                                       getLeadingUnitReassociation(rank));
}

/// Builds attn.sdpa for `attention` in place of its output product.
static void raise(const Attention &attention) {
  Value output = attention.output.result;
  OpBuilder b = OpBuilder::atBlockEnd(output.getParentBlock());
  b.setInsertionPointAfterValue(output);
  Location loc = attention.output.op->getLoc();
  Value key = attention.key;
  if (attention.transposeKey)
    key = createTranspose(
        b, loc, key,
        getLastTwoSwapped(cast<ShapedType>(key.getType()).getRank()));
  Value q = expandTo4D(b, loc, attention.query);
  Value k = expandTo4D(b, loc, key);
  Value v = expandTo4D(b, loc, attention.value);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, q);
  sizes[3] = tensor::getMixedSizes(b, loc, v)[3];
  Value init =
      tensor::EmptyOp::create(b, loc, sizes, getElementTypeOrSelf(q.getType()));
  // attn.sdpa keeps a key where a boolean mask is true: a mask that says
  // where keys are dropped is inverted.
  Value mask = attention.mask;
  if (mask && attention.invertMask) {
    auto type = cast<RankedTensorType>(mask.getType());
    Value inverted = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, mask), type.getElementType());
    AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
    mask = linalg::GenericOp::create(
               b, loc, type, mask, inverted,
               ArrayRef<AffineMap>{identity, identity},
               SmallVector<utils::IteratorType>(type.getRank(),
                                                utils::IteratorType::parallel),
               [](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value one = arith::ConstantOp::create(
                     nb, nloc, nb.getIntegerAttr(nb.getI1Type(), 1));
                 linalg::YieldOp::create(
                     nb, nloc,
                     arith::XOrIOp::create(nb, nloc, args[0], one).getResult());
               })
               ->getResult(0);
  }
  Value result =
      SdpaOp::create(b, loc, init.getType(), /*lse=*/Type(), q, k, v, mask,
                     /*kv_lens=*/Value(), /*block_offsets=*/Value(),
                     /*block_indices=*/Value(), /*block_classes=*/Value(),
                     /*dropout_seed=*/Value(), /*scale_value=*/Value(), init,
                     /*lse_init=*/Value(), b.getF32FloatAttr(attention.scale),
                     attention.causal ? b.getUnitAttr() : UnitAttr(),
                     /*window=*/DenseI64ArrayAttr(),
                     AlignmentAttr::get(b.getContext(), Alignment::top_left),
                     b.getF64FloatAttr(0.0), b.getI64IntegerAttr(0),
                     /*block_size=*/DenseI64ArrayAttr())
          .getResult();
  auto resultType = cast<RankedTensorType>(output.getType());
  if (resultType.getRank() < 4)
    result = tensor::CollapseShapeOp::create(
        b, loc, resultType, result,
        getLeadingUnitReassociation(resultType.getRank()));
  output.replaceAllUsesWith(result);
}

/// Erases the ops of `steps` (pure ops the pass matched: products,
/// softmax steps, reshapes) that nothing reads any more, until none is
/// left to erase; the others stay for their other readers.
void attn::raising::eraseDeadSteps(SmallVector<Operation *> steps) {
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&op : steps)
      if (op && isOpTriviallyDead(op)) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
}

namespace {

struct RaiseAttentionPass
    : attn::impl::AttnRaiseAttentionBase<RaiseAttentionPass> {
  using AttnRaiseAttentionBase::AttnRaiseAttentionBase;

  void runOnOperation() override {
    generalizeNamedSoftmaxes(getOperation());
    recomposeSoftmaxes(getOperation(), explain);
    generalizeSoftmaxSteps(getOperation());
    SmallVector<linalg::SoftmaxOp> candidates;
    getOperation()->walk(
        [&](linalg::SoftmaxOp op) { candidates.push_back(op); });
    for (linalg::SoftmaxOp softmax : candidates) {
      Rejection why;
      FailureOr<Attention> attention = matchAttention(softmax, why);
      if (failed(attention)) {
        if (explain)
          softmax.emitRemark("attn-raise-attention: not raised: ") << why;
        continue;
      }
      if (explain)
        softmax.emitRemark("attn-raise-attention: raised into attn.sdpa "
                           "(scale ")
            << attention->scale << (attention->causal ? ", causal" : "")
            << (attention->mask
                    ? (isa<FloatType>(
                           getElementTypeOrSelf(attention->mask.getType()))
                           ? ", additive mask"
                           : (attention->invertMask ? ", boolean mask inverted"
                                                    : ", boolean mask"))
                    : "")
            << (attention->transposeKey ? ", keys transposed" : "") << ")";
      // The steps and the reshapes around them, erased where nothing else
      // reads them once the attention is raised.
      llvm::SetVector<Operation *> steps;
      for (const Product &product : {attention->output, attention->scores}) {
        steps.insert(product.result.getDefiningOp());
        steps.insert(product.op);
        for (Value operand : product.op->getOperands())
          if (auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>())
            steps.insert(collapse);
      }
      steps.insert(softmax);
      if (attention->scaleOp)
        steps.insert(attention->scaleOp);
      if (attention->maskOp)
        steps.insert(attention->maskOp);
      if (attention->keyTranspose)
        steps.insert(attention->keyTranspose);
      raise(*attention);
      eraseDeadSteps(steps.takeVector());
    }
  }
};

} // namespace
