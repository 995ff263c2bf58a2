//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace attn {

/// How the CPU pipeline lowers attn.sdpa.
enum class SdpaLowering {
  /// The unfused reference (`attn-lower-to-linalg`): materialises Sq x Skv.
  Reference,
  /// `attn-tile`: a FlashAttention-style loop nest, O(S) memory.
  Tiled,
};

/// Options of `--attn-cpu-pipeline` (and of attnc/attn-run's
/// `--cpu-pipeline=`).
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<SdpaLowering> lowering{
      *this, "lowering",
      llvm::cl::desc("How attn.sdpa is lowered (attn.weights and the "
                     "multihead projections always use the reference)"),
      llvm::cl::init(SdpaLowering::Tiled),
      llvm::cl::values(
          clEnumValN(SdpaLowering::Reference, "reference",
                     "unfused, materialises the Sq x Skv scores"),
          clEnumValN(SdpaLowering::Tiled, "tiled",
                     "attn-tile: online softmax over key/value tiles"))};
  PassOptions::Option<int64_t> qTile{
      *this, "q-tile",
      llvm::cl::desc("Query rows per tile (tiled). 128: each tile streams "
                     "all of K and V once, so larger tiles halve that "
                     "traffic at long S (benchmarks/RESULTS.md)"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> kvTile{
      *this, "kv-tile", llvm::cl::desc("Keys per inner step (tiled)"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Register-block and vectorise the contractions "
                     "(attn-vectorize-tiles); otherwise they are "
                     "scalar loops left to LLVM's loop vectoriser"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> mBlock{
      *this, "m-block",
      llvm::cl::desc("Output rows per register block (vectorize)"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> nBlock{
      *this, "n-block",
      llvm::cl::desc("Output columns per register block (vectorize)"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the tiled lowering's parallel loop on OpenMP "
                     "threads (libomp; OMP_NUM_THREADS sets how many)"),
      llvm::cl::init(true)};
};

/// Appends the reference pipeline: multihead decomposition, the unfused
/// attn-to-linalg lowering and cleanup. Output is linalg/tensor/arith/math.
void buildReferencePipeline(OpPassManager &pm);

/// Appends the first half of the CPU pipeline: attn lowered to linalg on
/// tensors (as `options` say), bufferized, public functions given the
/// out-parameter ABI (docs/CpuABI.md), deallocations inserted. Output is
/// linalg/scf/memref.
void buildCpuBufferizationPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options);

/// Appends the second half of the CPU pipeline: linalg/scf/memref/arith/math
/// to the LLVM dialect (parallel loops to OpenMP when `options.threads`),
/// with a `_mlir_ciface_` C wrapper for every function.
void buildCpuLowerToLLVMPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options);

/// Appends the whole CPU pipeline (both halves above): what
/// `attn-opt --attn-cpu-pipeline`, `attnc --target=cpu` and `attn-run` run.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers every named attn pipeline with the global pass registry, so
/// attn-opt and the other drivers run exactly the same passes.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
