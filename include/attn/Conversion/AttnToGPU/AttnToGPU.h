//===- AttnToGPU.h - attn.sdpa to a tensor-core GPU kernel ------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
#define ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {
class SdpaOp;
class SdpaGradOp;

#define GEN_PASS_DECL_ATTNLOWERTOGPU
#define GEN_PASS_DECL_ATTNGPUHOSTMEMORY
#define GEN_PASS_DECL_ATTNGPUTILEPARALLELLOOPS
#define GEN_PASS_DECL_ATTNGPUEXPANDINDEXMATH
#include "attn/Conversion/Passes.h.inc"

/// Rows of queries one warp owns (the M of `mma.sync.m16n8k16`).
constexpr int64_t kGpuRowsPerWarp = 16;

/// The operands of `mma.sync.m16n8k16`: A (16 x 16, M x K), B (16 x 8,
/// K x N), C and D (16 x 8, M x N).
enum class MmaOperand { A, B, C };

/// Where element `element` (0 or 1) of register `reg` of a lane's fragment
/// sits, as offsets from the lane's base coordinates: with g = lane / 4 and
/// t = lane % 4, A and C hold [g + row][2t + col] and B holds
/// [2t + row][g] (k, n). Registers: 4 for A, 2 for B, 2 for C (f32 pairs).
/// The flash kernel derives every fragment address and the reuse of the
/// score accumulators as P V's A operand from this table;
/// test/Conversion/AttnToGPU/mma-layout.test checks it against upstream
/// MLIR's lane/value maps (NVGPU/Utils/MMAUtils.h).
struct FragmentOffset {
  int64_t row, col;
};
FragmentOffset getMmaFragmentOffset(MmaOperand operand, int64_t reg,
                                    int64_t element);

/// The tile sizes the flash kernel uses for `op`, or failure with the
/// reason (`why`) when the kernel does not apply: element types other than
/// f16/bf16, a head dimension that is dynamic or not a multiple of 16 (or
/// larger than 256), a block-sparse layout or block classes.
struct GpuFlashConfig {
  /// Warps of a block; each owns kGpuRowsPerWarp query rows.
  static constexpr int64_t kWarps = 4;
  int64_t kvTile = 64;
  int64_t headDim = 0, valueDim = 0;
  /// Q's fragments are read from shared memory, not kept in registers
  /// (wide heads).
  bool queryInShared = false;
  int64_t getQueryTile() const { return kWarps * kGpuRowsPerWarp; }
  int64_t getThreads() const { return kWarps * 32; }
  /// Bytes of the K and V tiles (and the Q tile when queryInShared) in
  /// shared memory; rows are padded by 8 elements so that the fragment
  /// loads of a warp hit 32 distinct banks.
  int64_t getSharedMemoryBytes() const {
    return kvTile * (headDim + 8) * 2 + kvTile * (valueDim + 8) * 2 +
           (queryInShared ? getQueryTile() * (headDim + 8) * 2 : 0);
  }
};
FailureOr<GpuFlashConfig> getGpuFlashConfig(SdpaOp op, int64_t kvTile,
                                            std::string &why);

/// The tile sizes of the two backward kernels of `op` (FlashGradKernels.cpp),
/// or failure with the reason: those of the forward kernel, and head
/// dimensions past 128 (the dK/dV accumulators and the operand fragments
/// would not fit the registers).
struct GpuFlashGradConfig {
  static constexpr int64_t kWarps = 4;
  int64_t headDim = 0, valueDim = 0;
  /// Keys per step of the dQ kernel, whose block owns 64 query rows.
  int64_t kvTile = 32;
  /// Queries per step of the dK/dV kernel, whose block owns 64 keys.
  int64_t queryStep = 32;
  /// Heads past 64: the dK/dV kernel reads its K and V fragments from
  /// shared memory instead of keeping them in registers, and sweeps the
  /// queries twice (dV, then dK).
  bool keysInShared = false;
  int64_t getRowTile() const { return kWarps * kGpuRowsPerWarp; }
  int64_t getThreads() const { return kWarps * 32; }
  /// Shared memory of the dQ kernel (K and V tiles) and of the dK/dV kernel
  /// (Q and dO tiles, and the block's K and V with keysInShared), rows
  /// padded by 8 elements as in the forward.
  int64_t getQueryKernelSharedBytes() const {
    return kvTile * (headDim + valueDim + 16) * 2;
  }
  int64_t getKeyKernelSharedBytes() const {
    return queryStep * (headDim + valueDim + 16) * 2 +
           (keysInShared ? getRowTile() * (headDim + valueDim + 16) * 2 : 0);
  }
};
FailureOr<GpuFlashGradConfig> getGpuFlashGradConfig(SdpaGradOp op,
                                                    std::string &why);

/// Emits the two backward kernels of `op` before it (dQ with rowsum(dO O),
/// then dK and dV) and returns the dQ, dK and dV tensors.
SmallVector<Value> buildFlashGradKernels(SdpaGradOp op, OpBuilder &b,
                                         const GpuFlashGradConfig &config);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
