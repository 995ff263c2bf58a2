//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;

namespace attn {

/// Appends the reference pipeline: multihead decomposition, the unfused
/// attn-to-linalg lowering and cleanup. Output is linalg/tensor/arith/math.
void buildReferencePipeline(OpPassManager &pm);

/// Appends the first half of the CPU pipeline: attn lowered to linalg on
/// tensors, bufferized, public functions given the out-parameter ABI
/// (docs/CpuABI.md), deallocations inserted. Output is linalg/memref.
void buildCpuBufferizationPipeline(OpPassManager &pm);

/// Appends the second half of the CPU pipeline: linalg/memref/arith/math to
/// the LLVM dialect, with a `_mlir_ciface_` C wrapper for every function.
void buildCpuLowerToLLVMPipeline(OpPassManager &pm);

/// Appends the whole CPU pipeline (both halves above): what
/// `attn-opt --attn-cpu-pipeline`, `attnc --target=cpu` and `attn-run` run.
void buildCpuPipeline(OpPassManager &pm);

/// Registers every named attn pipeline with the global pass registry, so
/// attn-opt and the other drivers run exactly the same passes.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
