//===- ScoreBuilders.cpp - the score semantics every lowering shares ------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"

#include "attn/Dialect/Attn/IR/RegionDerivative.h"
#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Semantics
//===----------------------------------------------------------------------===//

/// The parts attn.sdpa, attn.weights and attn.sdpa_grad share (they have
/// the same ODS fragments, so the same accessors).
template <typename OpTy> static ScoreSemantics getSemantics(OpTy op) {
  ScoreSemantics sem;
  if (!op.getScoreMod().empty())
    sem.scoreMod = &op.getScoreMod();
  if (!op.getMaskMod().empty())
    sem.maskMod = &op.getMaskMod();
  if (Value mask = op.getMask()) {
    sem.hasMask = true;
    sem.boolMask =
        cast<ShapedType>(mask.getType()).getElementType().isInteger(1);
  }
  sem.hasKvLens = static_cast<bool>(op.getKvLens());
  sem.causal = op.getCausal();
  sem.bottomRight = op.getAlignment() == Alignment::bottom_right;
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow())
    sem.window = std::make_pair((*window)[0], (*window)[1]);
  if (op.getScale())
    sem.scale = op.getScale()->convertToDouble();
  sem.dropout = op.getDropoutP().convertToDouble();
  sem.seed = op.getSeed();
  sem.seedTensor = op.getDropoutSeed();
  sem.scaleTensor = op.getScaleValue();
  return sem;
}

ScoreSemantics attn::getScoreSemantics(SdpaOp op) { return getSemantics(op); }
ScoreSemantics attn::getScoreSemantics(WeightsOp op) {
  return getSemantics(op);
}
ScoreSemantics attn::getScoreSemantics(SdpaGradOp op) {
  return getSemantics(op);
}

Value attn::buildScale(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                       Value query, Type acc) {
  if (sem.scaleValue || sem.scaleTensor) {
    Value scale = sem.scaleValue ? sem.scaleValue
                                 : Value(tensor::ExtractOp::create(
                                       b, loc, sem.scaleTensor, ValueRange{}));
    return castFloat(b, loc, scale, acc);
  }
  int64_t headDim = cast<ShapedType>(query.getType()).getShape().back();
  if (sem.scale || !ShapedType::isDynamic(headDim)) {
    double value =
        sem.scale ? *sem.scale : 1.0 / std::sqrt(static_cast<double>(headDim));
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(acc, value));
  }
  // 1/sqrt(D) for a dynamic head dimension is computed at run time.
  int64_t rank = cast<ShapedType>(query.getType()).getRank();
  Value dim = tensor::DimOp::create(b, loc, query, rank - 1);
  Value dimI64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), dim);
  Value dimF = arith::UIToFPOp::create(b, loc, acc, dimI64);
  return math::RsqrtOp::create(b, loc, dimF);
}

Log2ScoreScale attn::buildLog2ScoreScale(OpBuilder &b, Location loc,
                                         const ScoreSemantics &sem, Value query,
                                         Type acc) {
  Value scale = buildScale(b, loc, sem, query, acc);
  Value log2e = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(acc, llvm::numbers::log2e));
  if (!sem.scoreMod && !(sem.hasMask && !sem.boolMask))
    return {arith::MulFOp::create(b, loc, scale, log2e), Value()};
  return {scale, log2e};
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

/// Clones the single block of a modifier region at the builder's insertion
/// point with its arguments bound to `args`, and returns the yielded value.
static Value inlineModifier(OpBuilder &b, Region &region, ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  // The region is not isolated from above: the yielded value may be defined
  // outside it (the greedy driver hoists constants out of it, for example).
  return mapping.lookupOrDefault(
      cast<YieldOp>(block.getTerminator()).getValue());
}

Value attn::buildLog2ModifiedScore(OpBuilder &b, Location loc,
                                   const ScoreSemantics &sem, Value s,
                                   const Log2ScoreScale &scale,
                                   ArrayRef<Value> idx, Value maskValue,
                                   Value kvLength, Value queryLength,
                                   Value blockKeep) {
  Value score = buildModifiedScore(b, loc, sem, s, scale.scale, idx, maskValue,
                                   kvLength, queryLength, blockKeep);
  return scale.log2e ? Value(arith::MulFOp::create(b, loc, score, scale.log2e))
                     : score;
}

Value attn::buildScoreGradient(OpBuilder &b, Location loc, Value p,
                               Value probGrad, Value rowTerm,
                               Value derivative) {
  Value diff = arith::SubFOp::create(b, loc, probGrad, rowTerm);
  Value grad = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, p, diff), derivative);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(p.getType(), 0));
  Value none =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, p, zero);
  return arith::SelectOp::create(b, loc, none, zero, grad);
}

Value attn::buildKeep(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                      ArrayRef<Value> idx, Value maskValue, Value kvLength,
                      Value queryLength, Value blockKeep) {
  Value keep = blockKeep;
  auto andKeep = [&](Value cond) {
    keep = keep ? arith::AndIOp::create(b, loc, keep, cond).getResult() : cond;
  };
  if (maskValue && sem.boolMask)
    andKeep(maskValue);
  if (sem.hasKvLens)
    andKeep(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx[3],
                                  kvLength));
  if (sem.maskMod)
    andKeep(inlineModifier(b, *sem.maskMod, idx));
  if (sem.causal || sem.window) {
    // Diagonal of row i: i + (L - Sq) bottom-right, i top-left.
    Value diag = idx[2];
    if (sem.bottomRight) {
      Value offset = arith::SubIOp::create(b, loc, kvLength, queryLength);
      diag = arith::AddIOp::create(b, loc, diag, offset);
    }
    auto shifted = [&](int64_t by) -> Value {
      Value c = arith::ConstantIndexOp::create(b, loc, by);
      return arith::AddIOp::create(b, loc, diag, c);
    };
    if (sem.causal)
      andKeep(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, idx[3],
                                    diag));
    if (sem.window) {
      andKeep(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx[3],
                                    shifted(-sem.window->first)));
      andKeep(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, idx[3],
                                    shifted(sem.window->second)));
    }
  }
  return keep;
}

/// The score before score_mod: scale * s plus an additive mask.
static Value buildScaledScore(OpBuilder &b, Location loc,
                              const ScoreSemantics &sem, Value s, Value scale,
                              Value maskValue) {
  if (scale)
    s = arith::MulFOp::create(b, loc, s, scale);
  if (maskValue && !sem.boolMask)
    s = arith::AddFOp::create(b, loc, s,
                              castFloat(b, loc, maskValue, s.getType()));
  return s;
}

Value attn::buildScoreDerivative(OpBuilder &b, Location loc,
                                 const ScoreSemantics &sem, Value s,
                                 Value scale, ArrayRef<Value> idx,
                                 Value maskValue) {
  if (!sem.scoreMod)
    return scale;
  Type acc = s.getType();
  SmallVector<Value> args = {
      castFloat(b, loc, buildScaledScore(b, loc, sem, s, scale, maskValue),
                b.getF32Type())};
  args.append(idx.begin(), idx.end());
  Value derivative =
      buildValueAndDerivative(b, loc, *sem.scoreMod, args, /*wrt=*/0).second;
  return arith::MulFOp::create(b, loc, castFloat(b, loc, derivative, acc),
                               scale);
}

Value attn::buildModifiedScore(OpBuilder &b, Location loc,
                               const ScoreSemantics &sem, Value s, Value scale,
                               ArrayRef<Value> idx, Value maskValue,
                               Value kvLength, Value queryLength,
                               Value blockKeep) {
  Type acc = s.getType();
  s = buildScaledScore(b, loc, sem, s, scale, maskValue);
  if (sem.scoreMod) {
    // The region is defined on f32 scores whatever `acc` is.
    SmallVector<Value> args = {castFloat(b, loc, s, b.getF32Type())};
    args.append(idx.begin(), idx.end());
    s = castFloat(b, loc, inlineModifier(b, *sem.scoreMod, args), acc);
  }
  Value keep =
      buildKeep(b, loc, sem, idx, maskValue, kvLength, queryLength, blockKeep);
  if (!keep)
    return s;
  Value ninf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(acc, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, keep, s, ninf);
}

ScoreSemantics ScoreSemantics::withoutKeepConditions() const {
  ScoreSemantics sem = *this;
  if (sem.boolMask)
    sem.hasMask = sem.boolMask = false;
  sem.hasKvLens = sem.causal = false;
  sem.maskMod = nullptr;
  sem.window.reset();
  return sem;
}

Value attn::buildMaskElement(OpBuilder &b, Location loc, Value mask,
                             ArrayRef<Value> idx) {
  auto type = cast<ShapedType>(mask.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> indices;
  for (int64_t k = 0; k < rank; ++k)
    indices.push_back(type.getDimSize(k) == 1
                          ? arith::ConstantIndexOp::create(b, loc, 0)
                          : idx[4 - rank + k]);
  if (isa<MemRefType>(type))
    return memref::LoadOp::create(b, loc, mask, indices);
  return tensor::ExtractOp::create(b, loc, mask, indices);
}

Value attn::buildListedBlocks(OpBuilder &b, Location loc, Value offsets,
                              Value indices, Value queryBlocks,
                              Value keyBlocks) {
  Value none = createFilledTensor(
      b, loc, {b.getIndexAttr(1), b.getIndexAttr(1), queryBlocks, keyBlocks},
      b.getBoolAttr(false));
  Value yes = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto entry = [&](OpBuilder &nb, Location nl, Value list, Value at) -> Value {
    Value v = tensor::ExtractOp::create(nb, nl, list, at);
    return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
  };
  auto rowsLoop = scf::ForOp::create(
      b, loc, zero, queryBlocks, one, ValueRange{none},
      [&](OpBuilder &nb, Location nl, Value r, ValueRange table) {
        Value begin = entry(nb, nl, offsets, r);
        Value end =
            entry(nb, nl, offsets, arith::AddIOp::create(nb, nl, r, one));
        auto listLoop = scf::ForOp::create(
            nb, nl, begin, end, one, table,
            [&](OpBuilder &lb, Location ll, Value n, ValueRange inner) {
              Value k = entry(lb, ll, indices, n);
              Value marked = tensor::InsertOp::create(
                  lb, ll, yes, inner[0], ValueRange{zero, zero, r, k});
              scf::YieldOp::create(lb, ll, marked);
            });
        scf::YieldOp::create(nb, nl, listLoop.getResults());
      });
  return rowsLoop.getResult(0);
}

Value attn::buildSafeRowMax(OpBuilder &b, Location loc, Value max) {
  Type type = max.getType();
  Value ninf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, ninf);
  return arith::SelectOp::create(b, loc, empty, zero, max);
}

Value attn::buildNormalize(OpBuilder &b, Location loc, Value x, Value sum) {
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(sum.getType(), 0));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  return arith::SelectOp::create(b, loc, empty, zero,
                                 arith::DivFOp::create(b, loc, x, sum));
}

Value attn::buildRowReciprocals(OpBuilder &b, Location loc, Value rowSums) {
  auto type = cast<RankedTensorType>(rowSums.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  Value init = tensor::EmptyOp::create(b, loc, getSizes(b, loc, rowSums),
                                       type.getElementType());
  return linalg::GenericOp::create(
             b, loc, init.getType(), rowSums, init, {id, id},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value one = arith::ConstantOp::create(
                   nb, nl, nb.getFloatAttr(args[0].getType(), 1));
               linalg::YieldOp::create(nb, nl,
                                       buildNormalize(nb, nl, one, args[0]));
             })
      .getResult(0);
}

void attn::buildExpMinusMaxBody(OpBuilder &b, Location loc, ValueRange args) {
  Value diff =
      arith::SubFOp::create(b, loc, args[0], buildSafeRowMax(b, loc, args[1]));
  // exp(d) as exp2(d * log2(e)): the CPU's f32 exp2 is the cheaper
  // polynomial (attn-polynomial-math; on AVX-512 one vscalefps per 16
  // lanes). The product's rounding is relative to d <= 0 and so grows with
  // |d|, where the term is negligible in its row's sum (docs/Numerics.md).
  Value log2e = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(diff.getType(), llvm::numbers::log2e));
  Value scaled = arith::MulFOp::create(b, loc, diff, log2e);
  linalg::YieldOp::create(b, loc,
                          math::Exp2Op::create(b, loc, scaled).getResult());
}

void attn::buildExp2MinusMaxBody(OpBuilder &b, Location loc, ValueRange args) {
  Value diff =
      arith::SubFOp::create(b, loc, args[0], buildSafeRowMax(b, loc, args[1]));
  linalg::YieldOp::create(b, loc,
                          math::Exp2Op::create(b, loc, diff).getResult());
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// One round of the splitmix64 finaliser: a bijective mix of 64 bits.
static Value mix64(OpBuilder &b, Location loc, Value z) {
  auto c = [&](uint64_t v) {
    return arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(static_cast<int64_t>(v)));
  };
  auto xorShift = [&](Value x, uint64_t s) {
    return arith::XOrIOp::create(b, loc, x,
                                 arith::ShRUIOp::create(b, loc, x, c(s)));
  };
  z = arith::AddIOp::create(b, loc, z, c(0x9E3779B97F4A7C15ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30), c(0xBF58476D1CE4E5B9ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27), c(0x94D049BB133111EBull));
  return xorShift(z, 31);
}

/// The uniform number in [0, 1) that decides whether element (b, h, i, j) is
/// dropped: the seed and each index are folded in by one mix each, and the
/// top 24 bits of the result become the float. docs/Numerics.md gives the
/// same definition for other backends to reproduce.
static Value dropoutUniform(OpBuilder &b, Location loc,
                            const ScoreSemantics &sem,
                            ArrayRef<Value> indices) {
  Value h = sem.seedValue    ? sem.seedValue
            : sem.seedTensor ? Value(tensor::ExtractOp::create(
                                   b, loc, sem.seedTensor, ValueRange{}))
                             : Value(arith::ConstantOp::create(
                                   b, loc, b.getI64IntegerAttr(sem.seed)));
  for (Value index : indices) {
    Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
    h = mix64(b, loc, arith::XOrIOp::create(b, loc, h, i64));
  }
  Value top = arith::ShRUIOp::create(
      b, loc, h, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(40)));
  Value f = arith::UIToFPOp::create(b, loc, b.getF32Type(), top);
  return arith::MulFOp::create(
      b, loc, f,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / (1 << 24))));
}

Value attn::buildDropout(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                         Value p, ArrayRef<Value> idx) {
  if (sem.dropout <= 0.0)
    return p;
  Type acc = p.getType();
  Value u = dropoutUniform(b, loc, sem, idx);
  Value threshold =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(sem.dropout));
  Value kept =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, u, threshold);
  Value rescale = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(acc, 1.0 / (1.0 - sem.dropout)));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(acc, 0));
  return arith::SelectOp::create(
      b, loc, kept, arith::MulFOp::create(b, loc, p, rescale), zero);
}
