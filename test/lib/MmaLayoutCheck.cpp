//===- MmaLayoutCheck.cpp - the flash kernel's fragment table vs upstream -===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// attn-lower-to-gpu addresses every mma.sync fragment through
// getMmaFragmentOffset; a wrong entry would compute a wrong attention on the
// GPU only. This program compares the table, for every lane and element,
// with the (lane, value) -> (row, col) maps upstream MLIR derives for its
// own mma.sync lowering (NVGPU/Utils/MMAUtils.h), so that a machine without
// a GPU checks it too. Prints one line per operand; exits 1 on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

int main() {
  MLIRContext context;
  context.loadDialect<nvgpu::NVGPUDialect, affine::AffineDialect>();
  OpBuilder b(&context);
  struct Operand {
    const char *name;
    MmaOperand attn;
    nvgpu::MatMulOperandRole role;
    // Upstream's fragment vector type; B is described as N x K.
    SmallVector<int64_t> shape;
    Type element;
    int64_t registers;
    bool transposed;
  };
  Operand operands[] = {{"A",
                         MmaOperand::A,
                         nvgpu::MatMulOperandRole::A,
                         {16, 16},
                         b.getF16Type(),
                         4,
                         false},
                        {"B",
                         MmaOperand::B,
                         nvgpu::MatMulOperandRole::B,
                         {8, 16},
                         b.getF16Type(),
                         2,
                         true},
                        {"C",
                         MmaOperand::C,
                         nvgpu::MatMulOperandRole::C,
                         {16, 8},
                         b.getF32Type(),
                         2,
                         false}};
  bool ok = true;
  for (const Operand &operand : operands) {
    nvgpu::WarpMatrixInfo info{VectorType::get(operand.shape, operand.element),
                               operand.role};
    FailureOr<AffineMap> map =
        nvgpu::getLaneIdAndValueIdToOperandCoord(b, b.getUnknownLoc(), info);
    if (failed(map)) {
      llvm::outs() << operand.name << ": upstream has no map\n";
      return 1;
    }
    int64_t compared = 0, mismatches = 0;
    for (int64_t lane = 0; lane < 32; ++lane) {
      int64_t g = lane / 4, t = lane % 4;
      for (int64_t reg = 0; reg < operand.registers; ++reg) {
        for (int64_t e = 0; e < 2; ++e) {
          SmallVector<Attribute> in = {b.getIndexAttr(lane),
                                       b.getIndexAttr(2 * reg + e)};
          SmallVector<Attribute> out;
          if (failed(map->constantFold(in, out)))
            return 1;
          int64_t upRow = cast<IntegerAttr>(out[0]).getInt();
          int64_t upCol = cast<IntegerAttr>(out[1]).getInt();
          FragmentOffset at = getMmaFragmentOffset(operand.attn, reg, e);
          // attn's B is K x N: (k, n) = (2t + row, g).
          int64_t row = operand.transposed ? g : g + at.row;
          int64_t col = operand.transposed ? 2 * t + at.row : 2 * t + at.col;
          ++compared;
          if (row != upRow || col != upCol) {
            ++mismatches;
            llvm::outs() << operand.name << ": lane " << lane << " register "
                         << reg << " element " << e << ": attn (" << row << ", "
                         << col << "), upstream (" << upRow << ", " << upCol
                         << ")\n";
          }
        }
      }
    }
    llvm::outs() << operand.name << ": " << compared << " elements, "
                 << mismatches << " mismatches\n";
    ok &= mismatches == 0;
  }
  return ok ? 0 : 1;
}
