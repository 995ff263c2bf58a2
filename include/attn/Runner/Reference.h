//===- Reference.h - the float64 reference and how outputs are compared ---===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What `attn-run --check` and the program fuzzer (attn-gen-fuzzer) hold
// compiled code to: the same module widened to f64 by attn-widen-to-f64 and
// compiled with the reference lowering, on the same inputs, compared as a
// whole and row by row within a tolerance of the output's element type.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_REFERENCE_H
#define ATTN_RUNNER_REFERENCE_H

#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/HostArray.h"
#include "attn/Target/Cpu/CpuABI.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace attn {

/// Relative errors tolerated for an output element kind: of the whole
/// output, and of any one row. A row's error fluctuates more than the
/// average over thousands of rows (Linformer's f32 rows, whose projections
/// sum 1024 products, reach 1.1e-5); ten times the whole-output tolerance
/// (four times for f16/bf16: the rows of a bf16 backward with a sharp
/// softmax carry 1-2% of a typical row in rounding, in the reference
/// lowering as in the tiled one) still fails a row that is wrong.
struct Tolerance {
  double whole = 0, row = 0;
};

Tolerance getTolerance(AbiElement element);

struct Comparison {
  /// ||got - want|| / ||want|| (Frobenius); infinite if any value of
  /// either is not finite.
  double relativeError = 0;
  /// The largest error of one row (the last dimension: one query's output
  /// features): ||got_row - want_row|| / max(||want_row||, a tenth of the
  /// root mean square row norm), absolute where the whole reference is 0.
  /// One wrong row among thousands barely moves the Frobenius error.
  double maxRowError = 0;
  /// The index of that row (the output's leading dimensions).
  SmallVector<int64_t> worstRow;
  /// Elements where `got` or `want` is NaN or infinite, other than the same
  /// infinity in both (the -inf log-sum-exp of a row in which no key takes
  /// part): attention of finite inputs is otherwise finite (a fully masked
  /// row gives 0), so such a value is an element the code never wrote
  /// (outputs start as NaN) or an overflow.
  int64_t nonFinite = 0;

  bool passes(Tolerance tolerance) const {
    return relativeError <= tolerance.whole && maxRowError <= tolerance.row;
  }

  /// `worstRow` as "i, j, k".
  std::string formatWorstRow() const;
};

/// Compares `got` with `want` (same shape and element count). Every row
/// (and the whole, per row) is measured against at least `scale`, a row
/// norm, where its own norm is smaller.
Comparison compareArrays(const HostArray &got, const HostArray &want,
                         double scale = 0);

/// Compares each of a call's outputs with its reference. An output whose
/// reference is zero up to rounding everywhere, a millionth of the largest
/// output's typical row or less, is measured against that row size: its
/// exact value is a cancellation (dQ and dK where every query sees one key:
/// P (dP - rowsum(dO O)) is 0), so what the code computes is rounding of
/// the size of the terms that cancelled, not of the result.
SmallVector<Comparison> compareOutputs(ArrayRef<HostArray> got,
                                       ArrayRef<HostArray> want);

/// The results (f64) of `func`'s float64 reference on the inputs among
/// `arrays` (inputs, then outputs, as `abi` orders them): `module` widened
/// by attn-widen-to-f64, compiled with the reference lowering for `target`
/// and `model` (which must be the host), called with NaN-poisoned outputs.
/// Fails if the module has no f64 form or the reference cannot run.
llvm::Expected<SmallVector<HostArray>>
computeFloat64Reference(ModuleOp module, func::FuncOp func,
                        const FunctionAbi &abi, ArrayRef<HostArray> arrays,
                        const CpuTargetOptions &target,
                        const CpuTargetModel &model);

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_REFERENCE_H
