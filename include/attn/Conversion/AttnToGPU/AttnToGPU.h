//===- AttnToGPU.h - attn.sdpa to a tensor-core GPU kernel ------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
#define ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {
class SdpaOp;

#define GEN_PASS_DECL_ATTNLOWERTOGPU
#define GEN_PASS_DECL_ATTNGPUHOSTMEMORY
#define GEN_PASS_DECL_ATTNGPUTILEPARALLELLOOPS
#define GEN_PASS_DECL_ATTNGPUEXPANDINDEXMATH
#include "attn/Conversion/Passes.h.inc"

/// Rows of queries one warp owns (the M of `mma.sync.m16n8k16`).
constexpr int64_t kGpuRowsPerWarp = 16;

/// The tile sizes the flash kernel uses for `op`, or failure with the
/// reason (`why`) when the kernel does not apply: element types other than
/// f16/bf16, a head dimension that is dynamic or not a multiple of 16 (or
/// larger than 256), a block-sparse layout or block classes.
struct GpuFlashConfig {
  int64_t warps = 4;
  int64_t kvTile = 64;
  int64_t headDim = 0, valueDim = 0;
  int64_t getQueryTile() const { return warps * kGpuRowsPerWarp; }
  int64_t getThreads() const { return warps * 32; }
  /// Bytes of the K and V tiles in shared memory (rows padded by 8
  /// elements so that the fragment loads of a warp hit 32 distinct banks).
  int64_t getSharedMemoryBytes() const {
    return kvTile * (headDim + 8) * 2 + kvTile * (valueDim + 8) * 2;
  }
};
FailureOr<GpuFlashConfig> getGpuFlashConfig(SdpaOp op, int64_t kvTile,
                                            std::string &why);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_ATTNTOGPU_H
