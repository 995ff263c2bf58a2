//===- DriverSupport.cpp - what attnc and attn-run share ------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/DriverSupport.h"

#include "attn/InitAllAttn.h"
#include "attn/Runner/Autotune.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "attn/Target/Cuda/CudaCompiler.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

void attn::registerCpuDriverDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllAttnDialects(registry);
  registerCpuTranslations(registry);
  registerCudaTranslations(registry);
}

OwningOpRef<ModuleOp> attn::parseModuleFile(StringRef path,
                                            llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context,
                                            std::string &error) {
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file)
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}

CpuCompileFlags::CpuCompileFlags(cl::OptionCategory &category)
    : cpuPipeline("cpu-pipeline", cl::value_desc("options"),
                  cl::desc("Options of --attn-cpu-pipeline, e.g. "
                           "\"lowering=tiled q-tile=32 m-block=2\" (sizes "
                           "not given come from the target: --print-target)"),
                  cl::cat(category)),
      optLevel("O", cl::Prefix, cl::init(3), cl::ZeroOrMore,
               cl::desc("LLVM optimisation level (-O0 to -O3)"),
               cl::cat(category)),
      mtriple("mtriple", cl::value_desc("triple"),
              cl::desc("Target triple, e.g. aarch64-linux-gnu (default: the "
                       "host's)"),
              cl::cat(category)),
      mcpu("mcpu", cl::value_desc("cpu"),
           cl::desc("CPU to generate code for, e.g. znver3, sapphirerapids, "
                    "neoverse-v2 (default: the host's; generic for another "
                    "triple)"),
           cl::cat(category)),
      mattr("mattr", cl::value_desc("features"),
            cl::desc("CPU features, e.g. +avx512f,-amx-tile (default: the "
                     "host's, or the CPU's)"),
            cl::cat(category)),
      printTarget("print-target",
                  cl::desc("Print the target model and the tile and "
                           "register-block sizes chosen from it (stderr)"),
                  cl::cat(category)),
      autotune("autotune",
               cl::desc("Time a few candidate tile and register-block "
                        "sizes on this machine on the real shapes and "
                        "compile with the fastest, kept in the tuning "
                        "cache for later compiles (sizes given in "
                        "--cpu-pipeline stay fixed)"),
               cl::cat(category)),
      tuningCache("tuning-cache", cl::value_desc("file"),
                  cl::desc("The tuning cache (default: tuning.json in "
                           "$ATTN_MLIR_CACHE_DIR or ~/.cache/attn_mlir); "
                           "without --autotune, sizes found there are used "
                           "and nothing is timed"),
                  cl::cat(category)) {}

llvm::Expected<CpuCompileSettings> CpuCompileFlags::parse() const {
  if (optLevel > 3)
    return llvm::createStringError("-O" + Twine(optLevel.getValue()) +
                                   " is not one of -O0, -O1, -O2, -O3");
  CpuCompileSettings settings;
  settings.pipeline = CpuPipelineOptions::createFromString(cpuPipeline);
  if (!settings.pipeline)
    return llvm::createStringError("--cpu-pipeline: cannot parse '" +
                                   cpuPipeline + "'");
  const CpuPipelineOptions &pipeline = *settings.pipeline;
  if (pipeline.namesTarget())
    return llvm::createStringError(
        "--cpu-pipeline: name the target with --mtriple, --mcpu and --mattr, "
        "not target-triple, target-cpu or target-features");
  settings.target.optLevel = optLevel;
  settings.target.triple = mtriple;
  settings.target.cpu = mcpu;
  settings.target.features = mattr;
  auto model = CpuTargetModel::get(settings.target);
  if (!model)
    return model.takeError();
  settings.model = std::move(*model);
  // The OpenMP runtime linked into shared libraries is the build machine's:
  // code for another architecture runs on one thread unless asked.
  if (!isHostTriple(settings.target.triple) && !pipeline.threads.hasValue())
    settings.pipeline->threads = false;
  if (printTarget)
    settings.printTarget(llvm::errs());
  return settings;
}

llvm::Error CpuCompileFlags::tune(CpuCompileSettings &settings, ModuleOp module,
                                  bool verbose) const {
  if (!autotune && tuningCache.empty())
    return llvm::Error::success();
  AutotuneOptions options;
  options.cachePath = tuningCache;
  options.measure = autotune;
  auto result = attn::autotune(module, settings.target, settings.model,
                               *settings.pipeline, options);
  if (!result)
    return llvm::createStringError(
        (autotune ? "--autotune: " : "--tuning-cache: ") +
        llvm::toString(result.takeError()));
  for (const std::string &warning : result->warnings)
    llvm::WithColor::warning() << warning << "\n";
  if (verbose)
    result->print(llvm::errs());
  if (result->source == AutotuneResult::Source::Cache ||
      result->source == AutotuneResult::Source::Measured)
    result->sizes.apply(*settings.pipeline);
  return llvm::Error::success();
}

void CpuCompileSettings::printTarget(llvm::raw_ostream &os) const {
  model.print(os);
  getCpuKernelConfig(*pipeline, model).print(os);
}

CudaCompileFlags::CudaCompileFlags(cl::OptionCategory &category)
    : gpuArch("gpu-arch", cl::init("sm_90a"), cl::value_desc("sm_XY"),
              cl::desc("GPU architecture for --target=cuda: sm_80, sm_86, "
                       "sm_89, sm_90 or sm_90a (default sm_90a)"),
              cl::cat(category)),
      cudaPipeline("cuda-pipeline", cl::value_desc("options"),
                   cl::desc("Options of --attn-cuda-pipeline, e.g. "
                            "\"kv-tile=32 threads-per-block=256\""),
                   cl::cat(category)) {}

llvm::Expected<std::unique_ptr<CudaPipelineOptions>>
CudaCompileFlags::parse() const {
  StringRef arch = gpuArch;
  unsigned version = 0;
  StringRef digits = arch.drop_front(3);
  if (digits.ends_with("a"))
    digits = digits.drop_back();
  if (!arch.starts_with("sm_") || digits.getAsInteger(10, version))
    return llvm::createStringError("--gpu-arch=" + arch +
                                   ": expected sm_<version>, e.g. sm_90a");
  if (version < 80)
    return llvm::createStringError(
        "--gpu-arch=" + arch +
        ": the CUDA kernels need sm_80 or newer (cp.async, bf16 mma.sync)");
  std::unique_ptr<CudaPipelineOptions> options =
      CudaPipelineOptions::createFromString(cudaPipeline);
  if (!options)
    return llvm::createStringError("--cuda-pipeline: cannot parse '" +
                                   cudaPipeline + "'");
  options->chip = arch.str();
  return options;
}
