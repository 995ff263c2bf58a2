//===- Reference.cpp - the float64 reference and output comparison -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Reference.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Runner/JitRunner.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

Tolerance attn::getTolerance(AbiElement element) {
  switch (element) {
  case AbiElement::f16:
  case AbiElement::bf16:
    return {1e-2, 4e-2};
  case AbiElement::f32:
    return {1e-5, 1e-4};
  case AbiElement::f64:
    return {1e-12, 1e-11};
  default:
    return {0, 0};
  }
}

/// The root mean square of the nonzero row norms of `array` (rows along its
/// last dimension, non-finite values left out): the size of a typical row.
static double getTypicalRowNorm(const HostArray &array) {
  ArrayRef<int64_t> shape = array.getShape();
  int64_t rowLength = shape.empty() ? 1 : shape.back();
  int64_t elements = array.getNumElements();
  double squares = 0;
  int64_t nonzeroRows = 0;
  for (int64_t row = 0; rowLength > 0 && row * rowLength < elements; ++row) {
    double rowNorm = 0;
    for (int64_t i = row * rowLength, e = i + rowLength; i < e; ++i)
      if (double w = array.get(i); std::isfinite(w))
        rowNorm += w * w;
    squares += rowNorm;
    nonzeroRows += rowNorm > 0;
  }
  return nonzeroRows ? std::sqrt(squares / nonzeroRows) : 0;
}

Comparison attn::compareArrays(const HostArray &got, const HostArray &want,
                               double scale) {
  Comparison result;
  ArrayRef<int64_t> shape = want.getShape();
  int64_t rowLength = shape.empty() ? 1 : shape.back();
  int64_t elements = want.getNumElements();
  double diff = 0, norm = 0;
  int64_t worst = 0, firstNonFinite = -1;
  // A row is measured against its own norm, or a tenth of a typical row's
  // (or `scale` if larger) where its own is smaller: a gradient row that
  // cancels to almost nothing (dQ of a query that sees one key) holds only
  // rounding, and relative to itself that is any size. As
  // test/lib/attn_check.py measures. In f16 and bf16 the whole typical
  // row: O is stored rounded to 8 or 11 bits, so rowsum(dO * O) in a
  // backward carries an error of that size times a typical row, which a
  // row of a sharp softmax (its dS cancels) shows at 5-15% of its own norm
  // in the reference lowering as in the tiled one (found by
  // attn-gen-fuzzer; f32 gives 1e-5).
  AbiElement element = got.getElement();
  double typicalShare =
      element == AbiElement::f16 || element == AbiElement::bf16 ? 1.0 : 0.1;
  double floor = std::max(typicalShare * getTypicalRowNorm(want), scale);

  for (int64_t row = 0; rowLength > 0 && row * rowLength < elements; ++row) {
    double rowDiff = 0, rowNorm = 0;
    for (int64_t i = row * rowLength, e = i + rowLength; i < e; ++i) {
      double g = got.get(i), w = want.get(i);
      // The same infinity in both agrees: the log-sum-exp of a row in
      // which no key takes part is -inf.
      if (std::isinf(w) && g == w)
        continue;
      if (!std::isfinite(g) || !std::isfinite(w)) {
        ++result.nonFinite;
        if (firstNonFinite < 0)
          firstNonFinite = row;
        continue;
      }
      rowDiff += (g - w) * (g - w);
      rowNorm += w * w;
    }
    diff += rowDiff;
    norm += rowNorm;
    double rowScale = std::max(std::sqrt(rowNorm), floor);
    double rowError = std::sqrt(rowDiff) / (rowScale > 0 ? rowScale : 1.0);
    if (rowError > result.maxRowError) {
      result.maxRowError = rowError;
      worst = row;
    }
  }
  int64_t rows = rowLength > 0 ? elements / rowLength : 0;
  double wholeScale =
      std::max(std::sqrt(norm), scale * std::sqrt(static_cast<double>(rows)));
  result.relativeError =
      result.nonFinite ? INFINITY
                       : std::sqrt(diff) / (wholeScale > 0 ? wholeScale : 1.0);
  // With non-finite values, the first row that has one.
  if (result.nonFinite) {
    result.maxRowError = INFINITY;
    worst = firstNonFinite;
  }
  // The row's index in the leading dimensions, outermost first.
  result.worstRow.assign(shape.empty() ? 0 : shape.size() - 1, 0);
  for (int64_t d = static_cast<int64_t>(result.worstRow.size()) - 1; d >= 0;
       --d) {
    result.worstRow[d] = shape[d] ? worst % shape[d] : 0;
    worst = shape[d] ? worst / shape[d] : 0;
  }
  return result;
}

std::string Comparison::formatWorstRow() const {
  return llvm::join(
      llvm::map_range(worstRow, [](int64_t d) { return std::to_string(d); }),
      ", ");
}

SmallVector<Comparison> attn::compareOutputs(ArrayRef<HostArray> got,
                                             ArrayRef<HostArray> want) {
  SmallVector<double> typical;
  for (const HostArray &array : want)
    typical.push_back(getTypicalRowNorm(array));
  double largest = typical.empty() ? 0 : *llvm::max_element(typical);
  SmallVector<Comparison> result;
  for (auto [i, array] : llvm::enumerate(want)) {
    // Zero up to the reference's own rounding everywhere: measured against
    // the largest output (see the header).
    double scale = typical[i] < 1e-6 * largest ? largest : 0.0;
    result.push_back(compareArrays(got[i], array, scale));
  }
  return result;
}

llvm::Expected<SmallVector<HostArray>> attn::computeFloat64Reference(
    ModuleOp module, func::FuncOp func, const FunctionAbi &abi,
    ArrayRef<HostArray> arrays, const CpuTargetOptions &target,
    const CpuTargetModel &model) {
  OwningOpRef<ModuleOp> wide = module.clone();
  PassManager pm(module.getContext());
  pm.addPass(createAttnWidenToF64());
  if (failed(pm.run(*wide)))
    return llvm::createStringError("no float64 reference for this module "
                                   "(attn-widen-to-f64 failed: diagnostics "
                                   "above)");
  auto wideFunc = wide->lookupSymbol<func::FuncOp>(func.getSymName());
  FailureOr<FunctionAbi> wideAbi = getFunctionAbi(wideFunc);
  if (failed(wideAbi))
    return llvm::createStringError("the float64 form of @" + abi.name +
                                   " has no C ABI (diagnostics above)");
  // The reference is always the reference lowering, whatever the code
  // under test was compiled with.
  CpuPipelineOptions referenceLowering;
  referenceLowering.lowering = SdpaLowering::Reference;
  auto reference =
      JitFunction::compile(*wide, *wideAbi, target, model, referenceLowering);
  if (!reference)
    return reference.takeError();

  SmallVector<HostArray> wideArrays;
  for (auto [i, param] : llvm::enumerate(wideAbi->params)) {
    wideArrays.push_back(convertArray(arrays[i], param.element));
    if (param.isOutput)
      wideArrays.back().poison();
  }
  if (llvm::Error err = (*reference)->call(wideArrays))
    return std::move(err);
  return SmallVector<HostArray>(
      std::make_move_iterator(wideArrays.begin() + abi.numInputs),
      std::make_move_iterator(wideArrays.end()));
}
