//===- MmaKernelBuilder.h - pieces of the tensor-core kernels ---*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What the flash forward kernel (AttnToGPU.cpp) and the two backward kernels
// (FlashGradKernels.cpp) build the same way inside a `gpu.launch`: operand
// registers of `mma.sync.m16n8k16` loaded from global or shared memory,
// accumulator fragments reused as A operands, the MMA itself, row
// reductions across the four lanes of a row, `exp2` and the cp.async copy of
// a tile of rows into shared memory. Fragment coordinates come from
// getMmaFragmentOffset (AttnToGPU.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_MMAKERNELBUILDER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_MMAKERNELBUILDER_H

#include "attn/Conversion/AttnToGPU/AttnToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir {
namespace attn {

/// Whether head sizes D and Dv suit a tensor-core kernel: static multiples
/// of 16 (the k of an MMA), at most `max`. Otherwise writes the reason to
/// `why` ("D = 72 (<needs> a static multiple of 16, at most 256)").
LogicalResult checkMmaHeadDims(int64_t headDim, int64_t valueDim, int64_t max,
                               StringRef needs, llvm::raw_ostream &why);

/// A lane's four accumulators of one 16 x 8 C tile: rows g (0, 1) and g + 8
/// (2, 3), columns 2t and 2t + 1 each.
using Accumulators = std::array<Value, 4>;

class MmaKernelBuilder {
protected:
  MmaKernelBuilder(OpBuilder &b, Location loc, Type element, int64_t threads)
      : b(b), loc(loc), element(element), f32(b.getF32Type()),
        threads(threads) {}

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32Const(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, index(y));
  }
  Value minIndex(Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  /// `tensor` as a read-only memref for the kernel to read.
  Value toBuffer(Value tensor);

  /// Sets `warp`, `g` and `t` from the thread id `tid`.
  void setLaneCoordinates(Value threadId);

  /// A vector<2 x element> as the register type nvvm.mma.sync takes: f16
  /// pairs as they are, bf16 pairs as i32.
  Value asRegister(Value pair);
  /// Two consecutive elements of `memref` at `indices` (the last one even)
  /// as a vector<2 x element>: one 32-bit load.
  Value loadVectorPair(Value memref, ValueRange indices);
  /// The same as an mma operand register.
  Value loadPair(Value memref, ValueRange indices) {
    return asRegister(loadVectorPair(memref, indices));
  }
  /// Elements `x`, `y` (f32) as one operand register of the element type.
  Value packPair(Value x, Value y);
  /// The register of elements [k][col] and [k + 1][col] of a row-major
  /// tile (a B operand whose k runs down the tile's rows): two loads.
  Value loadColumnPair(Value tile, Value k, Value col);
  /// C += A B on one 16 x 8 x 16 tile.
  Accumulators mma(ArrayRef<Value> a, ArrayRef<Value> bRegs, ArrayRef<Value> c);
  /// Combines `x` across the four lanes of a row.
  Value rowReduce(Value x, bool isMax);
  /// exp2(x - m) as ex2.approx.ftz: math.exp2 becomes a call to libdevice's
  /// __nv_exp2f, which ptxas does not inline; a softmax term small enough
  /// to be flushed to zero does not matter.
  Value exp2Minus(Value x, Value m);
  /// log2(x) as lg2.approx (libdevice's log2f would be a call ptxas cannot
  /// inline); log2(0) = -inf.
  Value log2(Value x);
  /// The A fragment over columns [16 kc, 16 kc + 16) of a 16-row product
  /// held as C tiles of 8 columns (`tiles`), in the element type: a C
  /// element and the A element at the same (row, column) are in the same
  /// lane, so no data moves between threads.
  std::array<Value, 4> accumulatorsAsA(ArrayRef<Accumulators> tiles,
                                       int64_t kc);
  /// The A fragment of columns [16 kc, 16 kc + 16) of a lane's two rows of
  /// a row-major tile (a memref indexed [row, col], or with `prefix`
  /// indices before them): `rowAt(0)` and `rowAt(8)` give the memref rows
  /// of the lane's rows g and g + 8.
  std::array<Value, 4> loadAFragment(Value tile, ValueRange prefix,
                                     function_ref<Value(int64_t)> rowAt,
                                     int64_t kc);
  /// The B fragment (k in [16 kc, 16 kc + 16)) of a product `X Y^T` with Y
  /// stored row-major [n, k], for the lane's column `n` (g + a multiple of
  /// 8): two 32-bit loads.
  std::array<Value, 2> loadTransposedB(Value tile, Value n, int64_t kc);
  /// The B fragment (k in [16 kc, 16 kc + 16)) of a product `X Y` with Y
  /// stored row-major [k, n], for the lane's column `col`.
  std::array<Value, 2> loadB(Value tile, Value col, int64_t kc);

  /// Zero accumulators for `tiles` C tiles.
  SmallVector<Accumulators> zeros(int64_t tiles) {
    Value zero = f32Const(0);
    return SmallVector<Accumulators>(tiles,
                                     Accumulators{zero, zero, zero, zero});
  }
  /// C += X Y^T over k in [0, 16 kSlices): `x(kc)` is X's A fragment of
  /// slice kc, Y is row-major [n, k] in `tile`, one C tile per 8 columns n.
  void accumulateTransposed(MutableArrayRef<Accumulators> c, int64_t kSlices,
                            function_ref<std::array<Value, 4>(int64_t)> x,
                            Value tile);
  /// C += P Y with P's C tiles as its A fragments (k over P's columns, 16
  /// per two tiles), Y row-major [k, n] in `tile`, one C tile per 8 n.
  void accumulateFromAccumulators(MutableArrayRef<Accumulators> c,
                                  ArrayRef<Accumulators> p, Value tile);

  /// Copies `rows` rows of `dim` elements of `src`[batch, head], from
  /// `firstRow` on, into the shared tile `dst` with cp.async; rows at or
  /// past `rowCount` are zero-filled. Returns the commit group.
  Value copyRows(Value src, Value head, Value firstRow, Value rowCount,
                 Value dst, int64_t rows, int64_t dim);
  /// Waits until at most `pending` commit groups after `group` are in
  /// flight, then for every warp of the block.
  void waitGroups(Value group, int64_t pending);
  /// A [rows, dim + 8] tile of the element type at `byteOffset` of the
  /// block's dynamic shared memory `shared` (rows padded by 8 elements so
  /// that a warp's fragment loads hit 32 distinct banks).
  Value sharedTile(Value shared, int64_t rows, int64_t dim, int64_t byteOffset);
  /// The block's dynamic shared memory as bytes (aligned to 16 bytes by
  /// the NVVM lowering, as cp.async needs).
  Value dynamicSharedMemory();

  OpBuilder &b;
  Location loc;
  Type element, f32;
  int64_t threads;
  // Kernel-side values: the batch of the block, the thread, its warp and
  // its lane coordinates (g = lane / 4, t = lane % 4).
  Value batch, tid, warp, g, t;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_MMAKERNELBUILDER_H
