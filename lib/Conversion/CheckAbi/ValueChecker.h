//===- ValueChecker.h - the entry checks of integer buffers -----*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What attn-check-abi (CheckAbi.cpp) builds at a function's entry to check
// the values it reads from integer buffers (attn::getValueChecks: lengths,
// page tables, append positions), defined in ValueChecker.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_CHECKABI_VALUECHECKER_H
#define ATTN_LIB_CONVERSION_CHECKABI_VALUECHECKER_H

#include "attn/Target/Cpu/CpuABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The first failing check of a function's entry, as SSA values: whether
/// one failed, and its (argument, dimension, kind, expected, actual).
struct Mismatch {
  Value failed;
  SmallVector<Value, 5> info;

  /// Records (argument, dimension, kind, expected, actual) where `cond`
  /// holds and no earlier check failed.
  void check(OpBuilder &b, Location loc, Value cond, ArrayRef<Value> fields) {
    Value first = arith::AndIOp::create(
        b, loc, cond,
        arith::XOrIOp::create(b, loc, failed,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
    for (auto [slot, value] : llvm::zip(info, fields))
      slot = arith::SelectOp::create(b, loc, first, value, slot);
    failed = arith::OrIOp::create(b, loc, failed, cond);
  }
};

/// Builds the loops that check the values of a function's integer buffers
/// (AbiValueCheck), each recording its first failure in `mismatch`. A loop
/// reads nothing once an earlier check failed (its trip count is then 0):
/// the buffers may not be what their descriptors say.
class ValueChecker {
public:
  ValueChecker(OpBuilder &b, Location loc, Mismatch &mismatch)
      : b(b), loc(loc), mismatch(mismatch) {}

  /// Every element of the 1-D `values` (of `count` elements) in [`low`,
  /// `high`] (i64), else (argument, its index, `kind`, high, element).
  void checkElements(Value argument, Value values, Value count, Value low,
                     Value high, AbiMismatch kind);

  /// In rows [0, `rows`) of the 2-D `table` ([rows, `width`]), the entries
  /// of pages holding keys, the first ceil(max(lengths[r], 0) / pageSize)
  /// (at most the row's width), in [0, `numPages`), else (argument, the
  /// entry's row-major index, Page, numPages, entry).
  void checkPages(Value argument, Value table, Value rows, Value width,
                  Value lengths, Value numPages, Value pageSize);

  /// For attn.append_pages: each position in [0, width * pageSize -
  /// newRows] (else Position), the entries of the pages the rows are
  /// written to in [0, numPages) (else Page), and no page written by two
  /// sequences (else (table, the second sequence, SharedPage, the first,
  /// page)).
  void checkPageWrites(Value tableArgument, Value positionsArgument,
                       Value table, Value rows, Value width, Value positions,
                       Value numPages, Value pageSize, Value newRows);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  }
  /// `count`, or 0 once a check failed.
  Value tripCount(Value count) {
    return arith::SelectOp::create(b, loc, mismatch.failed, index(0), count);
  }
  /// Loops over r in [0, `rows`) and, in each, j in the [begin, end) that
  /// `range` gives for r, carrying `inits` through `body`; returns the
  /// final values.
  using Range = std::pair<Value, Value>;
  SmallVector<Value>
  forEachEntry(Value rows,
               function_ref<Range(OpBuilder &, Location, Value)> range,
               ValueRange inits,
               function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                               Value, ValueRange)>
                   body);
  /// The entries [first, end) of a row that hold positions [start, start +
  /// count) of a sequence (none when count is 0), at most the row's
  /// `width`.
  static Range entriesOf(OpBuilder &nb, Location nl, Value start, Value count,
                         Value pageSize, Value width);

  OpBuilder &b;
  Location loc;
  Mismatch &mismatch;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_CHECKABI_VALUECHECKER_H
