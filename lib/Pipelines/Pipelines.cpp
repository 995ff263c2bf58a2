//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include <cstdlib>

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Runtime/CpuAllocator.h"
#include "attn/Target/Cpu/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

/// Query rows per fused block of an attn.weights under the tiled lowering:
/// a block's f32 scores (64 x Skv) stay in the L2 for Skv up to thousands.
constexpr int64_t kWeightsRows = 64;

/// Rows of a contraction outside attention tiles per parallel iteration
/// (attn-parallelize-contractions). A power of two, not a multiple of the
/// register block (5 x 12 + 4 rows on AVX-512): the rows of a product are
/// most often a multiple of 64, and blocks of 60 leave a small last block
/// (a parallel iteration with little work, or a row count known only at
/// run time).
constexpr int64_t kProjectionRows = 64;

/// The most rows per parallel iteration of a long product (up to 4x fewer
/// passes over its weight; benchmarks/RESULTS.md, session 26).
constexpr int64_t kMaxProjectionRows = 256;

/// attn ops to linalg/scf on tensors: attention written in linalg raised
/// into attn.sdpa if `raise`, the softmaxes left decomposed, multihead
/// decomposition, `tile` (block classification, then attn-tile on
/// attn.sdpa) if given, the reference lowering of what is left, weights
/// read from panels of `panel` columns if given, then cleanup; with
/// `explain`, remarks from the passes that decide (raising, block
/// classification).
static void addAttentionLowering(OpPassManager &pm,
                                 std::optional<AttnTileOptions> tile,
                                 std::optional<int64_t> panel = std::nullopt,
                                 bool raise = false, bool explain = false) {
  // The reference pipeline (--check's float64 build) computes attention
  // written in linalg as written, so that the raised form is checked
  // against it.
  if (raise)
    pm.addPass(createAttnRaiseAttention(AttnRaiseAttentionOptions{explain}));
  pm.addPass(createAttnDecomposeAggregates());
  pm.addPass(createAttnDecomposeMultihead());
  if (tile) {
    // The query heads of a GQA group with few rows read K and V together.
    pm.addPass(createAttnFoldQueryGroups(
        AttnFoldQueryGroupsOptions{/*maxRows=*/tile->qTile}));
    pm.addPass(createAttnSparsify(AttnSparsifyOptions{
        tile->qTile, tile->kvTile, tile->smallHeadKvTile, explain}));
    pm.addPass(createAttnTile(*tile));
  }
  // attn.weights keeps the reference lowering; with the tiled one its
  // steps are fused per block of query rows. Packed sequences are copied
  // row by row in the tiled pipeline and gathered element by element in
  // the reference one (which --check's float64 build is), so that each
  // checks the other.
  pm.addPass(createAttnLowerToLinalg(
      AttnLowerToLinalgOptions{/*fusionMarks=*/tile.has_value(),
                               /*rowCopies=*/tile.has_value()}));
  if (tile)
    pm.addPass(createAttnFuseWeights(AttnFuseWeightsOptions{kWeightsRows}));
  if (panel)
    pm.addPass(createAttnPackWeights(AttnPackWeightsOptions{*panel}));
  pm.addPass(createAttnLowerPacks());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Inputs read-only, one-shot bufferization with identity layouts at
/// function boundaries (the C ABI passes plain contiguous buffers), and
/// results as caller-allocated out parameters (docs/CpuABI.md; a result the
/// function allocates, static or dynamic, is computed in place in the
/// caller's buffer: a dynamic one used to be a scratch buffer allocated and
/// copied on every call). Both targets share this ABI. With
/// `eliminateEmptyTensors`, an op that fills a fresh tensor later inserted
/// into another (an attention's normalised output tile, inserted into the
/// result) writes into that tensor's slice instead: no copy of the tile.
static void addBufferizationWithOutParams(OpPassManager &pm,
                                          bool allowReturnAllocsFromLoops,
                                          bool eliminateEmptyTensors = false) {
  pm.addPass(createAttnReadOnlyInputs());
  if (eliminateEmptyTensors)
    pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.allowReturnAllocsFromLoops = allowReturnAllocsFromLoops;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Branches yielding differently laid out buffers keep the strides they
  // share (contiguous rows), not the fully dynamic layout bufferization
  // gives them.
  pm.addPass(createAttnRefineBranchLayouts());
  // A result returned through reshapes of its buffer (a packed product's
  // [.., N / panel, panel] view collapsed back) is that buffer once they
  // fold: then it is computed in the caller's, not copied there.
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.hoistDynamicAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void attn::buildReferencePipeline(OpPassManager &pm) {
  pm.addPass(createAttnVerifyInput());
  addAttentionLowering(pm, /*tile=*/std::nullopt);
}

CpuKernelConfig attn::getCpuKernelConfig(const CpuPipelineOptions &options,
                                         const CpuTargetModel &target) {
  CpuKernelConfig config = chooseCpuKernelConfig(target);
  llvm::raw_string_ostream why(config.reasons);
  auto override = [&](int64_t &size, int64_t given, StringRef name) {
    if (given == 0)
      return;
    size = given;
    why << "  " << name << "=" << given << ": given explicitly\n";
  };
  override(config.qTile, options.qTile, "q-tile");
  override(config.kvTile, options.kvTile, "kv-tile");
  // A key tile given explicitly is every op's (what the autotuner times).
  if (options.kvTile || options.qTile)
    config.smallHeadKvTile = 0;
  override(config.shortKvTile, options.shortKvTile, "short-kv-tile");
  config.shortKvTile = std::max<int64_t>(config.shortKvTile, 0);
  override(config.mBlock, options.mBlock, "m-block");
  override(config.nBlock, options.nBlock, "n-block");
  override(config.maxRowElements, options.rowElements, "row-elements");
  override(config.contractionDepth, options.contractionDepth,
           "contraction-depth");
  override(config.contractionColumns, options.contractionColumns,
           "contraction-columns");
  override(config.contractionMBlock, options.contractionMBlock,
           "contraction-m-block");
  override(config.contractionNBlock, options.contractionNBlock,
           "contraction-n-block");
  // Options for which 0 is a choice (none); -1 leaves the target's.
  auto overrideOrNone = [&](int64_t &value, int64_t given, StringRef name) {
    if (given < 0 || given == value)
      return;
    value = given;
    why << "  " << name << "=" << given << ": given explicitly\n";
  };
  overrideOrNone(config.contractionConflictStride,
                 options.contractionConflictStride,
                 "contraction-conflict-stride");
  overrideOrNone(config.contractionPrefetch, options.contractionPrefetch,
                 "contraction-prefetch");
  config.maxMBlock = config.mBlock;
  while (!options.mBlock &&
         CpuKernelConfig::getLiveRegisters(config.maxMBlock + 1, config.nBlock,
                                           target) <= target.vectorRegisters)
    ++config.maxMBlock;
  if (config.maxMBlock > config.mBlock)
    why << "  max-m-block: " << config.maxMBlock
        << ": rows a contraction of a static row count may use per block "
           "instead ("
        << config.maxMBlock << " x " << config.nBlock
        << " fits the registers)\n";
  // A flag given explicitly: false everywhere, true wherever the target
  // has the instructions (also where the model would not use them).
  auto overrideFlag = [&](bool &flag, const decltype(options.bf16Dot) &given,
                          bool available, StringRef name) {
    if (!given.hasValue())
      return;
    bool chosen = given && available;
    if (chosen != flag)
      why << "  " << name << "=" << (chosen ? "true" : "false")
          << ": given explicitly\n";
    flag = chosen;
  };
  overrideFlag(config.bf16Dot, options.bf16Dot, target.avx512Bf16, "bf16-dot");
  overrideFlag(config.exp2Scalef, options.exp2Scalef, target.avx512f,
               "exp2-scalef");
  return config;
}

llvm::Expected<CpuTargetModel>
attn::getCpuPipelineTarget(const CpuPipelineOptions &options) {
  if (!options.namesTarget())
    return CpuTargetModel::getGeneric();
  CpuTargetOptions target;
  target.triple = options.targetTriple;
  target.cpu = options.targetCpu.getValue();
  if (target.cpu == "host")
    target.cpu.clear();
  target.features = options.targetFeatures;
  return CpuTargetModel::get(target);
}

void attn::buildCpuBufferizationPipeline(OpPassManager &pm,
                                         const CpuPipelineOptions &options,
                                         const CpuTargetModel &target) {
  CpuKernelConfig config = getCpuKernelConfig(options, target);
  pm.addPass(createAttnVerifyInput());
  // The sizes the buffers must agree on, which only the ops on tensors
  // tell; attn-check-abi compares them on every call.
  pm.addPass(createAttnRecordAbiSizes());
  // The attention lowering; everything after it works on any
  // linalg/scf-on-tensors form.
  std::optional<AttnTileOptions> tile;
  if (options.lowering == SdpaLowering::Tiled)
    tile = AttnTileOptions{
        config.qTile,
        config.kvTile,
        config.smallHeadKvTile,
        /*bf16Pairs=*/config.bf16Dot && options.vectorize,
        options.gradKeyChunks,
        options.decodeKeyChunks,
        /*valuePanel=*/options.vectorize && options.valuePanels ? config.nBlock
                                                                : 0,
        config.shortKvTile,
        options.gradHeadSums};
  // Projections read their weights from panels as wide as their register
  // block.
  std::optional<int64_t> panel;
  if (options.vectorize)
    panel = config.contractionNBlock;
  addAttentionLowering(pm, tile, panel,
                       /*raise=*/tile.has_value() && options.raiseAttention,
                       options.explain);
  // Contractions outside the attention's parallel loop (the multihead
  // projections) get a parallel loop of their own, over row blocks blocked
  // for the cache (a serial loop with threads=false: the same blocks, and
  // the same register blocks, on one thread).
  pm.addPass(
      createAttnParallelizeContractions(AttnParallelizeContractionsOptions{
          kProjectionRows, config.contractionColumns, config.contractionDepth,
          kMaxProjectionRows, config.contractionConflictStride}));
  if (options.vectorize)
    pm.addPass(createAttnVectorizeTiles(AttnVectorizeTilesOptions{
        config.mBlock, config.nBlock, config.maxRowElements, config.bf16Dot,
        config.maxMBlock, static_cast<int64_t>(target.getF32Lanes()),
        config.contractionMBlock, config.contractionNBlock}));
  // f32 exp/exp2 become arithmetic, on the vectors attn-vectorize-tiles
  // made of them (math.exp2 vectorises as it is): AVX-512 instructions
  // for whole 512-bit registers where the target has them.
  pm.addPass(createAttnPolynomialMath(
      AttnPolynomialMathOptions{config.exp2Scalef && options.vectorize}));

  // The tiled loop carries (max, sum, acc) tiles whose new values are
  // computed out of place; they may be fresh buffers each iteration.
  // Out parameters come before deallocation so that replaced allocations
  // are not freed and the rest are.
  addBufferizationWithOutParams(pm, /*allowReturnAllocsFromLoops=*/true,
                                /*eliminateEmptyTensors=*/true);
  bufferization::buildBufferDeallocationPipeline(pm);
  // A result computed in place in its destination (a transpose writing a
  // slice of the tensor it is then inserted into) leaves a copy of that
  // slice onto itself, between two subviews CSE makes one value; the
  // canonicalizer then drops the copy (a serial pass over the whole slice
  // otherwise: 1 ms of a 2 ms attention backward).
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Each OpenMP iteration's small tiles on its thread's stack rather than
  // malloc'd and freed (SCF-to-OpenMP scopes an iteration's stack
  // allocations; a sequential loop would not). Under the test suites'
  // ATTN_MLIR_ALLOCATOR_POISON, poisoned like the heap blocks.
  if (options.threads) {
    AttnStackIterationBuffersOptions stack;
    stack.poison = attnCpuAllocatorPoisonRequested();
    pm.addPass(createAttnStackIterationBuffers(stack));
  }
  // The projections' register blocks prefetch the weight rows they will
  // read, attn-tile's key loops the next key and value tiles (and the
  // markers of attn-vectorize-tiles and attn-tile go either way).
  pm.addPass(createAttnPrefetchStreams(AttnPrefetchStreamsOptions{
      config.contractionPrefetch, options.keyTilePrefetch}));
  pm.addPass(createCanonicalizerPass());
}

void attn::buildCpuLowerToLLVMPipeline(OpPassManager &pm,
                                       const CpuPipelineOptions &options) {
  // Entry points check the sizes and strides of the buffers they are
  // given before touching them (attn_abi_error reports a mismatch).
  pm.addPass(createAttnCheckAbi());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // The (batch, head, query tile) loop: OpenMP threads, or sequential.
  if (options.threads)
    pm.addPass(createForallToParallelLoopPass());
  else
    pm.addPass(createForallToForLoopPass());
  // Keeps compiled code free of runtime-library calls (see the pass).
  pm.addPass(createAttnStridedCopyToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Every public function gets its C interface (_mlir_ciface_); requested
  // before parallel loops are outlined, so their private bodies get none.
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  if (options.threads) {
    // Parallel loops through the host's pool where it installs one
    // (attn_set_parallel_for), through OpenMP otherwise.
    pm.addPass(createAttnParallelLoopsToRuntime());
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createAttnOmpDynamicSchedule());
  }
  // Heap buffers through the generic allocation functions, which
  // attn-cpu-allocator-hooks defines (a runtime may replace malloc and
  // free). SCF-to-OpenMP wraps each iteration in memref.alloca_scope,
  // which must become LLVM before SCF-to-CF gives its region several
  // blocks.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // 2-D vector transfers (register blocks) become unrolled 1-D ones.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(1)));
  pm.addPass(createSCFToControlFlowPass());
  // bf16 conversions become integer arithmetic: without it, targets lacking
  // AVX512-BF16 call libgcc's __truncsfbf2, which older toolchains lack.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  // Vector reductions come only from attn-vectorize-tiles' row maxima and
  // row sums, both documented as order-free (docs/Numerics.md): without
  // this, LLVM adds a row one element after another.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  // attn-vectorize-tiles' bf16 dot products (bf16-dot).
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  // Works around LLVM 22's X86 backend (see the pass).
  pm.addPass(createAttnBf16MemoryAsI16());
  pm.addPass(createAttnCpuAllocatorHooks());
}

void attn::buildCpuPipeline(OpPassManager &pm,
                            const CpuPipelineOptions &options,
                            const CpuTargetModel &target) {
  buildCpuBufferizationPipeline(pm, options, target);
  buildCpuLowerToLLVMPipeline(pm, options);
}

void attn::buildCudaKernelPipeline(OpPassManager &pm,
                                   const CudaPipelineOptions &options) {
  pm.addPass(createAttnVerifyInput());
  pm.addPass(createAttnRaiseAttention());
  pm.addPass(createAttnDecomposeAggregates());
  pm.addPass(createAttnDecomposeMultihead());
  pm.addPass(createAttnLowerToGPU(
      AttnLowerToGPUOptions{options.kvTile, /*explain=*/false}));
  pm.addPass(createAttnLowerToLinalg());
  pm.addPass(createAttnLowerPacks());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // No deallocation pipeline: its helpers read pointer tables in host
  // memory; attn-gpu-host-memory frees device buffers instead.
  addBufferizationWithOutParams(pm, /*allowReturnAllocsFromLoops=*/false);
  pm.addPass(createCanonicalizerPass());

  // Copies into strided views (multihead's concatenations) become
  // linalg.copy, so that they get a kernel like any other linalg op.
  pm.addPass(createAttnStridedCopyToLinalg());
  // What is left in linalg (the reference lowering, multihead projections,
  // fills) becomes parallel loops, tiled so that the inner loop maps to
  // the threads of a block and the outer one to the grid.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createAttnGpuTileParallelLoops(
      AttnGpuTileParallelLoopsOptions{options.threadsPerBlock}));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createAttnGpuHostMemory());
  pm.addPass(createCanonicalizerPass());
}

std::string attn::getCudaToolkitPath() {
  for (const char *name : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *value = std::getenv(name); value && *value)
      return value;
  return ATTN_CUDA_TOOLKIT_ROOT;
}

void attn::buildCudaPipeline(OpPassManager &pm,
                             const CudaPipelineOptions &options) {
  buildCudaKernelPipeline(pm, options);

  // Kernels outlined into gpu.modules with the NVVM target; host and device
  // code lowered to the LLVM dialect side by side.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Host-side gpu ops take async tokens (gpu-to-llvm needs them): one
  // stream per function, synchronised before it returns.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnGpuExpandIndexMath());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // PTX ISA 8.0: what sm_90a needs, and what every sm_80+ chip takes from
  // a CUDA 12+ ptxas.
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Device code: NVVM, then one binary per gpu.module.
  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host code: launches become calls into the runtime (mgpu*); ptxas and
  // libdevice come from the toolkit found at build time (or $CUDA_HOME),
  // not from whatever the environment of the caller says.
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit.empty() ? getCudaToolkitPath()
                                               : std::string(options.toolkit);
  binary.cmdOptions = options.ptxasOptions;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-reference-pipeline",
      "Lower attn ops to the unfused reference computation in "
      "linalg/tensor/arith/math: decompose multihead, lower attention, clean "
      "up",
      buildReferencePipeline);
  // Registered by hand rather than with PassPipelineRegistration so that an
  // unknown target-cpu is a pipeline error, not a crash.
  registerPassPipeline(
      "attn-cpu-pipeline",
      "Compile a module of attn ops for the CPU: lower attention with tile "
      "and register-block sizes from the target (target-cpu=..., else the "
      "generic model), bufferize with the out-parameter ABI of "
      "docs/CpuABI.md, lower to the LLVM dialect with C wrappers",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CpuPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        auto target = getCpuPipelineTarget(options);
        if (!target)
          return errorHandler("attn-cpu-pipeline: " +
                              llvm::toString(target.takeError()));
        buildCpuPipeline(pm, options, *target);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(CpuPipelineOptions());
      });
  PassPipelineRegistration<CudaPipelineOptions>(
      "attn-cuda-pipeline",
      "Compile a module of attn ops for NVIDIA GPUs: the tensor-core flash "
      "kernel (or the reference lowering on GPU threads), bufferized with "
      "the out-parameter ABI over device buffers, kernels compiled to a "
      "cubin through ptxas, host code to the LLVM dialect calling the "
      "project's CUDA runtime (docs/CUDA.md)",
      buildCudaPipeline);
}
