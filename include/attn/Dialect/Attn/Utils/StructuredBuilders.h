//===- StructuredBuilders.h - building linalg on tensors --------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The few builder idioms every attn lowering needs: sizes of a tensor, filled
// tensors, transposes and f32 widening. They live here once so that the
// lowerings agree on them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_STRUCTUREDBUILDERS_H
#define ATTN_DIALECT_ATTN_UTILS_STRUCTUREDBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace attn {

/// Iterator kinds, short, for the many linalg.generic ops lowerings build.
using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// The mixed (static or `tensor.dim`) sizes of `value` at `dims`, in order.
SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value value,
                                   ArrayRef<int64_t> dims);

/// All mixed sizes of the ranked tensor `value`.
SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value value);

/// A new tensor of `sizes` filled with the scalar `fill` (whose type is the
/// element type).
Value createFilledTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, TypedAttr fill);

/// `linalg.transpose` of `input` by `permutation` into a fresh tensor.
Value createTranspose(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> permutation);

/// The page (an index into `pages`, dimension 0) that holds page slot
/// `slot` of batch `batch` in `table` ([B, max_pages], i32 or i64): the
/// table's entry clamped to [0, num_pages - 1], so that an entry a
/// sequence's length leaves unused never reads out of bounds
/// (attn.gather_pages).
Value buildPageIndex(OpBuilder &b, Location loc, Value pages, Value table,
                     Value batch, Value slot);

/// Sequence `batch` of a packed batch (attn.pad_sequences and
/// attn.unpad_sequences): its first row in the `rows`-row packed tensor,
/// its length and where it starts in the padded one of length `padded`,
/// clamped as the ops define (offsets to [0, rows], lengths to [0, padded];
/// `alignEnd` places it at the end of its padded rows). All index values.
/// `rows` may be null: offsets are then not bounded above, which gives
/// each sequence at least the rows the ops give it (for a caller that only
/// needs to know which rows are certainly unused).
struct SequenceBounds {
  Value start, length, paddedStart;
};
SequenceBounds buildSequenceBounds(OpBuilder &b, Location loc, Value offsets,
                                   Value batch, Value rows, Value padded,
                                   bool alignEnd);

/// The type attention arithmetic is carried out in for inputs of type
/// `element`: f64 for f64 (the float64 reference), f32 for everything else.
Type getAccumulatorType(Type element);

/// Converts the scalar float `v` to the float `type` (extension or
/// truncation; identity when the types match).
Value castFloat(OpBuilder &b, Location loc, Value v, Type type);

/// Body of a contraction `linalg.generic` with inputs (a, b) and an
/// accumulator: yields `acc + acc_t(a) * acc_t(b)`, with both inputs widened
/// to the accumulator's type. Every attn contraction accumulates in f32 (f64
/// for f64 inputs) whatever its input types.
void buildMulAccBody(OpBuilder &b, Location loc, ValueRange args);

/// Body of a `linalg.generic`/`linalg.reduce` yielding `OpTy(args[0],
/// args[1])`: the combiner of a reduction (max, sum) or a binary
/// elementwise op.
template <typename OpTy>
void buildBinaryBody(OpBuilder &b, Location loc, ValueRange args) {
  linalg::YieldOp::create(b, loc,
                          OpTy::create(b, loc, args[0], args[1]).getResult());
}

/// The combiner of a row reduction (max, sum) that may be evaluated in any
/// order: `reassoc` lets LLVM's loop vectoriser split the row into vector
/// lanes. For max the order never changes the result; for a sum it changes
/// only the rounding, as any blocked or parallel sum does.
template <typename OpTy>
void buildReassociableBody(OpBuilder &b, Location loc, ValueRange args) {
  auto op = OpTy::create(b, loc, args[0], args[1]);
  op.setFastmath(arith::FastMathFlags::reassoc);
  linalg::YieldOp::create(b, loc, op.getResult());
}

/// Converts every element of the float tensor `input` to `elementType` into
/// a fresh tensor, multiplied by the scalar `factor` (of `elementType`) when
/// one is given; returns `input` when the types already match and there is
/// no factor.
Value createElementCast(OpBuilder &b, Location loc, Value input,
                        Type elementType, Value factor = Value());

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_UTILS_STRUCTUREDBUILDERS_H
