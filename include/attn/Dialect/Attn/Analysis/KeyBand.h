//===- KeyBand.h - the keys a query row can see, from masks -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Most attention masks in practice (causal in either alignment, sliding
// windows, prefix-LM, key lengths, and `mask_mod` regions made of affine
// comparisons of q_idx and kv_idx) leave each query row i a contiguous band
// of visible keys [lower(i), upper(i)) whose ends never move left as i grows.
// From such a band, a tile of rows [r0, r1) and keys [k0, k1) is
//   - empty   when k1 <= lower(r0) or upper(r1 - 1) <= k0,
//   - full    when lower(r1 - 1) <= k0 and k1 <= upper(r0),
//   - partial otherwise,
// so loop bounds over key tiles follow from four evaluations of the band per
// query tile. This is the target-independent half of block sparsity: the
// CPU tiling uses it now and a GPU tiling can use the same answers. What the
// analysis cannot capture (a boolean mask operand, a block-sparse layout, a
// `mask_mod` that reads tensors) is classified at run time by the code
// `--attn-sparsify` generates.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_ANALYSIS_KEYBAND_H
#define ATTN_DIALECT_ATTN_ANALYSIS_KEYBAND_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// Values a band may refer to besides the query row.
enum class BandSymbol {
  Batch,       ///< b (the `mask_mod` argument or the batch being computed)
  Head,        ///< h
  QueryLength, ///< Sq
  KvLength,    ///< keys of batch b: kv_lens[b] when given, else Skv
  External,    ///< an SSA value defined outside the op
};

/// `coeff * symbol`.
struct BandTerm {
  BandSymbol symbol;
  Value external; ///< for BandSymbol::External
  int64_t coeff;
  bool operator==(const BandTerm &other) const {
    return symbol == other.symbol && external == other.external &&
           coeff == other.coeff;
  }
};

/// `rowCoeff * i + constant + sum(terms)`, with rowCoeff >= 0 in a band.
struct BandAffine {
  int64_t rowCoeff = 0;
  int64_t constant = 0;
  SmallVector<BandTerm> terms;

  BandAffine &add(const BandAffine &other, int64_t times = 1);
  BandAffine &scale(int64_t factor);
  bool operator==(const BandAffine &other) const;
};

/// One end of a band: an affine leaf, or the min/max of two ends. Min and
/// max of nondecreasing functions are nondecreasing, so a bound built from
/// leaves with rowCoeff >= 0 keeps the property the classification needs.
struct BandBound {
  enum class Kind { Leaf, Min, Max };
  Kind kind = Kind::Leaf;
  BandAffine leaf;
  std::vector<BandBound> operands;

  static BandBound affine(BandAffine leaf);
  static BandBound combine(Kind kind, BandBound lhs, BandBound rhs);
  bool operator==(const BandBound &other) const;
  /// `min(Skv, i + 1)`-style text for remarks and tests.
  std::string str() const;
};

/// Visible keys of row i lie in [lower(i), upper(i)); no lower bound means
/// 0 and no upper bound means Skv. `empty`: no key is visible anywhere.
struct KeyBand {
  std::optional<BandBound> lower, upper;
  bool empty = false;

  /// Keys visible under both bands.
  static KeyBand intersect(const KeyBand &a, const KeyBand &b);
  /// Keys visible under either; none when the union is not one band that
  /// this form can express (the two bands must share an end).
  static std::optional<KeyBand> unite(const KeyBand &a, const KeyBand &b);
  std::string str() const;
};

/// What the masks of an attn.sdpa say about its tiles.
struct MaskAnalysis {
  /// Every visible key lies in the band.
  KeyBand band;
  /// Every key in the band is visible: nothing but the band masks, so tiles
  /// inside it need no mask evaluation. When false, `reasons` says what the
  /// band does not capture (those need run-time block classes).
  bool exact = true;
  SmallVector<std::string> reasons;
};

/// Analyses the keep conditions of `op` (causal, window, kv_lens, mask_mod,
/// a boolean mask, a block-sparse layout). An additive float mask is not a
/// keep condition: it is added in every tile and does not affect the band.
MaskAnalysis analyzeMasks(SdpaOp op);
/// The same for the backward, whose masks are the forward's.
MaskAnalysis analyzeMasks(SdpaGradOp op);

/// The values of the band's symbols where a bound is evaluated.
struct BandValues {
  Value batch, head, queryLength, kvLength;
};

/// Emits `bound(row)` as index arithmetic.
Value buildBandBound(OpBuilder &b, Location loc, const BandBound &bound,
                     Value row, const BandValues &values);

/// The keys of [0, keyCount) that some row of [firstRow, lastRow] sees
/// ([lower(firstRow), upper(lastRow))), or with `everyRow` the keys every
/// row sees ([lower(lastRow), upper(firstRow))), as index values clamped to
/// [0, keyCount]; an empty band gives [0, 0). The ends of a band do not
/// decrease with the row, so the end rows decide.
std::pair<Value, Value> buildRowsKeyRange(OpBuilder &b, Location loc,
                                          const KeyBand &band, Value firstRow,
                                          Value lastRow,
                                          const BandValues &values,
                                          Value keyCount, bool everyRow);

/// The key tiles (of `tile` keys, aligned to multiples of `tile`) a block
/// of rows [firstRow, lastRow] visits, in three ranges: [first, fullStart)
/// and [fullEnd, end) hold the partial tiles, [fullStart, fullEnd) the full
/// ones, where every row sees every key (no keep condition to evaluate).
/// The last tile may be short: a band that reaches keyCount takes it among
/// the full ones, or with `wholeFullTiles` leaves it to [fullEnd, end), so
/// that a lowering that pads keys to whole tiles evaluates its bound there
/// and nowhere else. An empty band gives four zeros; when no tile is full,
/// fullStart = fullEnd and the first range covers everything. Both the
/// CPU's attn-tile and the CUDA kernel loop over these ranges; they are
/// meaningful only for an exact band (MaskAnalysis::exact), [first, end)
/// for any band.
struct KeyTileRanges {
  Value first, fullStart, fullEnd, end;
};
KeyTileRanges buildKeyTileRanges(OpBuilder &b, Location loc,
                                 const KeyBand &band, Value firstRow,
                                 Value lastRow, const BandValues &values,
                                 Value keyCount, int64_t tile,
                                 bool wholeFullTiles = false);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_ANALYSIS_KEYBAND_H
