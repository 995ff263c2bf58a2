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

/// Registers every named attn pipeline with the global pass registry, so
/// attn-opt and the other drivers run exactly the same passes.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
