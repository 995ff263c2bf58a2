//===- KeyBand.cpp - which keys a query row can see, from the masks ------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Analysis/KeyBand.h"

#include "attn/Dialect/Attn/Utils/ScoreBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Bounds
//===----------------------------------------------------------------------===//

BandAffine &BandAffine::add(const BandAffine &other, int64_t times) {
  rowCoeff += times * other.rowCoeff;
  constant += times * other.constant;
  for (const BandTerm &term : other.terms) {
    auto *same = llvm::find_if(terms, [&](const BandTerm &t) {
      return t.symbol == term.symbol && t.external == term.external;
    });
    if (same != terms.end())
      same->coeff += times * term.coeff;
    else
      terms.push_back({term.symbol, term.external, times * term.coeff});
  }
  llvm::erase_if(terms, [](const BandTerm &t) { return t.coeff == 0; });
  return *this;
}

BandAffine &BandAffine::scale(int64_t factor) {
  rowCoeff *= factor;
  constant *= factor;
  for (BandTerm &term : terms)
    term.coeff *= factor;
  llvm::erase_if(terms, [](const BandTerm &t) { return t.coeff == 0; });
  return *this;
}

bool BandAffine::operator==(const BandAffine &other) const {
  return rowCoeff == other.rowCoeff && constant == other.constant &&
         terms.size() == other.terms.size() &&
         llvm::all_of(terms, [&](const BandTerm &t) {
           return llvm::is_contained(other.terms, t);
         });
}

BandBound BandBound::affine(BandAffine leaf) {
  BandBound bound;
  bound.leaf = std::move(leaf);
  return bound;
}

BandBound BandBound::combine(Kind kind, BandBound lhs, BandBound rhs) {
  if (lhs == rhs)
    return lhs;
  BandBound bound;
  bound.kind = kind;
  bound.operands = {std::move(lhs), std::move(rhs)};
  return bound;
}

bool BandBound::operator==(const BandBound &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::Leaf)
    return leaf == other.leaf;
  return operands == other.operands;
}

static void printAffine(llvm::raw_ostream &os, const BandAffine &leaf) {
  bool first = true;
  auto emit = [&](int64_t coeff, StringRef name) {
    if (coeff == 0)
      return;
    if (!first)
      os << (coeff < 0 ? " - " : " + ");
    else if (coeff < 0)
      os << "-";
    int64_t magnitude = coeff < 0 ? -coeff : coeff;
    if (name.empty()) {
      os << magnitude;
    } else {
      if (magnitude != 1)
        os << magnitude << "*";
      os << name;
    }
    first = false;
  };
  emit(leaf.rowCoeff, "i");
  for (const BandTerm &term : leaf.terms) {
    switch (term.symbol) {
    case BandSymbol::Batch:
      emit(term.coeff, "b");
      break;
    case BandSymbol::Head:
      emit(term.coeff, "h");
      break;
    case BandSymbol::QueryLength:
      emit(term.coeff, "Sq");
      break;
    case BandSymbol::KvLength:
      emit(term.coeff, "L");
      break;
    case BandSymbol::External:
      emit(term.coeff, "ext");
      break;
    }
  }
  emit(leaf.constant, "");
  if (first)
    os << "0";
}

std::string BandBound::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (kind == Kind::Leaf) {
    printAffine(os, leaf);
  } else {
    os << (kind == Kind::Min ? "min(" : "max(") << operands[0].str() << ", "
       << operands[1].str() << ")";
  }
  return text;
}

/// Combines two optional ends; an absent end is the identity of `kind`
/// (no bound) when `absentIsIdentity`, and absorbs otherwise.
static std::optional<BandBound> combineEnds(BandBound::Kind kind,
                                            const std::optional<BandBound> &a,
                                            const std::optional<BandBound> &b,
                                            bool absentIsIdentity) {
  if (!a || !b) {
    if (!absentIsIdentity)
      return std::nullopt;
    return a ? a : b;
  }
  return BandBound::combine(kind, *a, *b);
}

KeyBand KeyBand::intersect(const KeyBand &a, const KeyBand &b) {
  KeyBand band;
  band.empty = a.empty || b.empty;
  band.lower = combineEnds(BandBound::Kind::Max, a.lower, b.lower, true);
  band.upper = combineEnds(BandBound::Kind::Min, a.upper, b.upper, true);
  return band;
}

std::optional<KeyBand> KeyBand::unite(const KeyBand &a, const KeyBand &b) {
  if (a.empty)
    return b;
  if (b.empty)
    return a;
  // [l, u1) u [l, u2) = [l, max(u1, u2)), and likewise for a shared upper
  // end; other unions may have a hole, which a band cannot express.
  KeyBand band;
  if (a.lower == b.lower) {
    band.lower = a.lower;
    band.upper = combineEnds(BandBound::Kind::Max, a.upper, b.upper, false);
    return band;
  }
  if (a.upper == b.upper) {
    band.upper = a.upper;
    band.lower = combineEnds(BandBound::Kind::Min, a.lower, b.lower, false);
    return band;
  }
  return std::nullopt;
}

std::string KeyBand::str() const {
  if (empty)
    return "empty";
  return "[" + (lower ? lower->str() : std::string("0")) + ", " +
         (upper ? upper->str() : std::string("Skv")) + ")";
}

//===----------------------------------------------------------------------===//
// mask_mod
//===----------------------------------------------------------------------===//

namespace {

/// `kv * kv_idx + rest`.
struct KeyLinear {
  int64_t kv = 0;
  BandAffine rest;
};

/// Reads a `mask_mod` region as a band. Integer arithmetic is taken to be
/// exact (index values and casts of them do not overflow in practice).
class MaskModAnalyzer {
public:
  explicit MaskModAnalyzer(Region &region) : region(region) {}

  std::optional<KeyBand> analyze() {
    auto yield = cast<YieldOp>(region.front().getTerminator());
    return keep(yield.getValue());
  }

  std::string failure;

private:
  bool inside(Value v) { return region.isAncestor(v.getParentRegion()); }

  template <typename T> std::optional<T> fail(Value v, StringRef why) {
    if (failure.empty()) {
      llvm::raw_string_ostream os(failure);
      os << "mask_mod: " << why;
      if (Operation *def = v.getDefiningOp())
        os << " ('" << def->getName() << "')";
    }
    return std::nullopt;
  }

  std::optional<KeyLinear> linear(Value v);
  std::optional<KeyBand> keep(Value v);
  bool nonNegative(Value v);
  std::optional<KeyBand> compare(arith::CmpIOp cmp);

  Region &region;
};

} // namespace

std::optional<KeyLinear> MaskModAnalyzer::linear(Value v) {
  KeyLinear result;
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    result.rest.constant = constant.getSExtValue();
    return result;
  }
  if (!inside(v)) {
    if (!v.getType().isIntOrIndex())
      return fail<KeyLinear>(v, "a captured value that is not an integer");
    result.rest.terms.push_back({BandSymbol::External, v, 1});
    return result;
  }
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    switch (arg.getArgNumber()) {
    case 0:
      result.rest.terms.push_back({BandSymbol::Batch, Value(), 1});
      break;
    case 1:
      result.rest.terms.push_back({BandSymbol::Head, Value(), 1});
      break;
    case 2:
      result.rest.rowCoeff = 1;
      break;
    default:
      result.kv = 1;
      break;
    }
    return result;
  }
  Operation *def = v.getDefiningOp();
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(def))
    return linear(def->getOperand(0));
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    std::optional<KeyLinear> lhs = linear(def->getOperand(0));
    std::optional<KeyLinear> rhs =
        lhs ? linear(def->getOperand(1)) : std::nullopt;
    if (!lhs || !rhs)
      return std::nullopt;
    if (isa<arith::MulIOp>(def)) {
      // Only a product with a constant stays affine.
      auto isConstant = [](const KeyLinear &l) {
        return l.kv == 0 && l.rest.rowCoeff == 0 && l.rest.terms.empty();
      };
      if (!isConstant(*lhs) && !isConstant(*rhs))
        return fail<KeyLinear>(v, "a product of two indices");
      if (isConstant(*lhs))
        std::swap(lhs, rhs);
      lhs->kv *= rhs->rest.constant;
      lhs->rest.scale(rhs->rest.constant);
      return lhs;
    }
    int64_t sign = isa<arith::SubIOp>(def) ? -1 : 1;
    lhs->kv += sign * rhs->kv;
    lhs->rest.add(rhs->rest, sign);
    return lhs;
  }
  return fail<KeyLinear>(v, "an index computation that is not affine");
}

bool MaskModAnalyzer::nonNegative(Value v) {
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return !constant.isNegative();
  if (!inside(v))
    return false;
  if (isa<BlockArgument>(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return nonNegative(def->getOperand(0));
  if (isa<arith::AddIOp, arith::MulIOp>(def))
    return nonNegative(def->getOperand(0)) && nonNegative(def->getOperand(1));
  return false;
}

std::optional<KeyBand> MaskModAnalyzer::compare(arith::CmpIOp cmp) {
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  // Unsigned comparisons of values that cannot be negative are signed ones.
  static const std::pair<P, P> unsignedToSigned[] = {
      {P::ult, P::slt}, {P::ule, P::sle}, {P::ugt, P::sgt}, {P::uge, P::sge}};
  for (auto [u, s] : unsignedToSigned) {
    if (pred != u)
      continue;
    if (!nonNegative(cmp.getLhs()) || !nonNegative(cmp.getRhs()))
      return fail<KeyBand>(cmp.getResult(),
                           "an unsigned comparison of a possibly negative "
                           "value");
    pred = s;
  }
  std::optional<KeyLinear> lhs = linear(cmp.getLhs());
  std::optional<KeyLinear> rhs = lhs ? linear(cmp.getRhs()) : std::nullopt;
  if (!lhs || !rhs)
    return std::nullopt;
  // lhs - rhs = kv * kv_idx + rest  (pred)  0.
  KeyLinear diff = *lhs;
  diff.kv -= rhs->kv;
  diff.rest.add(rhs->rest, -1);
  if (diff.kv != 1 && diff.kv != -1)
    return fail<KeyBand>(cmp.getResult(),
                         diff.kv == 0
                             ? "a condition that does not involve kv_idx"
                             : "a comparison of a multiple of kv_idx");
  if (diff.kv == -1) {
    diff.rest.scale(-1);
    // -x (pred) 0 <=> x (pred with its sides swapped) 0.
    switch (pred) {
    case P::slt:
      pred = P::sgt;
      break;
    case P::sle:
      pred = P::sge;
      break;
    case P::sgt:
      pred = P::slt;
      break;
    case P::sge:
      pred = P::sle;
      break;
    default:
      break;
    }
  }
  // kv_idx (pred) f with f = -rest.
  BandAffine f = diff.rest;
  f.scale(-1);
  if (f.rowCoeff < 0)
    return fail<KeyBand>(cmp.getResult(),
                         "a key bound that decreases as q_idx grows");
  BandAffine fPlusOne = f;
  fPlusOne.constant += 1;
  KeyBand band;
  switch (pred) {
  case P::slt:
    band.upper = BandBound::affine(f);
    break;
  case P::sle:
    band.upper = BandBound::affine(fPlusOne);
    break;
  case P::sgt:
    band.lower = BandBound::affine(fPlusOne);
    break;
  case P::sge:
    band.lower = BandBound::affine(f);
    break;
  case P::eq:
    band.lower = BandBound::affine(f);
    band.upper = BandBound::affine(fPlusOne);
    break;
  default:
    return fail<KeyBand>(cmp.getResult(),
                         "an inequality (ne) leaves two key ranges");
  }
  return band;
}

std::optional<KeyBand> MaskModAnalyzer::keep(Value v) {
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    KeyBand band;
    band.empty = constant.isZero();
    return band;
  }
  Operation *def = v.getDefiningOp();
  if (!def || !inside(v))
    return fail<KeyBand>(v, "a keep value that is not computed in the region");
  if (auto cmp = dyn_cast<arith::CmpIOp>(def))
    return compare(cmp);
  if (isa<arith::AndIOp, arith::OrIOp>(def)) {
    std::optional<KeyBand> lhs = keep(def->getOperand(0));
    std::optional<KeyBand> rhs = lhs ? keep(def->getOperand(1)) : std::nullopt;
    if (!lhs || !rhs)
      return std::nullopt;
    if (isa<arith::AndIOp>(def))
      return KeyBand::intersect(*lhs, *rhs);
    if (std::optional<KeyBand> united = KeyBand::unite(*lhs, *rhs))
      return united;
    return fail<KeyBand>(v, "a union of bands with no common end");
  }
  return fail<KeyBand>(v, "a keep condition other than comparisons, and, or");
}

//===----------------------------------------------------------------------===//
// The op
//===----------------------------------------------------------------------===//

/// The analysis of keep conditions `sem`, with or without a block layout.
static MaskAnalysis analyzeSemantics(const ScoreSemantics &sem,
                                     bool blockLayout) {
  MaskAnalysis result;
  auto restrict = [&](std::optional<BandAffine> lower,
                      std::optional<BandAffine> upper) {
    KeyBand band;
    if (lower)
      band.lower = BandBound::affine(*lower);
    if (upper)
      band.upper = BandBound::affine(*upper);
    result.band = KeyBand::intersect(result.band, band);
  };
  auto shifted = [](BandAffine a, int64_t by) {
    a.constant += by;
    return a;
  };

  BandAffine kvLength;
  kvLength.terms.push_back({BandSymbol::KvLength, Value(), 1});
  if (sem.hasKvLens)
    restrict(std::nullopt, kvLength);
  // Row i's diagonal: i, or i + L - Sq bottom-right.
  BandAffine diag;
  diag.rowCoeff = 1;
  if (sem.bottomRight) {
    diag.add(kvLength);
    diag.terms.push_back({BandSymbol::QueryLength, Value(), -1});
  }
  if (sem.causal)
    restrict(std::nullopt, shifted(diag, 1));
  if (sem.window)
    restrict(shifted(diag, -sem.window->first),
             shifted(diag, sem.window->second + 1));
  if (sem.maskMod) {
    MaskModAnalyzer analyzer(*sem.maskMod);
    if (std::optional<KeyBand> band = analyzer.analyze()) {
      result.band = KeyBand::intersect(result.band, *band);
    } else {
      result.exact = false;
      result.reasons.push_back(analyzer.failure);
    }
  }
  if (sem.hasMask && sem.boolMask) {
    result.exact = false;
    result.reasons.push_back("the boolean mask operand");
  }
  if (blockLayout) {
    result.exact = false;
    result.reasons.push_back("the block-sparse layout");
  }
  return result;
}

MaskAnalysis attn::analyzeMasks(SdpaOp op) {
  return analyzeSemantics(getScoreSemantics(op),
                          static_cast<bool>(op.getBlockOffsets()));
}

MaskAnalysis attn::analyzeMasks(SdpaGradOp op) {
  return analyzeSemantics(getScoreSemantics(op),
                          static_cast<bool>(op.getBlockOffsets()));
}

Value attn::buildBandBound(OpBuilder &b, Location loc, const BandBound &bound,
                           Value row, const BandValues &values) {
  if (bound.kind != BandBound::Kind::Leaf) {
    Value lhs = buildBandBound(b, loc, bound.operands[0], row, values);
    Value rhs = buildBandBound(b, loc, bound.operands[1], row, values);
    if (bound.kind == BandBound::Kind::Min)
      return arith::MinSIOp::create(b, loc, lhs, rhs);
    return arith::MaxSIOp::create(b, loc, lhs, rhs);
  }
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value sum = constant(bound.leaf.constant);
  auto addTimes = [&](Value v, int64_t coeff) {
    if (!v.getType().isIndex())
      v = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    if (coeff != 1)
      v = arith::MulIOp::create(b, loc, v, constant(coeff));
    sum = arith::AddIOp::create(b, loc, sum, v);
  };
  if (bound.leaf.rowCoeff != 0)
    addTimes(row, bound.leaf.rowCoeff);
  for (const BandTerm &term : bound.leaf.terms) {
    switch (term.symbol) {
    case BandSymbol::Batch:
      addTimes(values.batch, term.coeff);
      break;
    case BandSymbol::Head:
      addTimes(values.head, term.coeff);
      break;
    case BandSymbol::QueryLength:
      addTimes(values.queryLength, term.coeff);
      break;
    case BandSymbol::KvLength:
      addTimes(values.kvLength, term.coeff);
      break;
    case BandSymbol::External:
      addTimes(term.external, term.coeff);
      break;
    }
  }
  return sum;
}

std::pair<Value, Value> attn::buildRowsKeyRange(OpBuilder &b, Location loc,
                                                const KeyBand &band,
                                                Value firstRow, Value lastRow,
                                                const BandValues &values,
                                                Value keyCount, bool everyRow) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  if (band.empty)
    return {zero, zero};
  auto clamp = [&](Value v) -> Value {
    return arith::MaxSIOp::create(b, loc, zero,
                                  arith::MinSIOp::create(b, loc, keyCount, v));
  };
  Value start = zero, end = keyCount;
  if (band.lower)
    start = arith::MaxSIOp::create(b, loc, zero,
                                   buildBandBound(b, loc, *band.lower,
                                                  everyRow ? lastRow : firstRow,
                                                  values));
  if (band.upper)
    end = clamp(buildBandBound(b, loc, *band.upper,
                               everyRow ? firstRow : lastRow, values));
  return {start, end};
}

KeyTileRanges attn::buildKeyTileRanges(OpBuilder &b, Location loc,
                                       const KeyBand &band, Value firstRow,
                                       Value lastRow, const BandValues &values,
                                       Value keyCount, int64_t tile,
                                       bool wholeFullTiles) {
  Value tileSize = arith::ConstantIndexOp::create(b, loc, tile);
  auto floorToTile = [&](Value x) -> Value {
    return arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, x, tileSize), tileSize);
  };
  auto ceilToTile = [&](Value x) -> Value {
    return arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, x, tileSize), tileSize);
  };
  // Steps start on tile boundaries.
  auto [anyStart, end] = buildRowsKeyRange(
      b, loc, band, firstRow, lastRow, values, keyCount, /*everyRow=*/false);
  Value first = floorToTile(anyStart);
  auto [everyStart, everyEnd] = buildRowsKeyRange(
      b, loc, band, firstRow, lastRow, values, keyCount, /*everyRow=*/true);
  // A band that reaches keyCount takes the short last tile among the full
  // ones, unless they must be whole.
  Value fullEnd = floorToTile(everyEnd);
  if (!wholeFullTiles) {
    Value reachesEnd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             everyEnd, keyCount);
    fullEnd = arith::SelectOp::create(b, loc, reachesEnd, keyCount, fullEnd);
  }
  Value fullStart = arith::MinSIOp::create(b, loc, ceilToTile(everyStart), end);
  fullEnd = arith::MaxSIOp::create(b, loc, fullStart, fullEnd);
  return {first, fullStart, fullEnd, end};
}
