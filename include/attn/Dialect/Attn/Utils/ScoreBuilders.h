//===- ScoreBuilders.h - the score semantics lowerings share ----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What turns the raw product q·k of element (b, h, i, j) into the score the
// softmax sees (scale, masks, kv_lens, modifier regions, causal and window),
// and the dropout applied to probabilities, as scalar builders. The
// reference lowering and the tiled lowering both call these, so that
// docs/Numerics.md has one implementation whatever the loop structure.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_SCOREBUILDERS_H
#define ATTN_DIALECT_ATTN_UTILS_SCOREBUILDERS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir {
namespace attn {

/// The semantic attributes of an attn.sdpa or attn.weights, read once.
struct ScoreSemantics {
  /// The modifier regions; null when absent.
  Region *scoreMod = nullptr;
  Region *maskMod = nullptr;
  /// A `mask` operand is present; `boolMask`: it is a keep-mask (i1), not
  /// additive.
  bool hasMask = false;
  bool boolMask = false;
  bool hasKvLens = false;
  bool causal = false;
  /// The diagonal is bottom-right aligned (`align = <bottom_right>`).
  bool bottomRight = false;
  /// `window = [left, right]`.
  std::optional<std::pair<int64_t, int64_t>> window;
  /// The explicit `scale`, if any.
  std::optional<double> scale;
  /// The run-time scale (a 0-D f32 tensor) that replaces `scale`, if any.
  Value scaleTensor;
  /// The run-time scale already read (an f32), used in place of
  /// `scaleTensor`: a GPU kernel reads it once from its buffer.
  Value scaleValue;
  double dropout = 0;
  int64_t seed = 0;
  /// The run-time seed (a 0-D i64 tensor) that replaces `seed`, if any;
  /// read where the dropout is evaluated.
  Value seedTensor;
  /// The run-time seed already read (an i64), used in place of
  /// `seedTensor`: a GPU kernel reads it once from its buffer.
  Value seedValue;

  /// The same semantics for a tile in which every key is known to be
  /// visible: no keep condition left to evaluate (an additive mask, the
  /// modifiers and dropout stay).
  ScoreSemantics withoutKeepConditions() const;
};

/// The semantics of `op`.
ScoreSemantics getScoreSemantics(SdpaOp op);
ScoreSemantics getScoreSemantics(WeightsOp op);
ScoreSemantics getScoreSemantics(SdpaGradOp op);

/// The softmax scale in `acc`: the run-time one, the explicit one, else
/// 1/sqrt(D) with D the last dimension of `query` (computed at run time when it
/// is dynamic).
Value buildScale(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                 Value query, Type acc);

/// How a lowering that keeps scores in log2 units (softmax by exp2) scales
/// them: where the score is linear in the scale (no score_mod, no additive
/// mask) log2(e) is folded into `scale` and `log2e` is null; otherwise each
/// modified score is multiplied by `log2e`. Where the score is linear, a
/// lowering may instead multiply the query by `scale` once (it is a factor
/// of every product q.k) and build the scores with a null `scale`.
struct Log2ScoreScale {
  Value scale;
  Value log2e;
};
Log2ScoreScale buildLog2ScoreScale(OpBuilder &b, Location loc,
                                   const ScoreSemantics &sem, Value query,
                                   Type acc);

/// buildModifiedScore in log2 units under `scale` (see Log2ScoreScale).
Value buildLog2ModifiedScore(OpBuilder &b, Location loc,
                             const ScoreSemantics &sem, Value s,
                             const Log2ScoreScale &scale, ArrayRef<Value> idx,
                             Value maskValue, Value kvLength, Value queryLength,
                             Value blockKeep = Value());

/// The score of element `idx` = (b, h, i, j) (indices into the whole
/// problem, not a tile), from the raw product `s` (type `acc`): scaled (by
/// `scale`; a null `scale` when `s` is already scaled),
/// plus an additive `maskValue`, through `score_mod`; -inf where a keep
/// condition fails (boolean `maskValue`, `mask_mod`, j < `kvLength` when the
/// op has kv_lens, causal, window). `maskValue` is the mask element for
/// `idx` (null without a mask); `kvLength` is the number of keys batch b
/// has (Skv, or kv_lens[b]) and `queryLength` is Sq, both index values.
/// `blockKeep`, when not null, is one more keep condition: whether the
/// element's block is listed in the block-sparse layout, or whether a key
/// of a tiled lowering's padded tile is a real one.
Value buildModifiedScore(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                         Value s, Value scale, ArrayRef<Value> idx,
                         Value maskValue, Value kvLength, Value queryLength,
                         Value blockKeep = Value());

/// The derivative of buildModifiedScore's score with respect to the raw
/// product `s` where the key takes part: `scale` times score_mod's
/// derivative at the scaled (and masked) score (RegionDerivative.h), or
/// `scale` without score_mod.
Value buildScoreDerivative(OpBuilder &b, Location loc,
                           const ScoreSemantics &sem, Value s, Value scale,
                           ArrayRef<Value> idx, Value maskValue);

/// The gradient of the raw product q.k at one element of the backward:
/// `p (probGrad - rowTerm) derivative`, with `p` the probability before
/// dropout, `probGrad` dP after dropout's rescaling, `rowTerm`
/// rowsum(dO * O) and `derivative` buildScoreDerivative's; 0 where `p` is
/// (keys that take no part, where the derivative need not be finite).
Value buildScoreGradient(OpBuilder &b, Location loc, Value p, Value probGrad,
                         Value rowTerm, Value derivative);

/// The conjunction of the keep conditions of element `idx` (a boolean
/// `maskValue`, j < `kvLength` under kv_lens, `mask_mod`, causal, window) as
/// an i1, and'ed with `blockKeep` when given; null when there is none.
Value buildKeep(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                ArrayRef<Value> idx, Value maskValue, Value kvLength,
                Value queryLength, Value blockKeep = Value());

/// The element of `mask` for `idx` = (b, h, i, j), broadcasting its size-1
/// (and missing leading) dimensions to [B, Hq, Sq, Skv]. `mask` is a
/// tensor or (in a GPU kernel) a memref.
Value buildMaskElement(OpBuilder &b, Location loc, Value mask,
                       ArrayRef<Value> idx);

/// A CSR block-sparse layout (`offsets`, `indices`) as a dense
/// [1, 1, queryBlocks, keyBlocks] i1 table: true where the key block is
/// listed for the query block.
Value buildListedBlocks(OpBuilder &b, Location loc, Value offsets,
                        Value indices, Value queryBlocks, Value keyBlocks);

/// The row maximum to subtract before exp: `max`, or 0 when it is -inf (no
/// key of the row is visible), so that exp gives 0 rather than NaN.
Value buildSafeRowMax(OpBuilder &b, Location loc, Value max);

/// `x / sum`, or 0 when `sum` is 0: the normalisation of a row no key took
/// part in gives 0 (docs/Numerics.md), not NaN.
Value buildNormalize(OpBuilder &b, Location loc, Value x, Value sum);

/// `1 / sum` per row of `rowSums` (a tensor, its element type the sums'),
/// or 0 where the sum is 0, as a new tensor: attn.weights' lowering
/// normalises a row by multiplying with it (one division per row instead
/// of one per element: a 512-bit vdivps issues about once per 16 cycles;
/// the product differs from `x / sum` by at most one rounding,
/// docs/Numerics.md), and a row no key took part in (all of its terms 0)
/// gives 0, like buildNormalize.
Value buildRowReciprocals(OpBuilder &b, Location loc, Value rowSums);

/// Body of a `linalg.generic` with inputs (x, rowMax): yields
/// exp(x - buildSafeRowMax(rowMax)), the unnormalised softmax term of the
/// reference lowering, computed as exp2 of the difference times log2(e).
void buildExpMinusMaxBody(OpBuilder &b, Location loc, ValueRange args);

/// The same in base 2, exp2(x - buildSafeRowMax(rowMax)), for scores kept
/// in log2 units (multiplied by log2(e)): the tiled lowering's form.
void buildExp2MinusMaxBody(OpBuilder &b, Location loc, ValueRange args);

/// The probability `p` (type `acc`) of element `idx` after dropout: zero
/// when dropped, else rescaled by 1/(1 - dropout); `p` when the op has no
/// dropout. The random number is the counter-based hash of
/// docs/Numerics.md, so it does not depend on the loop structure.
Value buildDropout(OpBuilder &b, Location loc, const ScoreSemantics &sem,
                   Value p, ArrayRef<Value> idx);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_UTILS_SCOREBUILDERS_H
