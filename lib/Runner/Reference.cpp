//===- Reference.cpp - the float64 reference and output comparison -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Reference.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Runner/JitRunner.h"
#include "mlir/Pass/PassManager.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;


Tolerance attn::getTolerance(AbiElement element) {
  switch (element) {
  case AbiElement::f16:
  case AbiElement::bf16:
    return {1e-2, 2e-2};
  case AbiElement::f32:
    return {1e-5, 1e-4};
  case AbiElement::f64:
    return {1e-12, 1e-11};
  default:
    return {0, 0};
  }
}


Comparison attn::compareArrays(const HostArray &got, const HostArray &want) {
  Comparison result;
  ArrayRef<int64_t> shape = want.getShape();
  int64_t rowLength = shape.empty() ? 1 : shape.back();
  int64_t elements = want.getNumElements();
  double diff = 0, norm = 0;
  int64_t worst = 0, firstNonFinite = -1;
  // A row is measured against its own norm, or a tenth of a typical row's
  // (the root mean square of the reference's nonzero row norms) where its
  // own is smaller: a gradient row that cancels to almost nothing (dQ of a
  // query that sees one key) holds only rounding, and relative to itself
  // that is any size. As test/lib/attn_check.py measures.
  double squares = 0;
  int64_t nonzeroRows = 0;
  for (int64_t row = 0; rowLength > 0 && row * rowLength < elements; ++row) {
    double rowNorm = 0;
    for (int64_t i = row * rowLength, e = i + rowLength; i < e; ++i)
      if (double w = want.get(i); std::isfinite(w))
        rowNorm += w * w;
    squares += rowNorm;
    nonzeroRows += rowNorm > 0;
  }
  double floor = nonzeroRows ? 0.1 * std::sqrt(squares / nonzeroRows) : 0;
  for (int64_t row = 0; rowLength > 0 && row * rowLength < elements; ++row) {
    double rowDiff = 0, rowNorm = 0;
    for (int64_t i = row * rowLength, e = i + rowLength; i < e; ++i) {
      double g = got.get(i), w = want.get(i);
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
  result.relativeError =
      result.nonFinite ? INFINITY
                       : std::sqrt(diff) / (norm > 0 ? std::sqrt(norm) : 1.0);
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

llvm::Expected<SmallVector<HostArray>>
attn::computeFloat64Reference(ModuleOp module, func::FuncOp func,
                              const FunctionAbi &abi,
                              ArrayRef<HostArray> arrays,
                              const CpuTargetOptions &target,
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
