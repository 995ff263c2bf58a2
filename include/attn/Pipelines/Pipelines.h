//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Target/Cpu/CpuTargetModel.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

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
  PassOptions::Option<bool> raiseAttention{
      *this, "raise-attention",
      llvm::cl::desc("Rewrite attention written in linalg (matmuls around "
                     "linalg.softmax) into attn.sdpa first "
                     "(attn-raise-attention; tiled)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> explain{
      *this, "explain",
      llvm::cl::desc("Remarks from the passes that decide: what "
                     "attn-raise-attention raised and why not, and the "
                     "band attn-sparsify found for each op"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> qTile{
      *this, "q-tile",
      llvm::cl::desc("Query rows per tile (tiled; 0: from the target's L2, "
                     "see chooseCpuKernelConfig)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> kvTile{
      *this, "kv-tile",
      llvm::cl::desc("Keys per inner step (tiled; 0: from the target)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> shortKvTile{
      *this, "short-kv-tile",
      llvm::cl::desc("Keys per step of the second tiling of attention whose "
                     "Skv is dynamic, for calls with few keys (tiled; "
                     "attn-tile short-kv-tile; 0: from the target, "
                     "negative: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> gradKeyChunks{
      *this, "grad-key-chunks",
      llvm::cl::desc("Key chunks per (batch, key/value head) of the tiled "
                     "backward's parallel loop (0: enough for 16 "
                     "iterations)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> gradHeadSums{
      *this, "grad-head-sums",
      llvm::cl::desc("In the tiled backward's GQA groups, each query head "
                     "sums its dK and dV apart, then the heads (attn-tile "
                     "grad-head-sums; false: one running sum per group)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> decodeKeyChunks{
      *this, "decode-key-chunks",
      llvm::cl::desc("Key chunks per (batch, head) of a tiled forward "
                     "with one query tile per head (decode; 0: enough for "
                     "16 iterations, 1: no split)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Register-block and vectorise the contractions "
                     "(attn-vectorize-tiles); otherwise they are "
                     "scalar loops left to LLVM's loop vectoriser"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> mBlock{
      *this, "m-block",
      llvm::cl::desc("Output rows per register block (vectorize; 0: what "
                     "fits the target's register file)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> nBlock{
      *this, "n-block",
      llvm::cl::desc("Output columns per register block (vectorize; 0: "
                     "from the target)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rowElements{
      *this, "row-elements",
      llvm::cl::desc("Longest row the row ops vectorise whole (vectorize; "
                     "0: 16 of the target's vector registers)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionDepth{
      *this, "contraction-depth",
      llvm::cl::desc("Steps of K per cache block of a contraction outside "
                     "the attention tiles (projections; vectorize; 0: from "
                     "the target's L1)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionColumns{
      *this, "contraction-columns",
      llvm::cl::desc("Output columns per cache block of such a contraction "
                     "(0: from the target's L2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionMBlock{
      *this, "contraction-m-block",
      llvm::cl::desc("Output rows per register block of such a contraction "
                     "(0: what fits the target's register file)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionNBlock{
      *this, "contraction-n-block",
      llvm::cl::desc("Output columns per register block of such a "
                     "contraction, and the width of the weight panels it "
                     "reads (0: two of the target's vectors)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionConflictStride{
      *this, "contraction-conflict-stride",
      llvm::cl::desc("Bytes: a row block of such a contraction copies its "
                     "left operand's rows to a stride one cache line longer "
                     "where their stride is a multiple of this (rows that "
                     "share L1 sets; 0: never; -1: from the target)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> contractionPrefetch{
      *this, "contraction-prefetch",
      llvm::cl::desc("Bytes of weight rows ahead that such a contraction's "
                     "register blocks prefetch (attn-prefetch-streams; 0: "
                     "none; -1: from the target)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> keyTilePrefetch{
      *this, "key-tile-prefetch",
      llvm::cl::desc("The tiled attention's key loop prefetches the next "
                     "key and value tiles into the L2 while its register "
                     "blocks read the current ones (attn-prefetch-streams "
                     "key-tiles)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 attention contracts bf16 pairs with the "
                     "target's dot-product instructions (AVX512-BF16 "
                     "vdpbf16ps; tiled, vectorize). Unset: where the "
                     "target model finds them faster than widening (not on "
                     "cores with AMX-BF16); true: wherever the target has "
                     "them; false: widened to f32 on every target"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> exp2Scalef{
      *this, "exp2-scalef",
      llvm::cl::desc("f32 exp2 of vector rows with AVX-512's vrndscaleps "
                     "and vscalefps (attn-polynomial-math scalef). Unset: "
                     "where the target has avx512f; false: the portable "
                     "form everywhere"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> valuePanels{
      *this, "value-panels",
      llvm::cl::desc("Pack V in panels of the register block's width where "
                     "an op's Dv makes at least 4 of them (tiled, "
                     "vectorize: attn-tile value-panel); false: V read "
                     "where it is"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("LLVM triple the sizes are chosen for (attn-opt; the "
                     "drivers take --mtriple). With target-cpu and "
                     "target-features empty too: the generic model"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("CPU the sizes are chosen for, e.g. znver3, "
                     "sapphirerapids, neoverse-v2, or host (attn-opt; the "
                     "drivers take --mcpu)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("LLVM features of that CPU, e.g. -avx512f (attn-opt; "
                     "the drivers take --mattr)"),
      llvm::cl::init("")};

  /// Whether target-triple, target-cpu or target-features is given.
  bool namesTarget() const {
    return !targetTriple.empty() || !targetCpu.empty() ||
           !targetFeatures.empty();
  }

  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the tiled lowering's parallel loop on OpenMP "
                     "threads (libomp; OMP_NUM_THREADS sets how many)"),
      llvm::cl::init(true)};
};

/// Appends the reference pipeline: multihead decomposition, the unfused
/// attn-to-linalg lowering and cleanup. Output is linalg/tensor/arith/math.
void buildReferencePipeline(OpPassManager &pm);

/// The tile and register-block sizes the CPU pipeline uses for `target`:
/// those `options` give (non-zero), the rest chooseCpuKernelConfig's; the
/// reasons say which are explicit.
CpuKernelConfig getCpuKernelConfig(const CpuPipelineOptions &options,
                                   const CpuTargetModel &target);

/// The target model of `options`' target-* fields: the generic model when
/// all are empty, the host's for target-cpu=host.
llvm::Expected<CpuTargetModel>
getCpuPipelineTarget(const CpuPipelineOptions &options);

/// Appends the first half of the CPU pipeline: attn lowered to linalg on
/// tensors (as `options` say, sizes from `target` where they say 0),
/// bufferized, public functions given the out-parameter ABI
/// (docs/CpuABI.md), deallocations inserted. Output is linalg/scf/memref.
void buildCpuBufferizationPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options,
                                   const CpuTargetModel &target);

/// Appends the second half of the CPU pipeline: linalg/scf/memref/arith/math
/// to the LLVM dialect (parallel loops to OpenMP when `options.threads`),
/// with a `_mlir_ciface_` C wrapper for every function.
void buildCpuLowerToLLVMPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options);

/// Appends the whole CPU pipeline (both halves above) for `target`: what
/// `attn-opt --attn-cpu-pipeline`, `attnc --target=cpu` and `attn-run` run.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options,
                      const CpuTargetModel &target);

/// Options of `--attn-cuda-pipeline` (and of attnc/attn-run's
/// `--cuda-pipeline=` and `--gpu-arch=`).
struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU architecture: sm_80, sm_86, sm_89, sm_90 or sm_90a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary embeds: bin (a cubin from "
                     "ptxas), isa (PTX the driver compiles at load time), "
                     "fatbin, llvm or offload"),
      llvm::cl::init("bin")};
  PassOptions::Option<int64_t> kvTile{
      *this, "kv-tile",
      llvm::cl::desc("Keys per shared-memory tile of the flash kernel (0: "
                     "64, or 32 past D = 128)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> threadsPerBlock{
      *this, "threads-per-block",
      llvm::cl::desc("Threads per block of the kernels that linalg ops "
                     "(reference lowering, projections) are mapped to"),
      llvm::cl::init(128)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit whose ptxas and libdevice compile the "
                     "kernels (default: $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, "
                     "else the toolkit the build found)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Extra options for ptxas (e.g. \"-v\")"),
      llvm::cl::init("")};
};

/// The CUDA toolkit the CUDA pipeline compiles kernels with: $CUDA_HOME,
/// $CUDA_ROOT or $CUDA_PATH when set, else the one the build found.
std::string getCudaToolkitPath();

/// Appends the first half of the CUDA pipeline: attn lowered (the flash
/// kernel where it applies, the reference lowering elsewhere), bufferized
/// with the out-parameter ABI, every linalg op mapped to a kernel, host
/// buffers in device memory. Output: host funcs with gpu.launch ops.
void buildCudaKernelPipeline(OpPassManager &pm,
                             const CudaPipelineOptions &options);

/// Appends the whole CUDA pipeline: the above, then kernels outlined and
/// compiled to the NVVM target's binary (`options.format`), host code to the
/// LLVM dialect with `_mlir_ciface_` wrappers calling the project's CUDA
/// runtime (lib/Runtime, the `mgpu*` entry points). What
/// `attn-opt --attn-cuda-pipeline` and `attnc --target=cuda` run.
void buildCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options);

/// Registers every named attn pipeline with the global pass registry, so
/// attn-opt and the other drivers run exactly the same passes.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
