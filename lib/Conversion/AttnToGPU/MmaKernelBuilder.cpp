//===- MmaKernelBuilder.cpp - shared pieces of the tensor-core kernels ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "MmaKernelBuilder.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult attn::checkMmaHeadDims(int64_t headDim, int64_t valueDim,
                                     int64_t max, StringRef needs,
                                     llvm::raw_ostream &why) {
  for (auto [name, dim] :
       {std::pair<StringRef, int64_t>{"D", headDim}, {"Dv", valueDim}}) {
    if (!ShapedType::isDynamic(dim) && dim % 16 == 0 && dim > 0 && dim <= max)
      continue;
    why << name << " = ";
    if (ShapedType::isDynamic(dim))
      why << "?";
    else
      why << dim;
    why << " (" << needs << " a static multiple of 16, at most " << max << ")";
    return failure();
  }
  return success();
}

Value MmaKernelBuilder::toBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           /*readOnly=*/true);
}

void MmaKernelBuilder::setLaneCoordinates(Value threadId) {
  tid = threadId;
  warp = arith::DivUIOp::create(b, loc, tid, index(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, index(32));
  g = arith::DivUIOp::create(b, loc, lane, index(4));
  t = arith::RemUIOp::create(b, loc, lane, index(4));
}

Value MmaKernelBuilder::asRegister(Value pair) {
  if (element.isF16())
    return pair;
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

Value MmaKernelBuilder::loadVectorPair(Value memref, ValueRange indices) {
  // Pairs start at even elements of rows of even length: 4-byte aligned,
  // so one 32-bit load.
  return vector::LoadOp::create(b, loc, VectorType::get({2}, element), memref,
                                indices, /*nontemporal=*/false, llvm::Align(4));
}

Value MmaKernelBuilder::packPair(Value x, Value y) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, element),
      ValueRange{arith::TruncFOp::create(b, loc, element, x),
                 arith::TruncFOp::create(b, loc, element, y)});
  return asRegister(pair);
}

Value MmaKernelBuilder::loadColumnPair(Value tile, Value k, Value col) {
  Value pair[2];
  for (int64_t e = 0; e < 2; ++e)
    pair[e] = memref::LoadOp::create(b, loc, tile, ValueRange{add(k, e), col});
  return asRegister(vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, element), ValueRange{pair[0], pair[1]}));
}

Accumulators MmaKernelBuilder::mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                                   ArrayRef<Value> c) {
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto ptxType = element.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  Value d =
      NVVM::MmaOp::create(b, loc, resultType, a, bRegs, c,
                          /*shape=*/ArrayRef<int64_t>{16, 8, 16},
                          /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                          /*multiplicandPtxTypes=*/
                          std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                          /*multiplicandLayouts=*/
                          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                         NVVM::MMALayout::col});
  Accumulators result;
  for (int64_t i = 0; i < 4; ++i)
    result[i] = LLVM::ExtractValueOp::create(b, loc, d, i);
  return result;
}

Value MmaKernelBuilder::rowReduce(Value x, bool isMax) {
  Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
  for (int64_t offset : {1, 2}) {
    Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
    Value other =
        gpu::ShuffleOp::create(b, loc, x, off, width, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? Value(arith::MaximumFOp::create(b, loc, x, other))
              : Value(arith::AddFOp::create(b, loc, x, other));
  }
  return x;
}

Value MmaKernelBuilder::exp2Minus(Value x, Value m) {
  Value diff = arith::SubFOp::create(b, loc, x, m);
  return LLVM::CallIntrinsicOp::create(
             b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
             ValueRange{diff})
      .getResult(0);
}

Value MmaKernelBuilder::log2(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, f32, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
             ValueRange{x})
      .getResult(0);
}

std::array<Value, 4>
MmaKernelBuilder::accumulatorsAsA(ArrayRef<Accumulators> tiles, int64_t kc) {
  auto elementAt = [&](int64_t reg, int64_t e) -> Value {
    FragmentOffset a = getMmaFragmentOffset(MmaOperand::A, reg, e);
    int64_t tile = 2 * kc + a.col / 8;
    for (int64_t i = 0; i < 4; ++i) {
      FragmentOffset c = getMmaFragmentOffset(MmaOperand::C, i / 2, i % 2);
      if (c.row == a.row && c.col == a.col % 8)
        return tiles[tile][i];
    }
    llvm_unreachable("an A element with no accumulator in the same lane");
  };
  std::array<Value, 4> regs;
  for (int64_t reg = 0; reg < 4; ++reg)
    regs[reg] = packPair(elementAt(reg, 0), elementAt(reg, 1));
  return regs;
}

std::array<Value, 4>
MmaKernelBuilder::loadAFragment(Value tile, ValueRange prefix,
                                function_ref<Value(int64_t)> rowAt,
                                int64_t kc) {
  std::array<Value, 4> fragment;
  for (int64_t reg = 0; reg < 4; ++reg) {
    FragmentOffset at = getMmaFragmentOffset(MmaOperand::A, reg, 0);
    SmallVector<Value> indices(prefix);
    indices.push_back(rowAt(at.row));
    indices.push_back(add(mul(t, 2), kc * 16 + at.col));
    fragment[reg] = loadPair(tile, indices);
  }
  return fragment;
}

std::array<Value, 2> MmaKernelBuilder::loadTransposedB(Value tile, Value n,
                                                       int64_t kc) {
  // B[k][n] = Y[n][k]: a register's two k are adjacent in a row of Y.
  std::array<Value, 2> regs;
  for (int64_t reg = 0; reg < 2; ++reg) {
    FragmentOffset at = getMmaFragmentOffset(MmaOperand::B, reg, 0);
    regs[reg] = loadPair(tile, {n, add(mul(t, 2), kc * 16 + at.row)});
  }
  return regs;
}

std::array<Value, 2> MmaKernelBuilder::loadB(Value tile, Value col,
                                             int64_t kc) {
  // B[k][n] = Y[k][n]: a register's two k are two rows of Y.
  std::array<Value, 2> regs;
  for (int64_t reg = 0; reg < 2; ++reg) {
    FragmentOffset at = getMmaFragmentOffset(MmaOperand::B, reg, 0);
    regs[reg] = loadColumnPair(tile, add(mul(t, 2), kc * 16 + at.row), col);
  }
  return regs;
}

void MmaKernelBuilder::accumulateTransposed(
    MutableArrayRef<Accumulators> c, int64_t kSlices,
    function_ref<std::array<Value, 4>(int64_t)> x, Value tile) {
  for (int64_t kc = 0; kc < kSlices; ++kc) {
    std::array<Value, 4> aRegs = x(kc);
    for (auto [nt, tileAcc] : llvm::enumerate(c))
      tileAcc = mma(aRegs, loadTransposedB(tile, add(g, int64_t(nt) * 8), kc),
                    tileAcc);
  }
}

void MmaKernelBuilder::accumulateFromAccumulators(
    MutableArrayRef<Accumulators> c, ArrayRef<Accumulators> p, Value tile) {
  for (int64_t kc = 0; kc < int64_t(p.size()) / 2; ++kc) {
    std::array<Value, 4> aRegs = accumulatorsAsA(p, kc);
    for (auto [dt, tileAcc] : llvm::enumerate(c))
      tileAcc = mma(aRegs, loadB(tile, add(g, int64_t(dt) * 8), kc), tileAcc);
  }
}

Value MmaKernelBuilder::copyRows(Value src, Value head, Value firstRow,
                                 Value rowCount, Value dst, int64_t rows,
                                 int64_t dim) {
  // 16-byte cp.async per thread and round; rows past `rowCount` are
  // zero-filled (no byte is read: the source row is clamped only to stay in
  // bounds).
  Value lastRow = arith::SubIOp::create(b, loc, rowCount, index(1));
  Value eight = index(8), zero = index(0);
  SmallVector<Value> tokens;
  int64_t chunksPerRow = dim / 8;
  int64_t chunks = rows * chunksPerRow;
  auto copyChunk = [&](Value chunk) {
    Value row = arith::DivUIOp::create(b, loc, chunk, index(chunksPerRow));
    Value col =
        mul(arith::RemUIOp::create(b, loc, chunk, index(chunksPerRow)), 8);
    Value srcRow = add(firstRow, row);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         srcRow, rowCount);
    Value count = arith::SelectOp::create(b, loc, inside, eight, zero);
    return nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        ValueRange{row, col}, src,
        ValueRange{batch, head, minIndex(srcRow, lastRow), col},
        b.getIndexAttr(8), count, /*bypassL1=*/b.getUnitAttr());
  };
  for (int64_t r = 0; r * threads < chunks; ++r) {
    Value chunk = add(tid, r * threads);
    if ((r + 1) * threads <= chunks) {
      tokens.push_back(copyChunk(chunk));
      continue;
    }
    // A last, partial round: only the threads that have a chunk copy.
    // (Giving the others a padding column to zero-fill raced: with more
    // spare threads than rows, two of them wrote the same 16 bytes;
    // compute-sanitizer racecheck on an H200, D = 80.) The copy's token
    // stays inside the branch, but it still belongs to the group: a commit
    // groups every cp.async the thread issued before it.
    Value real = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, chunk,
                                       index(chunks));
    auto branch = scf::IfOp::create(b, loc, real, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    copyChunk(chunk);
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

void MmaKernelBuilder::waitGroups(Value group, int64_t pending) {
  nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(pending));
  gpu::BarrierOp::create(b, loc);
}

Value MmaKernelBuilder::dynamicSharedMemory() {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
}

Value MmaKernelBuilder::sharedTile(Value shared, int64_t rows, int64_t dim,
                                   int64_t byteOffset) {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get({rows, dim + 8}, element,
                              MemRefLayoutAttrInterface(), workgroup);
  return memref::ViewOp::create(b, loc, type, shared, index(byteOffset),
                                ValueRange{});
}
