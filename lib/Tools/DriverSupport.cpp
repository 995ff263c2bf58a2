//===- DriverSupport.cpp - what attnc and attn-run share ------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/DriverSupport.h"

#include "attn/InitAllAttn.h"
#include "attn/Target/Cpu/CpuCompiler.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

void attn::registerCpuDriverDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllAttnDialects(registry);
  registerCpuTranslations(registry);
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
                           "\"lowering=tiled q-tile=32 kv-tile=64\" (default: "
                           "lowering=tiled q-tile=64 kv-tile=64)"),
                  cl::cat(category)),
      optLevel("O", cl::Prefix, cl::init(3), cl::ZeroOrMore,
               cl::desc("LLVM optimisation level (-O0 to -O3)"),
               cl::cat(category)) {}

llvm::Expected<std::unique_ptr<CpuPipelineOptions>>
CpuCompileFlags::parse() const {
  if (optLevel > 3)
    return llvm::createStringError("-O" + Twine(optLevel.getValue()) +
                                   " is not one of -O0, -O1, -O2, -O3");
  std::unique_ptr<CpuPipelineOptions> options =
      CpuPipelineOptions::createFromString(cpuPipeline);
  if (!options)
    return llvm::createStringError("--cpu-pipeline: cannot parse '" +
                                   cpuPipeline + "'");
  return options;
}
